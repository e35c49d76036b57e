/// "Did you mean" for a name missing among many, such as a graph's node ids: the answer
/// `closestMatch(to:in:)` gives (the first of the closest candidates, when close enough to be a
/// typo), faster: the candidates are lowercased and coded once, a candidate whose length alone
/// puts it too far is passed over, a distance is given up as soon as it cannot beat the best so
/// far, and each name is answered once.
///
/// One answer costs a pass over the candidates, so a graph of many thousands of nodes whose
/// edges name thousands of different missing nodes would take minutes to answer them all. After
/// `budget` candidate comparisons, later names get no suggestion (their problems are reported
/// as ever): a few misspellings are typos worth a guess, thousands are not.
struct NameSuggestions {
    private let candidates: [String]
    /// Each candidate lowercased, one code per character: its byte when the character is one
    /// byte, else a number given to each distinct character (equal characters, equal codes).
    /// All in one array, candidate i's at `starts[i]..<starts[i + 1]`: a pass over them reads
    /// memory in order.
    private let codes: [Int32]
    private let starts: [Int]
    private let longest: Int
    private var characters: [Character: Int] = [:]
    private var answers: [String: String?] = [:]
    private var spent = 0
    private let budget: Int

    init(_ candidates: [String], budget: Int = 50_000_000) {
        self.candidates = candidates
        self.budget = budget
        var characters: [Character: Int] = [:]
        var codes: [Int32] = [], starts = [0]
        starts.reserveCapacity(candidates.count + 1)
        for c in candidates {
            codes.append(contentsOf: Self.code(c, &characters))
            starts.append(codes.count)
        }
        self.codes = codes
        self.starts = starts
        longest = zip(starts.dropFirst(), starts).map { $0 - $1 }.max() ?? 0
        self.characters = characters
    }

    private static func code(_ word: String, _ characters: inout [Character: Int]) -> [Int32] {
        let lowered = word.lowercased()
        // ASCII without CR LF (one character of two bytes): a byte is a character.
        if lowered.utf8.allSatisfy({ $0 < 0x80 }), !lowered.utf8.contains(0x0D) { return lowered.utf8.map { Int32($0) } }
        return lowered.map { c in
            if c.utf8.count == 1 { return Int32(c.utf8.first!) }
            if let known = characters[c] { return Int32(known) }
            let new = 256 + characters.count
            characters[c] = new
            return Int32(new)
        }
    }

    mutating func closest(to word: String) -> String? {
        if let known = answers[word] { return known }
        guard spent < budget else { return nil }
        spent += candidates.count
        let answer = find(word)
        answers[word] = answer
        return answer
    }

    private mutating func find(_ word: String) -> String? {
        let w = Self.code(word, &characters)
        var best: Int?
        var limit = max(2, word.count / 2)
        // Two rows of the distance table, for the longest candidate.
        var rows = [Int](repeating: 0, count: 2 * (longest + 1))
        codes.withUnsafeBufferPointer { codes in
            w.withUnsafeBufferPointer { w in
                rows.withUnsafeMutableBufferPointer { rows in
                    for i in candidates.indices where abs(w.count - (starts[i + 1] - starts[i])) <= limit {
                        let c = UnsafeBufferPointer(rebasing: codes[starts[i]..<starts[i + 1]])
                        guard let d = Self.distance(w, c, atMost: limit, rows) else { continue }
                        best = i
                        if d == 0 { break }
                        limit = d - 1   // a later candidate must be closer to replace this one
                    }
                }
            }
        }
        return best.map { candidates[$0] }
    }

    /// The edit distance between `a` and `b` if it is at most `limit`, else nil, in `rows` (room
    /// for two rows of b.count + 1). The smallest value of a row never decreases from one row to
    /// the next, so a row above the limit ends it.
    private static func distance(_ a: UnsafeBufferPointer<Int32>, _ b: UnsafeBufferPointer<Int32>, atMost limit: Int,
                                 _ rows: UnsafeMutableBufferPointer<Int>) -> Int? {
        if limit == 0 { return a.elementsEqual(b) ? 0 : nil }
        let width = b.count + 1
        var previous = rows.baseAddress!, current = previous + width
        for j in 0..<width { previous[j] = j }
        for i in 0..<a.count {
            let ca = a[i]
            current[0] = i + 1
            var rowMin = i + 1
            for j in 0..<b.count {
                let v = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == b[j] ? 0 : 1))
                current[j + 1] = v
                rowMin = min(rowMin, v)
            }
            if rowMin > limit { return nil }
            swap(&previous, &current)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
