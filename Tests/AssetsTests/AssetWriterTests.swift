import Assets
import Dispatch
import Foundation
import GraphKit
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// AssetWriter as an AVFoundation user drives it: frames drawn into the adaptor's pool, PCM
/// appended, sessions, misuse, and every way writing can end. Each result is read back with
/// ffprobe or ffmpeg.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Draws frame `n`: every byte of row y is (n * 7 + y) & 0xFF, a picture that moves.
    static func draw(_ n: Int, into frame: inout PixelBuffer) {
        let rowBytes = frame.bytesPerRow, height = frame.height
        frame.withUnsafeMutableBytes { raw in
            for y in 0..<height {
                let row = raw.baseAddress! + y * rowBytes
                row.initializeMemory(as: UInt8.self, repeating: UInt8((n * 7 + y) & 0xFF), count: rowBytes)
            }
        }
    }

    /// The classic AVAssetWriter loop, prefixes dropped: a pool frame drawn, appended with its
    /// time, 90 frames at 30 fps. The pool recycles: a handful of frames serve the whole movie.
    @Test func framesDrawnIntoThePoolBecomeAMovie() async throws {
        let out = path("frames.mp4")
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 320, height: 240, keyframeInterval: 30))
        let adaptor = AssetWriterInputPixelBufferAdaptor(
            assetWriterInput: input, sourcePixelBufferAttributes: PixelBufferAttributes(pixelFormat: .bgra, width: 320, height: 240))
        #expect(adaptor.pixelBufferPool == nil)  // before writing starts, as in AVFoundation
        #expect(writer.canAdd(input))
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        let pool = try #require(adaptor.pixelBufferPool)
        for n in 0..<90 {
            var frame = try pool.makePixelBuffer()
            #expect(frame.width == 320 && frame.height == 240 && frame.bytesPerRow >= 1280 && frame.pixelFormat == .bgra)
            Self.draw(n, into: &frame)
            try await adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
        }
        input.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        #expect(writer.error == nil)
        #expect(pool.allocations <= 24, "the pool made \(pool.allocations) frames for 90")

        let probe = try MediaProbe(out, countFrames: true)
        let video = try #require(probe.stream("video"))
        #expect(video.codecName == "h264" && video.width == 320 && video.height == 240)
        #expect(video.frameCount == 90)
        #expect(abs((video.frameRate ?? 0) - 30) < 0.01)
        #expect(abs(probe.duration - 3) < 0.05)
    }

    /// The same loop from a plain thread, with the blocking append and requestMediaDataWhenReady
    /// (RosyWriter's shape): frames at 30000/1001 fps, the rate the file states.
    @Test func requestMediaDataWhenReadyDrivesTheBlockingAppend() async throws {
        let out = path("ntsc.mov")
        let writer = try AssetWriter(outputPath: out, fileType: .mov)
        let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 160, height: 120))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        let done = DispatchSemaphore(value: 0)
        let next = Atomic<Int>(0)
        let failures = Guarded<[String]>([])
        input.requestMediaDataWhenReady(on: DispatchQueue(label: "feeder")) {
            while input.isReadyForMoreMediaData {
                let n = next.add(1, ordering: .relaxed).oldValue
                if n == 60 {
                    input.markAsFinished()
                    done.signal()
                    return
                }
                do {
                    var frame = try adaptor.pixelBufferPool!.makePixelBuffer()
                    Self.draw(n, into: &frame)
                    try adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n) * 1001, timescale: 30_000))
                } catch {
                    failures.withLock { $0.append("\(error)") }
                    done.signal()
                    return
                }
            }
        }
        // Waited for on a thread of its own: a concurrency thread is never blocked.
        #expect(await TestThread("wait") { done.wait(timeout: .now() + 60) == .success }.join())
        #expect(failures.withLock { $0 }.isEmpty)
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == 60)
        #expect(abs((probe.stream("video")?.frameRate ?? 0) - 29.97) < 0.01)
        #expect(probe.formatName.contains("mov"))
    }

    /// Audio and video in one file, interleaved by the muxer; the audio converted to the
    /// settings' rate and channel count, as AVAssetWriter converts.
    @Test func audioAndVideoInOneFileWithConversion() async throws {
        let out = path("av.mp4")
        let (writer, adaptor, audio) = try writing(out, VideoSettings(width: 320, height: 240),
                                                   AudioSettings(sampleRate: 44_100, channels: 1, bitRate: 64_000), faststart: true)
        try await appendInterleaved(frames: 60, fps: 30, TestMedia.sine(sampleRate: 48_000, channels: 2, seconds: 2), adaptor, audio)
        try await writer.finishWriting()  // finishes both inputs itself
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == 60)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.stream("audio")?.sampleRate == 44_100)
        #expect(probe.stream("audio")?.channels == 1)
        #expect(abs(probe.duration - 2) < 0.1)
        #expect(probe.topLevelBoxes.firstIndex(of: "moov")! < probe.topLevelBoxes.firstIndex(of: "mdat")!)
    }

    /// The file's inputs interleave as it is written, as a muxer's do: sound more than half a
    /// second ahead of the pictures waits for them. A picture input that stalls (a camera that
    /// stops giving frames) holds the sound for half a second, not for ever: twelve seconds of
    /// sound (more than the inputs hold: the appends wait for the file) are taken with the
    /// pictures stopped at one, then the pictures go on to four. Without the limit the appends
    /// waited until the writer's own stall rule failed it, and the run's end waited for ever.
    /// Once a wait has run out the sound waits no more until the pictures catch up: pictures
    /// that trickle out under load do not make it wait half a second each.
    @Test(.timeLimit(.minutes(3))) func soundDoesNotWaitForeverForStalledPictures() async throws {
        let out = path("stall.mp4")
        let (writer, adaptor, audio) = try writing(out, VideoSettings(width: 160, height: 120), AudioSettings(sampleRate: 48_000, channels: 1, bitRate: 64_000))
        try await appendFrames(0..<30, fps: 30, adaptor)
        // Each append waits for room; the sound's end is taken while the pictures stand still
        // (a sink that waited for them would leave the appends waiting until the writer's stall
        // rule failed them: thrown here).
        for b in TestMedia.sine(sampleRate: 48_000, channels: 1, seconds: 12) { try await audio.append(b) }
        audio.markAsFinished()
        try await appendFrames(30..<120, fps: 30, adaptor)
        try await writer.finishWriting()
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == 120)
        #expect(abs(probe.duration - 12) < 0.1, "\(probe.duration) s")
    }

    /// A writer of `out` with a video input (through a pixel buffer adaptor) and an audio input,
    /// started, its session at zero.
    func writing(_ out: String, _ video: VideoSettings, _ audio: AudioSettings, faststart: Bool = false) throws
        -> (AssetWriter, AssetWriterInputPixelBufferAdaptor, AssetWriterInput) {
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        writer.shouldOptimizeForNetworkUse = faststart
        let videoInput = AssetWriterInput(mediaType: .video, outputSettings: video)
        let audioInput = AssetWriterInput(mediaType: .audio, outputSettings: audio)
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: videoInput)
        try writer.add(videoInput)
        try writer.add(audioInput)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        return (writer, adaptor, audioInput)
    }

    /// Frames `range`, drawn into the adaptor's pool, appended at `fps`.
    func appendFrames(_ range: Range<Int>, fps: Int32, _ adaptor: AssetWriterInputPixelBufferAdaptor) async throws {
        for n in range {
            var frame = try adaptor.pixelBufferPool!.makePixelBuffer()
            Self.draw(n, into: &frame)
            try await adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: fps))
        }
    }

    /// `frames` drawn frames at `fps` and the sound `pcm`, each buffer appended once the frame
    /// it reaches has gone, as a capture session delivers both.
    func appendInterleaved(frames: Int, fps: Int32, _ pcm: [SampleBuffer], _ adaptor: AssetWriterInputPixelBufferAdaptor,
                           _ audio: AssetWriterInput) async throws {
        var a = 0
        for n in 0..<frames {
            try await appendFrames(n..<(n + 1), fps: fps, adaptor)
            while a < pcm.count, pcm[a].presentationTime! <= MediaTime(value: Int64(n + 1), timescale: fps) {
                try await audio.append(pcm[a])
                a += 1
            }
        }
        while a < pcm.count { try await audio.append(pcm[a]); a += 1 }
    }

    /// startSession(atSourceTime:) is the file's zero: a frame that begins before it and ends
    /// after it shows from it until the next frame, as AVFoundation's edit list shows it (capture
    /// hands the first frame a few milliseconds before the sound that started RosyWriter's session:
    /// it used to be left out, one appended frame missing from the file); one that ends before it
    /// is left out. 25 frames at 25 fps from 0, the session at 0.05 s: frame 0 (0 to 0.04) is not
    /// in the file, frame 1 (0.04 to 0.08) is its first, shown from 0 to 0.03.
    @Test func aFrameAcrossTheSessionStartShowsFromIt() async throws {
        let (out, times) = try await frames(0..<25, session: MediaTime(value: 1, timescale: 20), into: "across.mp4")
        #expect(times.count == 24, "\(times)")
        #expect(times.first.map { abs($0) < 0.001 } == true && times.dropFirst().first.map { abs($0 - 0.03) < 0.001 } == true, "\(times)")
        #expect(times.last.map { abs($0 - 0.91) < 0.001 } == true, "\(times)")  // frame 24, at 0.96 - 0.05
        // The first picture is frame 1's (frame 2's grey is 7 more).
        let grey = try firstPictureGrey(out)
        #expect(abs(grey - Self.meanGrey(1)) < 3, "first picture's grey \(grey), frame 1's \(Self.meanGrey(1))")
    }

    /// Frames `range` drawn at 25 fps through the adaptor into a 64×48 MP4 named `name`, the
    /// session starting at `session`: the file's path and its pictures' times, as ffprobe reads them.
    func frames(_ range: Range<Int>, session: MediaTime, into name: String) async throws -> (path: String, times: [Double]) {
        let out = path(name)
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 64, height: 48))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: input)
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: session)
        try await appendFrames(range, fps: 25, adaptor)
        input.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let times = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time", "-of", "csv=p=0", out])
            .split(separator: "\n").compactMap { Double($0) }.sorted()
        return (out, times)
    }

    /// A drawn frame's mean grey: rows n × 7 + y, 48 rows (no row past 255 for n < 30).
    static func meanGrey(_ n: Int) -> Double { Double(n * 7) + 23.5 }

    /// The mean grey of `file`'s first picture as ffmpeg decodes it: the whole picture's, which
    /// the encoder keeps however coarsely a first picture is coded (a row's grey is not kept:
    /// x264 may code a 16-row gradient as one flat block).
    func firstPictureGrey(_ file: String) throws -> Double {
        let gray = file + ".gray"
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-y", gray])
        let pixels = try [UInt8](Data(contentsOf: URL(fileURLWithPath: gray)))
        #expect(pixels.count == 64 * 48)
        return Double(pixels.reduce(0) { $0 + Int($1) }) / Double(max(pixels.count, 1))
    }

    /// Many frames before the session (a clip's window, as an app writes it with startSession):
    /// 40 frames at 25 fps from 0, the session at 0.4 s. Frames 0 to 9 end by the session's
    /// start and are left out; frame 10 is the file's first, at 0, and the rate stays 25 fps.
    /// Before, the frames before the session were held at times below 0, which a buffer's
    /// unsigned timing made 0: two frames at 0, and the writer failed (-11800 in AVFoundation).
    @Test func framesBeforeTheSessionAreLeftOut() async throws {
        let (out, times) = try await frames(0..<40, session: MediaTime(value: 2, timescale: 5), into: "window.mp4")
        #expect(times.count == 30, "\(times)")
        #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 0.04) < 0.001 }, "\(times)")
        #expect(times.first.map { abs($0) < 0.001 } == true, "\(times)")
        // The first picture is frame 10's, not frame 9's or 11's (7 apart).
        let grey = try firstPictureGrey(out)
        #expect(abs(grey - Self.meanGrey(10)) < 3, "first picture's grey \(grey), frame 10's \(Self.meanGrey(10))")
    }

    /// The writer's metadata is the file's tags, read back by Asset as written; a date that is
    /// not ISO 8601 fails startWriting, saying so, and leaves no file.
    @Test func metadataIsWrittenAndReadBack() async throws {
        let out = path("tagged.m4a")
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        var tags = MediaMetadata()
        (tags.title, tags.artist, tags.album, tags.date) = ("Café – 東京", "Zoë", "Nights", "2024-05-01T12:30:00Z")
        writer.metadata = tags
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for b in TestMedia.sine(sampleRate: 8_000, seconds: 0.5, framesPerBuffer: 400) { try await audio.append(b) }
        try await writer.finishWriting()
        let read = try Asset(path: out).metadata
        #expect(read.title == "Café – 東京" && read.artist == "Zoë" && read.album == "Nights" && read.date == "2024-05-01T12:30:00Z", "\(read)")

        let badOut = path("bad-date.m4a")
        let bad = try AssetWriter(outputPath: badOut, fileType: .m4a)
        tags.date = "yesterday"
        bad.metadata = tags
        try bad.add(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1)))
        #expect(throws: GraphError.self) { try bad.startWriting() }
        #expect(bad.status == .failed && (bad.error?.description ?? "").contains("ISO 8601"), "\(String(describing: bad.error))")
        #expect(!FileManager.default.fileExists(atPath: badOut))
    }

    /// The cover, the place, the encoder and chapters go into the file as the export session
    /// writes them (one code): ffprobe reads the cover as an attached picture, the location, the
    /// encoder and the chapters; GraphKit's reader reads them all back. A cover that is not a
    /// picture, and a place or chapters for a fragmented file (written as it goes), fail
    /// startWriting naming the tag, and leave no file.
    @Test func coverLocationEncoderAndChaptersAreWritten() async throws {
        let png = path("cover.png")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=16x16", "-frames:v", "1", png])
        let cover = [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))
        var tags = MediaMetadata()
        tags.title = "Tagged"
        tags.artwork = MediaMetadata.Artwork(mimeType: "image/png", data: cover)
        tags.location = "+35.6586+139.7454/"
        tags.encoder = "GraphKit test"
        tags.chapters = [.init(start: 0, title: "One"), .init(start: 0.25, title: "Deux – 二")]
        func write(_ name: String, _ tags: MediaMetadata, fragments: MediaTime? = nil) async throws -> (AssetWriter, String) {
            let out = path(name)
            let writer = try AssetWriter(outputPath: out, fileType: .m4a)
            writer.metadata = tags
            writer.movieFragmentInterval = fragments
            let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
            try writer.add(audio)
            try writer.startWriting()
            writer.startSession(atSourceTime: .zero)
            for b in TestMedia.sine(sampleRate: 8_000, seconds: 0.5, framesPerBuffer: 400) { try await audio.append(b) }
            try await writer.finishWriting()
            return (writer, out)
        }
        let (_, out) = try await write("extras.m4a", tags)
        let probe = try MediaProbe(out)
        #expect(probe.tags["title"] == "Tagged" && probe.tags["location"] == "+35.6586+139.7454/" && probe.tags["encoder"] == "GraphKit test", "\(probe.tags)")
        #expect(probe.streams.contains { $0.codecType == "video" && $0.codecName == "png" }, "the cover, as ffprobe's attached picture")
        #expect(probe.chapters.map(\.title) == ["One", "Deux – 二"] && probe.chapters.map(\.start) == [0, 0.25], "\(probe.chapters)")
        let read = try Asset(path: out)
        #expect(read.metadata.artwork == MediaMetadata.Artwork(mimeType: "image/png", data: cover))
        #expect(read.metadata.location == "+35.6586+139.7454/" && read.metadata.encoder == "GraphKit test")
        #expect(read.chapters.map(\.title) == ["One", "Deux – 二"])

        var notAPicture = tags
        notAPicture.artwork = MediaMetadata.Artwork(mimeType: "image/png", data: Array("<svg/>".utf8))
        var fragmented = tags
        fragmented.artwork = nil
        for (name, bad, fragments, words) in [("bad-cover.m4a", notAPicture, nil, "metadata.artwork"),
                                              ("fragments.m4a", fragmented, MediaTime(seconds: 1), "metadata.location")] {
            let error = await #expect(throws: GraphError.self) { _ = try await write(name, bad, fragments: fragments) }
            #expect(error?.code == .usage && error?.description.contains(words) == true, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: path(name)))
        }
    }

    @Test func theSessionStartIsTheFilesZero() async throws {
        let out = path("session.m4a")
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: MediaTime(value: 1, timescale: 2))  // 0.5 s
        // 2 s of PCM starting at 0, in buffers of 300 samples (so the cut falls inside one).
        for b in TestMedia.sine(sampleRate: 8_000, seconds: 2, framesPerBuffer: 300) { try await audio.append(b) }
        try await writer.finishWriting()
        let probe = try MediaProbe(out)
        #expect(abs(probe.duration - 1.5) < 0.0002, "duration \(probe.duration)")  // 12,000 samples, gapless
    }

    /// endSession(atSourceTime:) after the last append, as AVFoundation code calls it: 2 s of
    /// video and sound appended, the session ended at 1.2 s. Every track's edit list stops
    /// there, so the file lasts 1.2 s, ffmpeg shows 30 of the 50 frames, and a reader gives
    /// exactly 1.2 s of sound (9,600 samples at 8 kHz) from the gapless AAC track. Before, the
    /// file kept all 2 s: endSession only left out what was appended after it.
    @Test func endSessionEndsEveryTrackThere() async throws {
        let out = path("ended.mp4")
        let (writer, video, adaptor, audio) = try writingAV(to: out)
        try await appendInterleaved(frames: 50, fps: 25, TestMedia.sine(sampleRate: 8_000, seconds: 2, framesPerBuffer: 400), adaptor, audio)
        video.markAsFinished()
        audio.markAsFinished()
        try writer.endSession(atSourceTime: MediaTime(value: 6, timescale: 5))
        try await writer.finishWriting()
        let probe = try MediaProbe(out, countFrames: true)
        #expect(abs(probe.duration - 1.2) < 0.001, "\(probe.duration)")
        #expect(probe.stream("video")?.frameCount == 30)
        let asset = try Asset(path: out)
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio), outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(output)
        try reader.startReading()
        var samples = 0
        for try await b in output.samples { samples += b.frameCount }
        #expect(samples == 9_600)
    }

    /// endSession before the session starts, or at or before its start, says what to do.
    @Test func endSessionOutOfPlaceSaysSo() throws {
        let writer = try AssetWriter(outputPath: path("early.mp4"), fileType: .mp4)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 64, height: 48))
        try writer.add(video)
        try writer.startWriting()
        expectUsageSync("after startSession") { try writer.endSession(atSourceTime: MediaTime(value: 1, timescale: 1)) }
        writer.startSession(atSourceTime: MediaTime(value: 2, timescale: 1))
        expectUsageSync("after the session's start") { try writer.endSession(atSourceTime: MediaTime(value: 2, timescale: 1)) }
        expectUsageSync("after the session's start") { try writer.endSession(atSourceTime: .positiveInfinity) }
        writer.cancelWriting()
    }

    // MARK: Mistakes say what to do

    @Test func callsInTheWrongStateThrowSayingWhatToDo() async throws {
        let writer = try AssetWriter(outputPath: path("states.m4a"), fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: 0.5)
        await expectUsage("add this input to an AssetWriter") { try await audio.append(tone[0]) }
        try writer.add(audio)
        await expectUsage("call startWriting()") { try await audio.append(tone[0]) }
        await expectUsage("call startWriting() before finishWriting()") { try await writer.finishWriting() }
        try writer.startWriting()
        await expectUsage("startWriting() was called already") { try writer.startWriting() }
        await expectUsage("inputs are added before startWriting()") {
            try writer.add(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1)))
        }
        await expectUsage("call startSession(atSourceTime:) before appending") { try await audio.append(tone[0]) }
        writer.startSession(atSourceTime: .zero)
        try await audio.append(tone[0])
        audio.markAsFinished()
        await expectUsage("append after markAsFinished()") { try await audio.append(tone[1]) }
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        await expectUsage("finishWriting() was called already") { try await writer.finishWriting() }
        await expectUsage("takes no more samples") { try await audio.append(tone[2]) }
    }

    @Test func inputsAFileCannotHoldAreRefused() throws {
        let m4a = try AssetWriter(outputPath: path("x.m4a"), fileType: .m4a)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 320, height: 240))
        #expect(!m4a.canAdd(video))
        expectUsageSync("an M4A file holds audio only") { try m4a.add(video) }

        let mp4 = try AssetWriter(outputPath: path("x.mp4"), fileType: .mp4)
        try mp4.add(video)
        expectUsageSync("this input belongs to a writer already") { try mp4.add(video) }
        expectUsageSync("has a video input already") {
            try mp4.add(AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 320, height: 240)))
        }
        expectUsageSync("needs AudioSettings") {
            try mp4.add(AssetWriterInput(mediaType: .audio, outputSettings: VideoSettings(width: 320, height: 240)))
        }
        expectUsageSync("needs an even width") {
            try AssetWriter(outputPath: path("y.mp4"), fileType: .mp4)
                .add(AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 321, height: 240)))
        }
        expectUsageSync("cannot be encoded to AAC") {
            try AssetWriter(outputPath: path("y.m4a"), fileType: .m4a)
                .add(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 4_000, channels: 1)))
        }
        #expect(throws: GraphError.self) { try AssetWriter(outputPath: "", fileType: .mp4) }
        #expect(throws: GraphError.self) { try AssetWriter(outputPath: folder.path, fileType: .mp4) }
    }

    /// Each bad sample is refused at append, naming the input, and writing goes on.
    @Test func badSamplesAreRefusedNamingTheInput() async throws {
        let out = path("checked.mp4")
        let (writer, video, adaptor) = try videoWriter(out, width: 64, height: 48)
        let pool = try #require(adaptor.pixelBufferPool)
        try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: .zero)
        try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: 1, timescale: 10))

        await expectUsage("earlier than the previous sample") {
            try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: 1, timescale: 20))
        }
        await expectUsage("a video input takes raw frames") {
            try await video.append(TestMedia.sine(seconds: 0.1)[0])
        }
        let other = try PixelBufferPool(pixelFormat: .bgra, width: 32, height: 48)
        await expectUsage("a writer input takes one format") {
            try await adaptor.append(try other.makePixelBuffer(), withPresentationTime: MediaTime(value: 3, timescale: 10))
        }
        let short = SampleBuffer(format: .rawVideo(.init(pixelFormat: .bgra, width: 64, height: 48, frameRate: FrameRate(10))),
                                 byteCount: 100, presentationTime: MediaTime(value: 4, timescale: 10))
        await expectUsage("a 64x48 BGRA frame is 12288 bytes") { try await video.append(short) }
        var untimed = try pool.makePixelBuffer()
        untimed.presentationTime = nil
        await expectUsage("no presentation time") { try await video.append(untimed) }
        try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: 2, timescale: 10))
        try await writer.finishWriting()
        #expect(try MediaProbe(out, countFrames: true).stream("video")?.frameCount == 3)
    }

    /// Two frames at one time, and audio that starts before the previous buffer ends, would
    /// make a file whose decode times go backwards: refused, naming the input and both times.
    /// Audio a fraction of a sample early (times computed from seconds) is not an overlap.
    @Test func repeatedTimesAndOverlappingAudioAreRefused() async throws {
        let out = path("repeated.mp4")
        let (writer, _, adaptor, audio) = try writingAV(to: out)
        let pool = try #require(adaptor.pixelBufferPool)
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: 2, framesPerBuffer: 800)  // 0.1 s each
        for n in 0..<10 {
            try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 10))
            try await audio.append(tone[n])
        }
        await expectUsage("video input: the frame's time 0.9 s is the previous frame's time (0.9 s)") {
            try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: 9, timescale: 10))
        }
        var early = tone[10]
        early.presentationTime = MediaTime(value: 950, timescale: 1000)  // half of the previous buffer again
        await expectUsage("audio input: the samples at 0.95 s overlap the previous buffer, which started at 0.9 s and ends at 1.0 s") {
            try await audio.append(early)
        }
        // 0.3 of a sample early, as a time computed in seconds can be: taken.
        var rounded = tone[10]
        rounded.presentationTime = MediaTime(seconds: 1.0 - 0.3 / 8_000)
        try await audio.append(rounded)
        for n in 10..<20 {
            try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 10))
            if n > 10 { try await audio.append(tone[n]) }
        }
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == 20)
        #expect(abs((probe.stream("audio")?.duration ?? 0) - 2) < 0.05)
        let dts = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=dts_time", "-of", "csv=p=0", out])
            .split(separator: "\n").compactMap { Double($0) }
        #expect(dts.count == 20 && zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "\(dts)")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
    }

    /// An input whose writer nobody holds any more says so, not that it was never added.
    @Test func anInputWhoseWriterWasReleasedSaysSo() async throws {
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: 0.5)
        do {
            let writer = try AssetWriter(outputPath: path("released.m4a"), fileType: .m4a)
            try writer.add(audio)
            try writer.startWriting()
            writer.startSession(atSourceTime: .zero)
            try await audio.append(tone[0])
        }
        await expectUsage("audio input: this input's AssetWriter is gone") { try await audio.append(tone[1]) }
        #expect(!audio.isReadyForMoreMediaData)
    }

    /// A still shown for a second: one pixel buffer appended at 30 times, as AVFoundation allows
    /// (a slideshow's picture, a camera's buffer handed over again). The first frame, held until
    /// the second says the rate, keeps its own time: it was stamped in place, in the buffer the
    /// app appends again, and took the second frame's time (the file failed, "time stamps go no
    /// further").
    @Test func theSamePixelBufferAppendedAgainIsAFrameEachTime() async throws {
        let out = path("still.mp4")
        let (writer, _, adaptor) = try videoWriter(out, width: 64, height: 48)
        var still = try #require(adaptor.pixelBufferPool).makePixelBuffer()
        Self.draw(0, into: &still)
        for n in 0..<30 {
            try await adaptor.append(still, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
        }
        try await writer.finishWriting()
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == 30)
        #expect(abs(probe.duration - 1) < 0.002, "duration \(probe.duration)")
    }

    // MARK: Helpers

    /// A writer of one video input through an adaptor, writing, its session started at 0.
    func videoWriter(_ out: String, width: Int, height: Int) throws -> (AssetWriter, AssetWriterInput, AssetWriterInputPixelBufferAdaptor) {
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: width, height: height))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
        try writer.add(video)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        return (writer, video, adaptor)
    }

    func expectUsage(_ fragment: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("no error; expected one saying \"\(fragment)\"", sourceLocation: sourceLocation)
        } catch let error as GraphError {
            #expect(error.description.contains(fragment), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }

    func expectUsageSync(_ fragment: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("no error; expected one saying \"\(fragment)\"", sourceLocation: sourceLocation)
        } catch let error as GraphError {
            #expect(error.description.contains(fragment), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error)", sourceLocation: sourceLocation)
        }
    }
}
