import Testing
@testable import GraphKitCore
import GraphKit

@Suite struct NameSuggestionsTests {
    /// A small fixed-seed generator (SplitMix64).
    struct Random {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(n))
        }
    }

    /// The same answers as closestMatch (first of the closest, within the typo distance), on
    /// names made of few letters so that ties and near misses are common, with characters of
    /// more than one byte, case, and CR LF (one character).
    @Test func answersAsClosestMatchDoes() {
        let letters: [String] = ["a", "b", "c", "A", "é", "e\u{301}", "ß", "\r\n", "\r", "_", "1"]
        var random = Random(state: 42)
        func word() -> String { (0..<(1 + random.next(7))).map { _ in letters[random.next(letters.count)] }.joined() }
        for _ in 0..<300 {
            let candidates = (0..<random.next(40)).map { _ in word() }
            var suggestions = NameSuggestions(candidates)
            for _ in 0..<20 {
                let w = word()
                #expect(suggestions.closest(to: w) == closestMatch(to: w, in: candidates), "\(w) in \(candidates)")
            }
        }
    }

    @Test func stopsSuggestingWhenTheBudgetIsSpent() {
        var suggestions = NameSuggestions(["g1", "g2", "g3"], budget: 6)
        #expect(suggestions.closest(to: "h1") == "g1")
        #expect(suggestions.closest(to: "h2") == "g2")
        #expect(suggestions.closest(to: "h1") == "g1")   // answered before: no cost
        #expect(suggestions.closest(to: "h3") == nil)
    }
}
