import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Every AVFoundation object goes when the app lets go of it, with the graph run, pipeline and
/// decoders under it: a server that reads, writes, exports or cuts pictures from thousands of
/// files must not keep one of them. Each test holds the objects weakly once done with them and
/// waits for them to go (the suite's time limit is the bound: a kept object fails it).
@Suite(.media, .timeLimit(.minutes(10))) struct ObjectLifetimeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 2 s of 320x240 H.264 (a keyframe every second) and stereo AAC.
    func movie() throws -> URL {
        let url = folder.appendingPathComponent("movie.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=2",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-ac", "2",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", url.path])
        return url
    }

    /// Waits until every reference is nil: an object kept runs the test into its time limit,
    /// which fails it (the wait is the check; the reader tests did so before the fix).
    func expectGone(_ references: [() -> AnyObject?]) async throws {
        while references.contains(where: { $0() != nil }) { try await Task.sleep(for: .milliseconds(10)) }
    }

    /// A reader read to the end goes with its outputs and asset. Its outputs held it strongly
    /// (a computed property marked weak over a Mutex that was not), so every reader, with its
    /// run and pipeline, stayed for the life of the process.
    @Test func aReaderReadToTheEndGoes() async throws {
        weak var reader: AVAssetReader?, output: AVAssetReaderOutput?, asset: AVAsset?
        do {
            let file = AVURLAsset(url: try movie())
            let r = try AVAssetReader(asset: file)
            let o = AVAssetReaderTrackOutput(track: file.tracks(withMediaType: .audio)[0],
                                             outputSettings: [AVFormatIDKey: kAudioFormatLinearPCM])
            r.add(o)
            #expect(r.startReading())
            var samples = 0
            while o.copyNextSampleBuffer() != nil { samples += 1 }
            #expect(samples > 0 && r.status == .completed)
            (reader, output, asset) = (r, o, file)
        }
        try await expectGone([{ reader }, { output }, { asset }])
    }

    /// A reader let go while it still has samples to give goes too (its run is cancelled).
    @Test func aReaderLetGoMidwayGoes() async throws {
        weak var reader: AVAssetReader?, output: AVAssetReaderOutput?
        do {
            let file = AVURLAsset(url: try movie())
            let r = try AVAssetReader(asset: file)
            let o = AVAssetReaderTrackOutput(track: file.tracks(withMediaType: .video)[0],
                                             outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
            r.add(o)
            #expect(r.startReading())
            #expect(o.copyNextSampleBuffer() != nil)
            (reader, output) = (r, o)
        }
        try await expectGone([{ reader }, { output }])
    }

    /// A reader of a composition goes with the composition, its track and the assets under it.
    @Test func aCompositionsReaderGoes() async throws {
        weak var reader: AVAssetReader?, composition: AVMutableComposition?, asset: AVAsset?
        do {
            let file = AVURLAsset(url: try movie())
            let c = AVMutableComposition()
            let track = try #require(c.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid))
            let source = try #require(try await file.loadTracks(withMediaType: .audio).first)
            let second = CMTime(value: 1, timescale: 1)
            try track.insertTimeRange(CMTimeRange(start: .zero, duration: second), of: source, at: .zero)
            try track.insertTimeRange(CMTimeRange(start: .zero, duration: second), of: source, at: second)
            let r = try AVAssetReader(asset: c)
            let o = AVAssetReaderTrackOutput(track: track, outputSettings: [AVFormatIDKey: kAudioFormatLinearPCM])
            r.add(o)
            #expect(r.startReading())
            while o.copyNextSampleBuffer() != nil {}
            #expect(r.status == .completed, "\(String(describing: r.error))")
            (reader, composition, asset) = (r, c, file)
        }
        try await expectGone([{ reader }, { composition }, { asset }])
    }

    /// A writer, its input and its pixel-buffer adaptor go once the file is written.
    @Test func aWriterAndItsInputsGo() async throws {
        weak var writer: AVAssetWriter?, input: AVAssetWriterInput?, adaptor: AVAssetWriterInputPixelBufferAdaptor?
        do {
            let w = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.mp4"), fileType: .mp4)
            let i = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 160, AVVideoHeightKey: 120])
            let a = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: i, sourcePixelBufferAttributes:
                                                            [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
            w.add(i)
            #expect(w.startWriting())
            w.startSession(atSourceTime: .zero)
            let pool = try #require(a.pixelBufferPool)
            for n in 0..<10 {
                var pb: CVPixelBuffer?
                #expect(CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pb) == kCVReturnSuccess)
                #expect(a.append(try #require(pb), withPresentationTime: CMTimeMake(value: Int64(n), timescale: 25)))
            }
            i.markAsFinished()
            await w.finishWriting()
            #expect(w.status == .completed)
            (writer, input, adaptor) = (w, i, a)
        }
        try await expectGone([{ writer }, { input }, { adaptor }])
    }

    /// An image generator goes once its pictures are cut.
    @Test func anImageGeneratorGoes() async throws {
        weak var generator: AVAssetImageGenerator?
        do {
            let g = AVAssetImageGenerator(asset: AVURLAsset(url: try movie()))
            var actual = CMTime.invalid
            let image = try g.copyCGImage(at: CMTime(value: 1, timescale: 1), actualTime: &actual)
            #expect(image.width == 320)
            generator = g
        }
        try await expectGone([{ generator }])
    }

    /// An export session goes once its export has ended.
    @Test func anExportSessionGoes() async throws {
        weak var session: AVAssetExportSession?
        do {
            let s = try #require(AVAssetExportSession(asset: AVURLAsset(url: try movie()), presetName: AVAssetExportPreset640x480))
            s.outputURL = folder.appendingPathComponent("export.mp4")
            s.outputFileType = .mp4
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in s.exportAsynchronously { done.resume() } }
            #expect(s.status == .completed, "\(String(describing: s.error))")
            session = s
        }
        try await expectGone([{ session }])
    }
}
