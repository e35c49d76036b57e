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
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        writer.shouldOptimizeForNetworkUse = true
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 320, height: 240))
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 44_100, channels: 1, bitRate: 64_000))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
        try writer.add(video)
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
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

    /// `frames` drawn frames at `fps` and the sound `pcm`, each buffer appended once the frame
    /// it reaches has gone, as a capture session delivers both.
    func appendInterleaved(frames: Int, fps: Int32, _ pcm: [SampleBuffer], _ adaptor: AssetWriterInputPixelBufferAdaptor,
                           _ audio: AssetWriterInput) async throws {
        var a = 0
        for n in 0..<frames {
            var frame = try adaptor.pixelBufferPool!.makePixelBuffer()
            Self.draw(n, into: &frame)
            try await adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: fps))
            while a < pcm.count, pcm[a].presentationTime! <= MediaTime(value: Int64(n + 1), timescale: fps) {
                try await audio.append(pcm[a])
                a += 1
            }
        }
        while a < pcm.count { try await audio.append(pcm[a]); a += 1 }
    }

    /// startSession(atSourceTime:) is the file's zero: frames before it are left out, and audio
    /// is cut to the sample.
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

    // MARK: However writing ends, no half-written file

    @Test func cancelWritingLeavesNoFile() async throws {
        let out = path("cancelled.mp4")
        let (writer, _, adaptor) = try videoWriter(out, width: 64, height: 48)
        for n in 0..<10 {
            try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 10))
        }
        writer.cancelWriting()
        #expect(writer.status == .cancelled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        await #expect(throws: GraphError.self) {
            try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: 11, timescale: 10))
        }
        await expectUsage("writing was cancelled") { try await writer.finishWriting() }
    }

    @Test func aWriterLetGoWhileWritingLeavesNoFile() async throws {
        let out = path("dropped.m4a")
        do {
            let writer = try AssetWriter(outputPath: out, fileType: .m4a)
            let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
            try writer.add(audio)
            try writer.startWriting()
            writer.startSession(atSourceTime: .zero)
            for b in TestMedia.sine(sampleRate: 8_000, seconds: 0.5) { try await audio.append(b) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func anOutputThatCannotBeWrittenFailsStartWriting() throws {
        let blocker = path("file")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data([1])))
        let writer = try AssetWriter(outputPath: blocker + "/movie.mp4", fileType: .mp4)  // a folder that is a file
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        #expect {
            try writer.startWriting()
        } throws: { error in
            (error as? GraphError)?.code == .outputUnwritable
        }
        #expect(writer.status == .failed)
        #expect(writer.error?.code == .outputUnwritable)
    }

    /// Nothing appended: the run fails at the sink ("nothing to write"), and nothing is left.
    @Test func finishingWithNoSampleFailsAndLeavesNoFile() async throws {
        let out = path("empty.m4a")
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        await #expect(throws: GraphError.self) { try await writer.finishWriting() }
        #expect(writer.status == .failed)
        #expect(writer.error?.message.contains("nothing to write") == true)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    // MARK: No call can hang

    /// A producer blocked in append (the encoder is held back: the writer is busy on a huge
    /// frame backlog) wakes and throws when writing is cancelled from elsewhere.
    @Test func aBlockedAppendWakesWhenWritingIsCancelled() async throws {
        let (writer, video, adaptor) = try videoWriter(path("blocked.mp4"), width: 1920, height: 1080)
        let waited = Atomic<Bool>(false)
        let producer = TestThread("producer") { () -> GraphError? in
            do {
                for n in 0..<100_000 {
                    if !video.isReadyForMoreMediaData { waited.store(true, ordering: .relaxed) }
                    try adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        while !waited.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        let error = await producer.join()
        #expect(error?.code == .cancelled, "\(String(describing: error))")
    }

    /// The same with the async append, suspended.
    @Test func aSuspendedAppendWakesWhenWritingIsCancelled() async throws {
        let (writer, video, adaptor) = try videoWriter(path("suspended.mp4"), width: 1920, height: 1080)
        let waited = Atomic<Bool>(false)
        let producer = Task { () -> GraphError? in
            do {
                for n in 0..<100_000 {
                    if !video.isReadyForMoreMediaData { waited.store(true, ordering: .relaxed) }
                    try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        while !waited.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        let error = await producer.value
        #expect(error?.code == .cancelled, "\(String(describing: error))")
    }

    /// finishWriting() finishes the inputs nobody finished: it returns, with a complete file.
    @Test func finishWritingFinishesUnfinishedInputs() async throws {
        let out = path("unfinished.m4a")
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for b in TestMedia.sine(sampleRate: 8_000, seconds: 1) { try await audio.append(b) }
        try await writer.finishWriting()
        #expect(abs(try MediaProbe(out).duration - 1) < 0.0002)
    }

    /// A requestMediaDataWhenReady loop stops being called when writing is cancelled, and the
    /// append inside it throws.
    @Test func aRequestLoopEndsWhenWritingIsCancelled() async throws {
        let writer = try AssetWriter(outputPath: path("loop.mp4"), fileType: .mp4)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 1280, height: 720))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
        try writer.add(video)
        let next = Atomic<Int>(0)
        let outcome = Guarded<String?>(nil)
        let ended = TestEvent()
        let queue = DispatchQueue(label: "loop")
        video.requestMediaDataWhenReady(on: queue) {  // before writing starts: begins when it does
            while video.isReadyForMoreMediaData {
                let n = next.add(1, ordering: .relaxed).oldValue
                do {
                    try adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                    ended.signal()
                    return
                }
            }
        }
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        while next.load(ordering: .relaxed) < 20 { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        let calls = next.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(300))
        queue.sync {}
        #expect(!video.isReadyForMoreMediaData)
        // Either the block was inside an append (which threw), or it had returned and is not called again.
        #expect(ended.wait(guardSeconds: 1) || next.load(ordering: .relaxed) <= calls + 1)
    }

    /// Once cancelWriting() is called, the input is ready no more and its request block is
    /// not called again (it was called over and over, each append failing, while the run ended).
    @Test func cancelWritingStopsTheRequestBlockAtOnce() async throws {
        let writer = try AssetWriter(outputPath: path("feed.m4a"), fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: 60, framesPerBuffer: 80)
        let cancelling = Atomic<Bool>(false)
        let next = Atomic<Int>(0)
        let callsAfterCancel = Atomic<Int>(0)
        let failedAppends = Atomic<Int>(0)
        let queue = DispatchQueue(label: "feed")
        audio.requestMediaDataWhenReady(on: queue) {
            if cancelling.load(ordering: .relaxed) { callsAfterCancel.add(1, ordering: .relaxed) }
            while audio.isReadyForMoreMediaData {
                let n = next.add(1, ordering: .relaxed).oldValue
                guard n < tone.count else { return }
                do { try audio.append(tone[n]) } catch {
                    failedAppends.add(1, ordering: .relaxed)
                    return
                }
                usleep(2_000)
            }
        }
        try writer.startWriting()
        // The block is not called between these two (its appends would fail: on a loaded
        // machine it was, hundreds of times, before the session started).
        usleep(100_000)
        #expect(next.load(ordering: .relaxed) == 0)
        writer.startSession(atSourceTime: .zero)
        while next.load(ordering: .relaxed) < 50 { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        // Counted from when cancelWriting() has returned: a call queued as it began has run by
        // the time the queue is drained, and none may come after.
        queue.sync {}
        cancelling.store(true, ordering: .relaxed)
        #expect(!audio.isReadyForMoreMediaData)
        try await Task.sleep(for: .milliseconds(300))
        queue.sync {}
        #expect(callsAfterCancel.load(ordering: .relaxed) == 0)
        // The append under way as cancel began may fail; none other (it was 440 of them).
        #expect(failedAppends.load(ordering: .relaxed) <= 1)
        #expect(writer.status == .cancelled)
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

/// Shapes of movies users make: one frame (a still), an odd rate, frames of another size
/// than the settings (scaled), I420 frames.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterShapesTests {
    func write(frames: Int, timescale: Int32, attributes: PixelBufferAttributes, settings: VideoSettings) async throws -> MediaProbe {
        try await writeFile(frames: frames, timescale: timescale, attributes: attributes, settings: settings).probe
    }

    func writeFile(frames: Int, timescale: Int32, attributes: PixelBufferAttributes, settings: VideoSettings) async throws -> (probe: MediaProbe, path: String) {
        let out = try TestMedia.temporaryFolder().appendingPathComponent("shape.mp4").path
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: settings)
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: attributes)
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for n in 0..<frames {
            try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: timescale))
        }
        try await writer.finishWriting()
        return (try MediaProbe(out, countFrames: true), out)
    }

    /// One frame, no rate to go by: it shows for one frame at 30 fps, so the movie has a
    /// length and ffmpeg decodes its one picture (a duration of 0 made an "empty" file).
    @Test func aStillOfOneFrame() async throws {
        let (probe, out) = try await writeFile(frames: 1, timescale: 30, attributes: PixelBufferAttributes(width: 64, height: 48),
                                               settings: VideoSettings(width: 64, height: 48))
        #expect(probe.stream("video")?.frameCount == 1)
        #expect(abs(probe.duration - 1.0 / 30) < 0.002, "duration \(probe.duration)")
        #expect(abs((probe.stream("video")?.frameRate ?? 0) - 30) < 0.01)
        let pictures = try TestMedia.temporaryFolder()
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, pictures.appendingPathComponent("%d.png").path])
        #expect(try FileManager.default.contentsOfDirectory(atPath: pictures.path) == ["1.png"])
    }

    /// Each frame lasts until the next; the last as long as the gap before it.
    @Test func theLastFrameLastsAsLongAsTheGapBeforeIt() async throws {
        let probe = try await write(frames: 2, timescale: 4, attributes: PixelBufferAttributes(width: 64, height: 48),
                                    settings: VideoSettings(width: 64, height: 48))
        #expect(probe.stream("video")?.frameCount == 2)
        #expect(abs(probe.duration - 0.5) < 0.002, "duration \(probe.duration)")
    }

    @Test func sevenFramesASecond() async throws {
        let probe = try await write(frames: 14, timescale: 7, attributes: PixelBufferAttributes(width: 64, height: 48),
                                    settings: VideoSettings(width: 64, height: 48))
        #expect(probe.stream("video")?.frameCount == 14)
        #expect(abs((probe.stream("video")?.frameRate ?? 0) - 7) < 0.01)
        #expect(abs(probe.duration - 2) < 0.01)
    }

    @Test func framesOfAnotherSizeAreScaledToTheSettings() async throws {
        let probe = try await write(frames: 10, timescale: 10, attributes: PixelBufferAttributes(pixelFormat: .i420, width: 320, height: 240),
                                    settings: VideoSettings(width: 160, height: 90))
        #expect(probe.stream("video")?.width == 160 && probe.stream("video")?.height == 90)
        #expect(probe.stream("video")?.frameCount == 10)
    }
}

/// Appending all of one track, then the other, from one loop: the muxer interleaves by time,
/// so the first track's append waits for the other, which this loop appends only later. The
/// writer says so (after 10 s, ``StallWatch``) instead of waiting for ever; two producers of
/// their own never trip it, however slow one of them is. On virtual time (``VirtualClock``): the
/// graph, its backpressure and the waits are real; the seconds pass when the test says, and
/// only once the writer has set an alarm. None of these tests sleeps.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterStallTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func avWriter(_ name: String, clock: VirtualClock) throws -> (AssetWriter, AssetWriterInput, AssetWriterInputPixelBufferAdaptor, AssetWriterInput, String) {
        let out = folder.appendingPathComponent(name).path
        let (writer, video, adaptor, audio) = try writingAV(to: out, clock: clock)
        return (writer, video, adaptor, audio, out)
    }

    @Test func allTheVideoThenTheAudioFailsInsteadOfHanging() async throws {
        let clock = VirtualClock()
        let (writer, _, adaptor, audio, out) = try avWriter("sequential.mp4", clock: clock)
        let pool = try #require(adaptor.pixelBufferPool)
        let appended = Atomic<Int>(0)
        let producer = Task { () -> (any Error)? in
            defer { clock.stop() }
            do {
                for n in 0..<(30 * 30) {
                    try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                    appended.add(1, ordering: .relaxed)
                }
                return nil
            } catch {
                return error
            }
        }
        // Time passes only while the writer has an alarm set: while a video append waits, 5 s or
        // more ahead of the audio, which has nothing. Each alarm rings on advance(to:), and then
        // the writer has acted on it.
        while writer.status == .writing, let due = await clock.nextAlarm() { clock.advance(to: due) }
        guard let failure = await producer.value else {
            Issue.record("30 s of video went in with no audio; the muxer should have held it at about 10 s")
            return
        }
        let error = try #require(failure as? GraphError, "\(failure)")
        // The partial file went with the run before the append threw: a program that stops on
        // the error leaves nothing (it left a .partial file, the run still ending).
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(left.isEmpty, "\(left)")
        // The rule holds the video to be 5 s or more ahead of the audio (at 0) when it fails.
        #expect(appended.load(ordering: .relaxed) >= 5 * 30, "failed after \(appended.load(ordering: .relaxed)) frames: \(error)")
        #expect(clock.alarms.rung >= 1)
        #expect(error.code == .usage)
        for fragment in ["video input", "waited 10 s", "audio input has no samples", "Interleave the appends",
                         "requestMediaDataWhenReady", "markAsFinished() on the audio input"] {
            #expect(error.description.contains(fragment), "\(error)")
        }
        #expect(writer.status == .failed)
        #expect(writer.error?.message == error.message)
        await #expect(throws: GraphError.self) { try await audio.append(TestMedia.sine(sampleRate: 8_000, seconds: 0.1)[0]) }
        await #expect(throws: GraphError.self) { try await writer.finishWriting() }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// Video from one task runs 10 s ahead and waits; audio from this one comes slowly (0.1 s
    /// of it every 2 s, for 14 s), then catches up. The video waits through all of that (the
    /// writer's alarm rings while it does), but never for an input that gets nothing: the file
    /// is written.
    @Test func aSlowProducerOnItsOwnTaskIsNotAStall() async throws {
        let clock = VirtualClock()
        let (writer, video, adaptor, audio, out) = try avWriter("slow.mp4", clock: clock)
        let pool = try #require(adaptor.pixelBufferPool)
        let seconds = 16
        let videoTask = Task {
            for n in 0..<(seconds * 30) {
                try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
            }
            video.markAsFinished()
        }
        // The video is 5 s or more ahead of the audio, and an append of it waits: the writer
        // has set an alarm, 10 s from now.
        let due = try #require(await clock.nextAlarm())
        #expect(due == clock.now + .seconds(10))
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: Double(seconds), framesPerBuffer: 800)
        for (k, buffer) in tone.enumerated() {
            if k < 7 { clock.advance(by: .seconds(2)) }  // 14 s of a slow producer
            try await audio.append(buffer)
        }
        audio.markAsFinished()
        try await videoTask.value
        #expect(clock.alarms.rung >= 1, "the writer looked for a stall while the audio trickled in")
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == seconds * 30)
        #expect(abs((probe.stream("audio")?.duration ?? 0) - Double(seconds)) < 0.1)
    }
}

/// A writer of 64×48 video (through an adaptor) and 8 kHz mono sound to `out`, writing, its
/// session started at 0; its rules on `clock` when one is given (else the machine's).
func writingAV(to out: String, clock: VirtualClock? = nil) throws -> (AssetWriter, AssetWriterInput, AssetWriterInputPixelBufferAdaptor, AssetWriterInput) {
    let writer = try clock.map { try AssetWriter(outputPath: out, fileType: .mp4, clock: $0) } ?? AssetWriter(outputPath: out, fileType: .mp4)
    let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 64, height: 48))
    let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
    let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
    try writer.add(video)
    try writer.add(audio)
    try writer.startWriting()
    writer.startSession(atSourceTime: .zero)
    return (writer, video, adaptor, audio)
}
