import ContainersUnderFuzz
import Glibc

/// One input: what `graphctl probe` reads of a file with GraphKit's container library before and
/// beside GStreamer's discoverer: its format, the limits checked before any GStreamer element
/// sees it (ContainerLimits: nesting, items, sample claims, frame sizes), its tags of every
/// format, an MP4's indexed tracks and stream facts, and the diagnosis given when a decode fails.
///
/// A finding is a crash or a trap, a hang (libFuzzer's -timeout: every walk here is bounded by
/// the input's bytes and the documented limits), and a broken promise: a picture of more bytes
/// than the input, an input passed by ContainerLimits whose index claims more samples than the
/// input holds.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProbe(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let source = MemoryBytes(bytes)
    _ = try? MediaContainerFormat.detect(source)
    let problem = ContainerLimits.problem(in: source)
    if let tags = try? MediaMetadata.read(from: source) {
        if let art = tags.artwork, art.data.count > size { fail("a picture of \(art.data.count) bytes read from \(size)") }
        _ = tags.chapters.count
    }
    _ = IndexedTrack.all(in: source)
    _ = MP4StreamFacts(source)
    _ = FrameSizeLimit.problem(in: source)
    _ = ContainerDiagnosis.diagnose(source)
    if problem == nil, let file = try? MP4File(source), let movie = try? file.movie() {
        let claimed = movie.trackIndices.reduce(0) { total, i in
            total + ((movie.track(i).box.find(["mdia", "minf", "stbl", "stsz"])?.read(SampleSizes.self)).map { Int($0.sampleCount) } ?? 0)
        }
        guard claimed <= max(size, 0) else { fail("\(claimed) samples claimed in \(size) bytes passed the limits") }
    }
    return 0
}

func fail(_ message: String) -> Never { fatalError("fuzz-probe: \(message)") }
