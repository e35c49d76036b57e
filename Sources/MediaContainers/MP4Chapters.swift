extension MP4Movie {
    /// The chapters of Nero's list (`moov/udta/chpl`: what ffmpeg writes beside its QuickTime
    /// chapter track, and ``MP4ExtraTags`` writes): each start and title, in order; empty when
    /// there is none or it cannot be read.
    package var chapters: [MP4ExtraTags.Chapter] {
        guard let body = moov.find(["udta", "chpl"])?.body, body.count >= 5 else { return [] }
        // Version and flags, then (version 1) 4 reserved bytes, then a count of one byte.
        var i = body[0] == 1 ? 8 : 4
        guard i < body.count else { return [] }
        let count = Int(body[i])
        i += 1
        var out: [MP4ExtraTags.Chapter] = []
        for _ in 0..<count {
            guard i + 9 <= body.count else { return out }
            var start: UInt64 = 0
            for b in body[i..<(i + 8)] { start = start << 8 | UInt64(b) }
            let length = Int(body[i + 8])
            i += 9
            guard i + length <= body.count else { return out }
            let title = String(decoding: body[i..<(i + length)], as: UTF8.self)
            i += length
            out.append(MP4ExtraTags.Chapter(start: Double(start) / 10_000_000, title: title))  // 100 ns units
        }
        return out
    }
}
