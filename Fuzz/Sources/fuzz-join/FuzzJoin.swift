import ContainersUnderFuzz
import Glibc

/// One input: an MP4 joined with itself or trimmed (MP4Join, MP4Trim: `source.concat`,
/// `graphctl concat` and a passthrough `graphctl export`), in memory: ranges picked by the
/// input's last bytes, the new file assembled (its header, the copied ranges, its trailer).
///
/// A finding is a crash or a trap, a hang, and a broken promise: a copy of bytes the input does
/// not have, or a new file whose index does not read back or whose samples its own tables
/// cannot place.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJoin(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let source = MemoryBytes(bytes)
    guard let file = try? MP4File(source), let movie = try? file.movie() else { return 0 }
    let ftyp = file.first("ftyp").flatMap { try? file.read($0) }
    let pick = bytes.suffix(2).map { Double($0) }
    let start = (pick.first ?? 0) / 64, length = 0.25 + (pick.last ?? 255) / 32
    let indexFirst = size % 2 == 0

    // A trim or a join, by the input's length: each input does one, so the target keeps its
    // pace (both run the same join underneath); the seeds' lengths pick both.
    let trims = size / 2 % 2 == 0
    if trims, let trim = try? MP4Trim(movie: movie, fileSize: source.count, fileType: ftyp, start: start, end: start + length, indexFirst: indexFirst) {
        check(trim.header, trim.copies.map { (0, $0.offset, $0.count) }, trim.trailer, [bytes], "a trim")
    }
    let sources = [MP4Join.Source(name: "a", movie: movie, fileSize: source.count), MP4Join.Source(name: "b", movie: movie, fileSize: source.count)]
    var tracks: [MP4Join.Track] = []
    for handler: FourCC in ["vide", "soun"] where !movie.tracks(handler: handler).isEmpty {
        tracks.append(MP4Join.Track(handler: handler, parts: [.media(source: 0, indexInType: 0, start: start, end: start + length),
                                                              .empty(seconds: 0.5),
                                                              .media(source: 1, indexInType: 0, start: 0, end: length)]))
    }
    if !trims, !tracks.isEmpty, let join = try? MP4Join(sources: sources, tracks: tracks, fileType: ftyp, indexFirst: indexFirst) {
        check(join.header, join.copies, join.trailer, [bytes, bytes], "a join")
    }
    return 0
}

/// The new file made of `header`, the `copies` from `inputs` and `trailer` reads back: its index,
/// and every track's samples within it.
func check(_ header: [UInt8], _ copies: [(source: Int, offset: UInt64, count: Int)], _ trailer: [UInt8], _ inputs: [[UInt8]], _ what: String) {
    var out = header
    for c in copies {
        guard c.source < inputs.count, c.count >= 0, c.offset <= UInt64(inputs[c.source].count),
              UInt64(c.count) <= UInt64(inputs[c.source].count) - c.offset else { fail("\(what) copies bytes its source does not have") }
        out += inputs[c.source][Int(c.offset)..<(Int(c.offset) + c.count)]
    }
    out += trailer
    let written = MemoryBytes(out)
    guard let file = try? MP4File(written), let movie = try? file.movie() else { fail("\(what)'s file does not read back") }
    for i in movie.trackIndices {
        do { _ = try movie.track(i).samples(fileSize: written.count) } catch { fail("\(what)'s track \(movie.track(i).trackID): \(error)") }
    }
}

func fail(_ message: String) -> Never { fatalError("fuzz-join: \(message)") }
