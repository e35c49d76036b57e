import Assets
import Dispatch
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// AssetWriter writing HLS segments as AVFoundation's does (init(contentType:),
/// outputFileTypeProfile, preferredOutputSegmentInterval, a delegate, flushSegment()): the
/// segments an app gets, written to files with a playlist made from their reports, play in ffmpeg
/// and GStreamer, decode to the frames appended, and start on key frames; a slow, blocked or
/// throwing delegate and a cancel each end as documented.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterSegmentsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Collects segments; optionally throws at one, or waits at one until released.
    final class Collector: AssetWriterDelegate {
        let segments = Guarded<[AssetWriter.Segment]>([])
        let throwAt: Int?
        let blockAt: Int?
        /// Yields once the delegate is blocked (awaited without a guard of its own: the suite's
        /// time limit bounds it, however slowly a loaded machine feeds the writer).
        let blocked: AsyncStream<Void>
        private let blockedNow: AsyncStream<Void>.Continuation
        let release = DispatchSemaphore(value: 0)
        init(throwAt: Int? = nil, blockAt: Int? = nil) {
            self.throwAt = throwAt
            self.blockAt = blockAt
            (blocked, blockedNow) = AsyncStream<Void>.makeStream()
        }
        struct Refused: Error {}
        func assetWriter(_ writer: AssetWriter, didOutput segment: AssetWriter.Segment) throws {
            let n = segments.withLock { s in
                s.append(segment)
                return s.count - 1
            }
            if n == throwAt { throw GraphError(.runFailed, at: "the test's delegate", "segment \(n) refused") }
            if n == blockAt {
                blockedNow.yield()
                release.wait()
            }
        }
        var all: [AssetWriter.Segment] { segments.withLock { $0 } }
    }

    /// An H.264 + AAC movie of `seconds` (320x240 at 25 fps, a key frame every `gop` frames).
    func movie(seconds: Double, gop: Int = 25) throws -> String {
        let p = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=\(seconds)", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=\(seconds)", "-c:v", "libx264", "-g", "\(gop)", "-bf", "0", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", p])
        return p
    }

    /// The movie's samples, as stored, appended to `writer` (a passthrough input per track).
    func appendStored(_ source: String, to writer: AssetWriter, configure: (AssetWriter) -> Void = { _ in },
                      between: @escaping @Sendable (Int, MediaTime) throws -> Void = { _, _ in }) async throws {
        let asset = try Asset(path: source)
        let reader = try AssetReader(asset: asset)
        var pairs: [(AssetReaderTrackOutput, AssetWriterInput)] = []
        for type in [MediaType.video, .audio] {
            let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: type), outputSettings: .stored(type))
            try reader.add(output)
            let input = AssetWriterInput(mediaType: type, outputSettings: PassthroughSettings(mediaType: type))
            try writer.add(input)
            pairs.append((output, input))
        }
        configure(writer)
        try reader.startReading()
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        // Video and audio fed together, each from its own task, as an app feeds them.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (k, (output, input)) in pairs.enumerated() {
                group.addTask {
                    var n = 0
                    for try await sample in output.samples {
                        if k == 0 { try between(n, sample.presentationTime ?? .zero) }
                        try await input.append(sample)
                        n += 1
                    }
                    input.markAsFinished()
                }
            }
            try await group.waitForAll()
        }
    }

    /// Writes the segments as an app does (init.mp4, segmentN.m4s) and a VOD playlist from the
    /// reports' durations; returns the playlist's path.
    func writeHLS(_ segments: [AssetWriter.Segment], into name: String) throws -> String {
        let dir = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var lines: [String] = []
        var longest = 0.0
        for (n, segment) in segments.enumerated() {
            if segment.kind == .initialization {
                try Data(segment.data).write(to: dir.appendingPathComponent("init.mp4"))
                continue
            }
            let name = "segment\(n).m4s"
            try Data(segment.data).write(to: dir.appendingPathComponent(name))
            let duration = segment.report.trackReports.map(\.duration.seconds).max() ?? 0
            longest = max(longest, duration)
            lines += [String(format: "#EXTINF:%.6f,", duration), name]
        }
        let text = (["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(Int(longest.rounded()))", "#EXT-X-MEDIA-SEQUENCE:0",
                     "#EXT-X-PLAYLIST-TYPE:VOD", "#EXT-X-MAP:URI=\"init.mp4\""] + lines + ["#EXT-X-ENDLIST"]).joined(separator: "\n") + "\n"
        let playlist = dir.appendingPathComponent("playlist.m3u8")
        try text.write(to: playlist, atomically: true, encoding: .utf8)
        return playlist.path
    }

    func videoFrameMD5s(_ path: String) throws -> [Substring] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").last! }
    }

    @Test func delegateSegmentsPlayAndDecodeToTheFramesAppended() async throws {
        let source = try movie(seconds: 7)
        let writer = try AssetWriter(contentType: .mp4)
        let collector = Collector()
        try await appendStored(source, to: writer) { w in
            w.outputFileTypeProfile = .mpeg4AppleHLS
            w.preferredOutputSegmentInterval = MediaTime(value: 2, timescale: 1)
            w.delegate = collector
        }
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        #expect(writer.outputPath.isEmpty)
        let segments = collector.all
        #expect(segments.first?.kind == .initialization)
        #expect(segments.dropFirst().allSatisfy { $0.kind == .separable })
        // Key frames every second: cuts at 2, 4 and 6 s.
        let video = segments.dropFirst().map { $0.report.trackReports.first { $0.mediaType == .video } }
        #expect(video.map { $0?.duration.seconds ?? -1 } == [2, 2, 2, 1])
        #expect(video.map { $0?.earliestPresentationTime.seconds ?? -1 } == [0, 2, 4, 6])
        #expect(video.allSatisfy { $0?.firstVideoSample?.isSyncSample == true })
        #expect(segments.dropFirst().allSatisfy { s in s.report.trackReports.contains { $0.mediaType == .audio } })

        // The app's files: init + media segments joined decode to the very frames appended.
        let joined = path("joined.mp4")
        try Data(segments.flatMap(\.data)).write(to: URL(fileURLWithPath: joined))
        let frames = try videoFrameMD5s(joined)
        #expect(frames.count == 175)
        #expect(frames == (try videoFrameMD5s(source)))

        let playlist = try writeHLS(segments, into: "hls")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
        let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                                        "stream=nb_read_frames", "-of", "csv=p=0", playlist])
        #expect(counted.split(whereSeparator: \.isNewline).first == "175")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", playlist, "-f", "null", "-"])
        let gst = try TestMedia.runTool("gst-launch-1.0", ["-q", "filesrc", "location=\(playlist)", "!", "hlsdemux", "!", "decodebin", "name=d",
                                                           "d.", "!", "queue", "!", "videoconvert", "!", "fakesink", "d.", "!", "queue", "!",
                                                           "audioconvert", "!", "fakesink"])
        #expect(!gst.contains("ERROR"))
    }

    /// Samples appended as they are (PassthroughSettings) whose key frames are farther apart
    /// than the interval (2 s, for 0.5 s): no segment can be cut that short, nothing can make a
    /// key frame, so writing fails, naming the interval, where the key frames are and what would
    /// do, rather than giving segments longer than asked (or holding every frame until a key
    /// frame that may never come).
    @Test func passedThroughKeyFramesFartherApartThanTheIntervalFailTheWriter() async throws {
        let source = try movie(seconds: 6, gop: 50)
        let writer = try AssetWriter(contentType: .mp4)
        let collector = Collector()
        do {
            try await appendStored(source, to: writer) { w in
                w.outputFileTypeProfile = .mpeg4AppleHLS
                w.preferredOutputSegmentInterval = MediaTime(value: 1, timescale: 2)
                w.delegate = collector
            }
            try await writer.finishWriting()
            Issue.record("the writer cut segments of 2 s for an interval of 0.5 s")
        } catch let error as GraphError {
            // At the first frame that shows the next key frame late, not when it comes.
            // (The frames come in decode order: the first past 0.52 s with B-frames is at 0.56 s.)
            #expect(error.message.hasPrefix("the video input's key frames are more than 0.56 s apart (none since the one at 0 s, by the frame at 0.56 s), "
                                            + "farther apart than the segment duration (0.5 s)"), "\(error.message)")
            #expect(error.message.contains("set preferredOutputSegmentInterval to the key frames' distance or more"))
        }
        #expect(writer.status == .failed)
        #expect(collector.all.filter { $0.kind == .separable }.isEmpty)
    }

    /// Encoded video gets key frames at the interval, by time: decoded frames of a file that
    /// lacks one frame in seven (as a camera drops frames), encoded with a key frame every 100
    /// frames at most, give segments within a frame (1/25 s) of the interval, each starting on
    /// a key frame, which decode to every frame appended.
    @Test func encodedVideoGetsKeyFramesAtTheInterval() async throws {
        let source = path("gaps.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=8", "-vf", "select='not(eq(mod(n\\,7)\\,3))'",
                                         "-fps_mode", "vfr", "-c:v", "libx264", source])
        let asset = try Asset(path: source)
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .video), outputSettings: .pixels(.i420))
        try reader.add(output)
        let writer = try AssetWriter(contentType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 320, height: 240, keyframeInterval: 100))
        try writer.add(input)
        let collector = Collector()
        writer.outputFileTypeProfile = .mpeg4AppleHLS
        writer.preferredOutputSegmentInterval = MediaTime(value: 1, timescale: 1)
        writer.delegate = collector
        try reader.startReading()
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        var appended = 0
        for try await sample in output.samples {
            try await input.append(sample)
            appended += 1
        }
        input.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let video = collector.all.dropFirst().compactMap { $0.report.trackReports.first { $0.mediaType == .video } }
        let durations = video.map(\.duration.seconds)
        #expect(durations.count == 8)
        #expect(durations.dropLast().allSatisfy { abs($0 - 1) <= 0.04 + 1e-6 }, "\(durations)")
        #expect(video.allSatisfy { $0.firstVideoSample?.isSyncSample == true })
        let joined = path("joined.mp4")
        try Data(collector.all.flatMap(\.data)).write(to: URL(fileURLWithPath: joined))
        #expect(try videoFrameMD5s(joined).count == appended)
        let playlist = try writeHLS(collector.all, into: "hls")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
    }

    @Test func anIndefiniteIntervalCutsWhereFlushSegmentAsks() async throws {
        let source = try movie(seconds: 5)
        let writer = try AssetWriter(contentType: .mp4)
        let collector = Collector()
        // Flush before the key frames at 1 s and 4 s (frames 25 and 100); the key frames at 2
        // and 3 s are not asked for.
        try await appendStored(source, to: writer, configure: { w in
            w.outputFileTypeProfile = .mpeg4AppleHLS
            w.preferredOutputSegmentInterval = .positiveInfinity
            w.delegate = collector
        }, between: { [writer] n, _ in if n == 25 || n == 100 { try writer.flushSegment() } })
        try await writer.finishWriting()
        let durations = collector.all.dropFirst().map { $0.report.trackReports.first { $0.mediaType == .video }?.duration.seconds ?? -1 }
        #expect(durations == [1, 3, 1])
        // A writer that cuts by itself refuses flushSegment().
        let other = try AssetWriter(contentType: .mp4)
        other.outputFileTypeProfile = .mpeg4AppleHLS
        #expect(throws: GraphError.self) { try other.flushSegment() }
    }

    @Test func initialSegmentStartTimeMovesTheSegmentsClock() async throws {
        let source = try movie(seconds: 3)
        let writer = try AssetWriter(contentType: .mp4)
        let collector = Collector()
        try await appendStored(source, to: writer) { w in
            w.outputFileTypeProfile = .mpeg4AppleHLS
            w.preferredOutputSegmentInterval = MediaTime(value: 1, timescale: 1)
            w.initialSegmentStartTime = MediaTime(value: 10, timescale: 1)
            w.delegate = collector
        }
        try await writer.finishWriting()
        let starts = collector.all.dropFirst().map { $0.report.trackReports.first { $0.mediaType == .video }?.earliestPresentationTime.seconds ?? -1 }
        #expect(starts == [10, 11, 12])
        let joined = path("joined.mp4")
        try Data(collector.all.flatMap(\.data)).write(to: URL(fileURLWithPath: joined))
        let first = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time", "-read_intervals", "%+#1",
                                                      "-of", "csv=p=0", joined])
        #expect(Double(first.split(whereSeparator: \.isNewline).first ?? "") == 10)
    }

    @Test func theSegmentsSequenceGivesTheSameSegmentsWithoutADelegate() async throws {
        let source = try movie(seconds: 4)
        let writer = try AssetWriter(contentType: .mp4)
        writer.outputFileTypeProfile = .mpeg4AppleHLS
        writer.preferredOutputSegmentInterval = MediaTime(value: 2, timescale: 1)
        let taken = Task {
            var kinds: [AssetWriter.Segment.Kind] = []
            for try await segment in writer.segments { kinds.append(segment.kind) }
            return kinds
        }
        try await appendStored(source, to: writer)
        try await writer.finishWriting()
        #expect(try await taken.value == [.initialization, .separable, .separable])
    }

    /// A task waiting for the next segment wakes when it is cancelled (it throws
    /// CancellationError), though the writer has not started and no segment will come.
    @Test func aCancelledTaskWaitingForASegmentWakes() async throws {
        let writer = try AssetWriter(contentType: .mp4)
        writer.outputFileTypeProfile = .mpeg4AppleHLS
        let waiting = Task {
            var iterator = writer.segments.makeAsyncIterator()
            return try await iterator.next()
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func aDelegateThatThrowsFailsTheWriterWithItsError() async throws {
        let source = try movie(seconds: 6)
        let writer = try AssetWriter(contentType: .mp4)
        let collector = Collector(throwAt: 1)
        do {
            try await appendStored(source, to: writer) { w in
                w.outputFileTypeProfile = .mpeg4AppleHLS
                w.preferredOutputSegmentInterval = MediaTime(value: 1, timescale: 1)
                w.delegate = collector
            }
            try await writer.finishWriting()
            Issue.record("writing went on past a delegate that threw")
        } catch let error as GraphError {
            #expect(error.message.contains("segment 1 refused"), "\(error.message)")
        }
        #expect(writer.status == .failed)
        #expect(writer.error?.message.contains("segment 1 refused") == true)
    }

    @Test func cancellingWakesAWriterWhoseDelegateIsBlocked() async throws {
        let source = try movie(seconds: 8)
        let writer = try AssetWriter(contentType: .mp4)
        let collector = Collector(blockAt: 1)
        let feeding = Task {
            try await appendStored(source, to: writer) { w in
                w.outputFileTypeProfile = .mpeg4AppleHLS
                w.preferredOutputSegmentInterval = MediaTime(value: 1, timescale: 1)
                w.delegate = collector
            }
        }
        // The delegate holds segment 1; the encoders' output backs up behind it, then the appends.
        for await _ in collector.blocked { break }
        // Mid-segment, with the delegate never returning: cancelWriting returns (were it to hang,
        // the suite's time limit fails the test), and the appends waiting wake with the cancel.
        let cancelling = TestThread("cancel") { writer.cancelWriting() }
        _ = await cancelling.join()
        await #expect(throws: GraphError.self) { try await feeding.value }
        #expect(writer.status == .cancelled)
        collector.release.signal()
    }

    @Test func aWriterOfSegmentsNeedsAProfileAndMP4() throws {
        #expect(throws: GraphError.self) { try AssetWriter(contentType: .mov) }
        let writer = try AssetWriter(contentType: .mp4)
        try writer.add(AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 160, height: 120)))
        let refused = #expect(throws: GraphError.self) { try writer.startWriting() }
        #expect(refused?.message.contains("outputFileTypeProfile") == true)
        // An interval that is not a positive time is refused when writing starts, naming it.
        let zero = try AssetWriter(contentType: .mp4)
        try zero.add(AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 160, height: 120)))
        zero.outputFileTypeProfile = .mpeg4AppleHLS
        zero.preferredOutputSegmentInterval = .zero
        let interval = #expect(throws: GraphError.self) { try zero.startWriting() }
        #expect(interval?.message.contains("segment interval") == true)
        #expect(zero.status == .failed)
        // A file writer takes no profile.
        let file = try AssetWriter(outputPath: path("file.mp4"), fileType: .mp4)
        file.outputFileTypeProfile = .mpeg4AppleHLS
        #expect(throws: GraphError.self) { try file.startWriting() }
    }
}
