import ContainersUnderFuzz
import Glibc

/// One input: an MP4 (the seeds: the corpus' files) whose tracks are given the edit list its
/// last bytes spell, then everything GraphKit's own code does with edit lists: the claims
/// weighed before anything reads the index (``MP4Movie/checkClaims(fileSize:)``: at most
/// 1,000 edits, their media shown at most 8 times over), a stored track's priming and length
/// (passthrough exports), an AAC track's gapless edit, a video's several edits taken out for
/// decode to apply (``MP4VideoEdits``), the indexed tracks probe reads, the HLS plan, and a
/// trim's new file, which must read back.
///
/// The edit list: the input's last byte picks the tracks it goes on (bit 0: the first, bit 1:
/// every other) and how many edits (its high six bits; 63 means 1,100, past the limit); the 20
/// bytes before it, one edit (duration u64, media time i64, rate i32, big-endian), are repeated
/// with each copy's duration and media time moved by its index, so a few bytes make a long list
/// of edits that differ. Extremes come from the fuzzer: 2^64 - 1 durations, media times of
/// -2^63, rates of 0 and -1.
///
/// A finding is a crash or a trap (media-time arithmetic must not trap, whatever an edit
/// claims), a hang, and a broken promise: a movie whose edits pass the claims but hold more
/// than 1,000 edits, or a trim whose file does not read back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEdits(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard size > 21 else { return 0 }
    let selector = bytes[size - 1]
    let spec = Array(bytes[(size - 21)..<(size - 1)])
    let media = Array(bytes[..<(size - 21)])
    guard let file = try? MP4File(MemoryBytes(media)), let extent = file.first("moov"),
          extent.offset <= UInt64(media.count), extent.size <= UInt64(media.count) - extent.offset,
          var movie = try? MP4Movie(parsing: media[Int(extent.offset)..<Int(extent.offset + extent.size)]) else { return 0 }

    func u64(_ at: Int) -> UInt64 { spec[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
    let count = selector >> 2 == 63 ? 1_100 : Int(selector >> 2)
    let duration = u64(0), mediaTime = Int64(bitPattern: u64(8))
    let rate = Int32(bitPattern: UInt32(truncatingIfNeeded: u64(12) & 0xFFFF_FFFF))
    let edits = (0..<count).map { k in
        MP4Track.Edit(duration: duration &+ UInt64(k), mediaTime: k % 3 == 2 ? -1 : mediaTime &+ Int64(k), rate: rate)
    }
    for (n, i) in movie.trackIndices.enumerated() where (n == 0 && selector & 1 != 0) || (n > 0 && selector & 2 != 0) {
        var track = movie.track(i)
        track.setEdits(edits)
        movie.setTrack(i, track)
    }
    // The file again, the new index in the old one's place (what follows it moved, as a hostile
    // file's offsets may be).
    let edited = Array(media[..<Int(extent.offset)]) + movie.bytes + Array(media[Int(extent.offset + extent.size)...])
    let source = MemoryBytes(edited)

    _ = ContainerLimits.problem(in: source)
    _ = IndexedTrack.all(in: source)
    _ = MP4StreamFacts(source)
    guard let read = try? MP4File(source), let checked = try? read.movie() else { return 0 }
    for i in checked.trackIndices {
        let track = checked.track(i)
        if let list = track.edits, list.count > MP4Movie.mostEdits { fail("\(list.count) edits passed the claims") }
        _ = MP4StoredTrack(track, index: i, movie: checked, fileSize: source.count)
        _ = MP4AudioEdit.edit(of: track, movieTimescale: checked.timescale, gapless: (delay: Int64(selector), count: Int64(size)))
    }
    // A video's several edits, taken out of the index for decode to apply after decoding: the
    // index keeps its size and reads back without them; the edits follow each other. Tried on
    // the index as edited, and on one whose video edits follow each other in the media (the
    // list above rarely does: each edit k starts k ticks after the last), so that a list decode
    // does take is reached too.
    func takeVideoEdits(_ index: [UInt8]) {
        var moov = index
        guard let taken = MP4VideoEdits.take(from: &moov) else { return }
        guard moov.count == index.count, let back = try? MP4Movie(parsing: moov[...]) else { fail("the index without its video edits does not read back") }
        if back.tracks(handler: "vide").first?.track.edits != nil { fail("the video's edits are still in the index") }
        if taken.edits.count < 2 || taken.edits.count > MP4Movie.mostEdits { fail("\(taken.edits.count) video edits taken") }
        if let bad = taken.edits.first(where: { !($0.start >= 0 && $0.start < $0.end && $0.at >= 0) }) { fail("a video edit \(bad)") }
        for (a, b) in zip(taken.edits, taken.edits.dropFirst()) where !(a.end <= b.start && a.at < b.at) { fail("video edits \(a), \(b) do not follow each other") }
    }
    if let extent = read.first("moov"), extent.offset + extent.size <= UInt64(edited.count) {
        takeVideoEdits(Array(edited[Int(extent.offset)..<Int(extent.offset + extent.size)]))
    }
    if var following = try? MP4Movie(parsing: movie.bytes[...]), let (index, video) = following.tracks(handler: "vide").first {
        let scale = Double(video.mediaTimescale) / Double(max(1, following.timescale))
        var cursor = Double(max(0, mediaTime)), list: [MP4Track.Edit] = []
        for k in 0..<count {
            let length = Double(duration &+ UInt64(k)) * scale
            guard cursor + length < 4e18 else { break }
            list.append(MP4Track.Edit(duration: duration &+ UInt64(k), mediaTime: k % 3 == 2 ? -1 : Int64(cursor), rate: rate))
            if k % 3 != 2 { cursor += length.rounded(.up) + Double(k % 2) }
        }
        var track = video
        track.setEdits(list)
        following.setTrack(index, track)
        takeVideoEdits(following.bytes)
    }
    let target = Double(1 + Int(selector) % 4)
    _ = try? HLSSegmentPlan(movie: checked, fileSize: source.count, target: target)
    let ftyp = read.first("ftyp").flatMap { try? read.read($0) }
    let start = Double(spec[0]) / 64, length = 0.25 + Double(spec[1]) / 32
    if let trim = try? MP4Trim(movie: checked, fileSize: source.count, fileType: ftyp, start: start, end: start + length, indexFirst: selector & 1 == 0) {
        var out = trim.header
        for c in trim.copies {
            guard c.offset <= UInt64(edited.count), c.count >= 0, UInt64(c.count) <= UInt64(edited.count) - c.offset else { fail("a trim copies bytes its source does not have") }
            out += edited[Int(c.offset)..<(Int(c.offset) + c.count)]
        }
        out += trim.trailer
        let written = MemoryBytes(out)
        guard let back = try? MP4File(written), let movie = try? back.movie() else { fail("a trim's file does not read back") }
        for i in movie.trackIndices {
            do { _ = try movie.track(i).samples(fileSize: written.count) } catch { fail("a trim's track \(movie.track(i).trackID): \(error)") }
        }
    }
    return 0
}

func fail(_ message: String) -> Never { fatalError("fuzz-edits: \(message)") }
