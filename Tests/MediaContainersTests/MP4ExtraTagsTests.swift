@testable import MediaContainers
import Testing

/// What a cover, a place and chapters may be before they are written: each refusal says why,
/// and nothing that passes can trap while the boxes are made.
@Suite struct MP4ExtraTagsTests {
    @Test func chaptersAChplBoxCannotHoldAreRefused() {
        let late = MP4ExtraTags(chapters: [.init(start: 0, title: "a"), .init(start: 1e20, title: "b")])
        #expect(late.problem?.contains("later than a chpl box holds") == true)
        let long = MP4ExtraTags(chapters: [.init(start: 0, title: String(repeating: "x", count: 256))])
        #expect(long.problem?.contains("longer than 255 bytes") == true)
        let many = MP4ExtraTags(chapters: (0..<256).map { .init(start: Double($0), title: "c") })
        #expect(many.problem?.contains("more than the 255") == true)
        // The latest start that passes is written without trapping.
        let last = MP4ExtraTags(chapters: [.init(start: MP4ExtraTags.latestChapterStart - 1e6, title: "end")])
        #expect(last.problem == nil)
        var moov = MP4Box(type: "moov", children: [])
        last.apply(to: &moov)
        #expect(moov.find(["udta", "chpl"]) != nil)
    }
}
