/// Reads a number drawn in seven-segment digits (`generate.frames`'s `counter` pattern), against
/// the tests' own table of which segments light for each digit, not the painter's: a test that
/// reads a frame this way checks what was drawn, not the code that drew it.
public enum SevenSegments {
    /// Which of the segments a…g light for 0…9.
    static let digits: [String: Int] = ["abcdef": 0, "bc": 1, "abdeg": 2, "abcdg": 3, "bcfg": 4, "acdfg": 5, "acdefg": 6, "abc": 7,
                                        "abcdefg": 8, "abcdfg": 9]

    /// The number in `count` digits: `centre(digit, segment)` is where segment `segment` (0 for
    /// a … 6 for g) of digit `digit` is sampled, and `lit(x, y)` says whether a pixel is white.
    /// A pattern that is not a digit reads as nil.
    public static func read(count: Int, centre: (_ digit: Int, _ segment: Int) -> (x: Int, y: Int),
                            lit: (Int, Int) -> Bool) -> Int? {
        var value = 0
        for i in 0..<count {
            var on = ""
            for (s, name) in "abcdefg".enumerated() {
                let p = centre(i, s)
                if lit(p.x, p.y) { on.append(name) }
            }
            guard let d = digits[on] else { return nil }
            value = value * 10 + d
        }
        return value
    }
}
