import Testing
import TestSupport
@testable import GraphKitCore
import GraphKit

@Suite struct NameSuggestionsTests {
    /// The same answers as closestMatch (first of the closest, within the typo distance), on
    /// names made of few letters so that ties and near misses are common, with characters of
    /// more than one byte, case, and CR LF (one character).
    @Test func answersAsClosestMatchDoes() {
        let letters: [String] = ["a", "b", "c", "A", "é", "e\u{301}", "ß", "\r\n", "\r", "_", "1"]
        var random = SplitMix(seed: 42)
        func word() -> String { (0..<(1 + random.below(7))).map { _ in letters[random.below(letters.count)] }.joined() }
        for _ in 0..<300 {
            let candidates = (0..<random.below(40)).map { _ in word() }
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
