import ContainersUnderFuzz
import Glibc

/// One input: an MP4 packaged for HLS in memory, as `graphctl hls` (HLSPackager) does it with
/// its file: the index read (its claims weighed against the input's bytes), the segment plan
/// at a target of 1 to 8 s (the input's last byte picks it), the initialization segment, every
/// media segment written from the samples' bytes, and the playlist.
///
/// A finding is a crash or a trap, a hang, and a broken promise: a sample missing from the
/// segments or taken twice or out of order, a segment of no finite duration, a playlist that
/// is not RFC 8216's text (no ENDLIST, a control character, a duration past the target).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHLS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let source = MemoryBytes(bytes)
    guard let format = try? MediaContainerFormat.detect(source), format == .mp4 || format == .mov,
          let file = try? MP4File(source), let movie = try? file.movie() else { return 0 }
    let target = Double(1 + Int(bytes.last ?? 0) % 8)
    guard let plan = try? HLSSegmentPlan(movie: movie, fileSize: source.count, target: target) else { return 0 }
    _ = CMAF.initializationSegment(of: movie, trackIndices: plan.tracks.map(\.index))
    var playlist = HLSMediaPlaylist(initializationSegment: "init.mp4")
    var next = [Int](repeating: 0, count: plan.tracks.count)
    var fragment: UInt32 = 1  // the fragments' sequence numbers, rising through the segments
    for (k, segment) in plan.segments.enumerated() {
        guard segment.duration.isFinite, segment.duration >= 0, segment.start.isFinite else { fail("segment \(k) lasts \(segment.duration) s from \(segment.start)") }
        var runs: [FragmentRun] = []
        for (t, range) in segment.samples.enumerated() {
            guard range.lowerBound == next[t] else { fail("track \(t): segment \(k) starts at sample \(range.lowerBound), not \(next[t])") }
            next[t] = range.upperBound
            guard !range.isEmpty else { continue }
            let track = plan.tracks[t]
            let samples = Array(track.samples[range])
            var data: [UInt8] = []
            for s in samples {
                guard s.offset <= UInt64(size), UInt64(s.size) <= UInt64(size) - s.offset else { fail("a sample past the input's end") }
                data += bytes[Int(s.offset)..<Int(s.offset + UInt64(s.size))]
            }
            runs.append(FragmentRun(trackID: track.trackID, timescale: UInt32(clamping: track.timescale), baseDecodeTime: samples[0].decodeTime, samples: samples, data: data))
        }
        let written = CMAF.mediaSegment(firstSequenceNumber: fragment, runs: runs)
        fragment &+= written.fragmentCount
        playlist.segments.append(("segment\(k).m4s", segment.duration))
    }
    for (t, track) in plan.tracks.enumerated() where next[t] != track.samples.count {
        fail("track \(track.trackID): the segments take \(next[t]) of its \(track.samples.count) samples")
    }
    let text = playlist.text
    guard text.hasPrefix("#EXTM3U\n"), text.hasSuffix("#EXT-X-ENDLIST\n"),
          !text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" }) else { fail("a playlist that is not one: \(text)") }
    return 0
}

func fail(_ message: String) -> Never { fatalError("fuzz-hls: \(message)") }
