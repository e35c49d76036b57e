/// Puts right the Opus header (`dOps`) GStreamer 1.22's MP4 writer writes with its multi-byte
/// fields little-endian: the Opus-in-ISOBMFF mapping stores PreSkip (16 bits), InputSampleRate
/// (32) and OutputGain (16) big-endian, so a reader took 312 samples of pre-skip for 14,337 and
/// dropped a third of a second (ffmpeg decoded 82,623 of 96,000 samples). Told from the file
/// itself, not from GStreamer's version: a field fixed elsewhere is left as it is.
package enum OpusHeaderRepair {
    /// Repairs every sound track's `dOps` in `movie`; true when one was changed.
    package static func repair(_ movie: inout MP4Movie) -> Bool {
        var changed = false
        for (i, track) in movie.tracks(handler: "soun") where track.sampleEntry == "Opus" {
            var repaired = track
            var done = false
            repaired.box.modify(["mdia", "minf", "stbl", "stsd"]) { stsd in
                guard let entry = stsd.children.first, entry.type == "Opus", let body = fixed(entry: entry.body) else { return }
                stsd.replaceOrInsert(MP4Box(type: "Opus", body: body))
                done = true
            }
            if done {
                movie.setTrack(i, repaired)
                changed = true
            }
        }
        return changed
    }

    /// The sample entry's body with its `dOps` fields turned big-endian, or nil when they are
    /// already (a plausible rate read big-endian) or the entry does not read.
    static func fixed(entry body: [UInt8]) -> [UInt8]? {
        // AudioSampleEntry: 28 bytes before its boxes (ISO 14496-12; Opus entries are version 0).
        guard body.count > 28, body[8] == 0, body[9] == 0 else { return nil }
        var at = 28
        while at + 8 <= body.count {
            let size = Int(body[at]) << 24 | Int(body[at + 1]) << 16 | Int(body[at + 2]) << 8 | Int(body[at + 3])
            guard size >= 8, at + size <= body.count else { return nil }
            if body[at + 4] == 0x64, body[at + 5] == 0x4F, body[at + 6] == 0x70, body[at + 7] == 0x73 {  // "dOps"
                // Version (1), OutputChannelCount (1), PreSkip (2), InputSampleRate (4), OutputGain (2).
                let f = at + 8
                guard size >= 8 + 10, body[f] == 0 else { return nil }
                let bigEndianRate = UInt32(body[f + 4]) << 24 | UInt32(body[f + 5]) << 16 | UInt32(body[f + 6]) << 8 | UInt32(body[f + 7])
                let littleEndianRate = UInt32(body[f + 7]) << 24 | UInt32(body[f + 6]) << 16 | UInt32(body[f + 5]) << 8 | UInt32(body[f + 4])
                let plausible: ClosedRange<UInt32> = 1...768_000
                guard !plausible.contains(bigEndianRate), plausible.contains(littleEndianRate) else { return nil }
                var out = body
                out.swapAt(f + 2, f + 3)
                out.swapAt(f + 4, f + 7)
                out.swapAt(f + 5, f + 6)
                out.swapAt(f + 8, f + 9)
                return out
            }
            at += size
        }
        return nil
    }
}
