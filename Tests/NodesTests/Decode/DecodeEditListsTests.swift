import Foundation
import GraphKit
import GraphKitTesting
import MediaContainers
import Testing
import TestSupport

/// `decode` of an MP4 whose video plays through several edits (a join without re-encoding, each
/// piece its own edit): the frames ffmpeg shows, byte for byte, in its order. GStreamer 1.22's
/// demuxer alone showed 80 of such a file's 95 frames; decode takes the list out of the index
/// and applies it after decoding (gkvideotrim).
@Suite(.media, .timeLimit(.minutes(5))) struct DecodeEditListsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 4 s of 160×120 H.264 with B-frames and a key frame a second (25 fps, a 12,800-tick
    /// clock), its video's edit list replaced by `edits` (movie ticks of 1/1000 s, media ticks).
    func edited(_ edits: [(UInt64, Int64)], name: String) throws -> String {
        let source = folder.appendingPathComponent("source.mp4").path, out = folder.appendingPathComponent(name).path
        if !FileManager.default.fileExists(atPath: source) {
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=4", "-c:v", "libx264", "-g", "25",
                                             "-bf", "2", "-pix_fmt", "yuv420p", source])
        }
        try CraftedMP4.edited(source, to: out) { movie in
            try CraftedMP4.track("vide", of: &movie) { $0.setEdits(edits.map { MP4Track.Edit(duration: $0.0, mediaTime: $0.1) }) }
        }
        return out
    }

    /// The frames ffmpeg shows of `path`, each as its I420 bytes.
    func ffmpegFrames(_ path: String) throws -> [[UInt8]] {
        let raw = folder.appendingPathComponent("frames.yuv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let size = 160 * 120 * 3 / 2
        return stride(from: 0, to: bytes.count - size + 1, by: size).map { Array(bytes[$0..<$0 + size]) }
    }

    @Test(arguments: [
        // As a passthrough export of three pieces writes it: the first piece, then the other
        // two contiguous in the media (1.2 s from 0.38 s, then 2.6 s from 1.7 s).
        [(1_200, 4_864), (2_600, 21_760)],
        // A pause first (an empty edit), then three pieces, each cut between frames. (An empty
        // edit between pieces is left out here: ffmpeg shows the media on through it.)
        [(300, -1), (700, 2_000), (500, 16_000), (900, 30_000)],
    ] as [[(UInt64, Int64)]])
    func aVideoOfSeveralEditsShowsTheFramesFFmpegShows(_ edits: [(UInt64, Int64)]) throws {
        let file = try edited(edits, name: "edits-\(edits.count).mp4")
        let expected = try ffmpegFrames(file)
        let frames = try DecodeNodeTests.decodedFrames(file, readOnly: false)
        let decoded = frames.map { frame in frame.withUnsafeBytes { Array($0) } }
        #expect(expected.count > 40 && decoded.count == expected.count, "decoded \(decoded.count) frames, ffmpeg shows \(expected.count)")
        #expect(decoded == expected, "first different frame: \(Array(zip(decoded, expected)).firstIndex { $0.0 != $0.1 } ?? -1)")
        // Each stamped where its edit plays it, in order.
        let times = frames.compactMap { $0.presentationTime?.seconds }
        #expect(times.count == frames.count && zip(times, times.dropFirst()).allSatisfy { $0 < $1 } && (times.first ?? 9) < Double(edits[0].1 < 0 ? edits[0].0 : 0) / 1_000 + 0.05, "\(times.prefix(5))")
    }

    /// A run started at a time of such a file (an export of a range, a thumbnail) starts at the
    /// frame showing there, across the edits: the seek goes to the media that plays there, and
    /// what leaves is what the whole decode gives from that frame to the range's end.
    @Test func aRangeOfAVideoOfSeveralEditsIsTheWholeDecodesFrames() throws {
        // 0.3 s of nothing, then media 0.156 s for 0.7 s, 1.25 s for 0.5 s, 2.34 s for 0.9 s.
        let file = try edited([(300, -1), (700, 2_000), (500, 16_000), (900, 30_000)], name: "range.mp4")
        let whole = try DecodeNodeTests.decodedFrames(file, readOnly: false)
        let times = whole.map { $0.presentationTime?.seconds ?? -1 }
        let (start, end) = (1.3, 2.0)
        let first = try #require(times.lastIndex { $0 <= start + 0.0005 }), past = try #require(times.firstIndex { $0 >= end - 0.0005 })
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "i420" } }, "s": { "type": "sink.app", "params": { "maxBuffers": 0 } } },
              "edges": [ "src.out -> dec.in", "dec.video -> s.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start(at: GraphRun.Seek.exact(MediaTime(value: 13, timescale: 10)).ending(at: MediaTime(value: 2, timescale: 1)))
        let output = try run.output("s")
        var frames: [SampleBuffer] = []
        while let frame = output.copyNextSampleBuffer(timeout: 60) { frames.append(frame) }
        #expect(run.wait().status == .completed)
        let expected = whole[first..<past].map { frame in frame.withUnsafeBytes { Array($0) } }
        #expect(frames.count == expected.count && frames.map { frame in frame.withUnsafeBytes { Array($0) } } == expected,
                "\(frames.count) frames from \(frames.first?.presentationTime?.seconds ?? -1) s; the whole decode's \(first)..<\(past) are \(expected.count)")
    }
}
