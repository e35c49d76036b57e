import GraphKit
@testable import Nodes
import Testing

/// Where thumbnails go with `at` `scenes`: the start, the strongest cuts, and evenly spaced
/// times away from them when cuts are few (no media: the placement alone).
@Suite struct SceneScanTests {
    func seconds(_ cuts: [(Double, Double)], count: Int, duration: Double = 10) -> [Double] {
        SceneScan.times(cuts: cuts.map { SceneScore(time: $0.0, score: $0.1) }, count: count, duration: MediaTime(seconds: duration))
            .map { ($0.seconds * 1000).rounded() / 1000 }
    }

    @Test func theStrongestCutsAfterTheStart() {
        #expect(seconds([(2, 30), (5, 80), (7, 50)], count: 3) == [0, 5, 7])
        #expect(seconds([(2, 30), (5, 80), (7, 50)], count: 4) == [0, 2, 5, 7])
        #expect(seconds([(5, 80)], count: 1) == [0])
    }

    @Test func fewCutsAreFilledEvenlyAwayFromThem() {
        // Spacing 2 s: 4 is within 1 s of the cut at 4.5, so 2 and 6 fill.
        #expect(seconds([(4.5, 40)], count: 4, duration: 8) == [0, 2, 4.5, 6])
        #expect(seconds([], count: 5) == [0, 2, 4, 6, 8])
        // Cuts outside the file, or at its start, are not pictures.
        #expect(seconds([(0, 90), (12, 90)], count: 2) == [0, 5])
    }

    @Test func everyCountIsMet() {
        for count in [1, 2, 7, 50, 10_000] {
            let times = seconds([(1, 20), (1.02, 30), (9.99, 10)], count: count)
            #expect(times.count == count && times == times.sorted(), "count \(count)")
        }
    }
}
