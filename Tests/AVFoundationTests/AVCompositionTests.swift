import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// AVMutableComposition as AVFoundation code builds and reads one (trim and join, issue 31),
/// on media made here.
@Suite(.media, .timeLimit(.minutes(10))) struct AVCompositionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// `seconds` of a 44.1 kHz mono sine, as WAV.
    func sine(_ name: String, seconds: Double) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:a", "pcm_s16le", "-y", url.path])
        return url
    }

    static let pcm16: [String: Any] = [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMBitDepthKey: 16, AVLinearPCMIsFloatKey: false,
                                      AVLinearPCMIsBigEndianKey: false, AVLinearPCMIsNonInterleaved: false]

    @Test func aCompositionIsBuiltAndReadAsAVFoundationDoes() async throws {
        let a = AVURLAsset(url: try sine("a.wav", seconds: 1)), b = AVURLAsset(url: try sine("b.wav", seconds: 1))
        let composition = AVMutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid))
        let aTrack = try #require(try await a.loadTracks(withMediaType: .audio).first)
        let bTrack = try #require(try await b.loadTracks(withMediaType: .audio).first)
        let half = CMTime(value: 1, timescale: 2), quarter = CMTime(value: 1, timescale: 4)
        try track.insertTimeRange(CMTimeRange(start: .zero, duration: half), of: aTrack, at: .zero)
        try track.insertTimeRange(CMTimeRange(start: quarter, duration: half), of: bTrack, at: half)
        #expect(track.segments.count == 2)
        #expect(track.segments[1].sourceURL?.path == b.url.path)
        #expect(track.segments[1].timeMapping.source.start == quarter)
        #expect(track.segments[1].timeMapping.target.start == half)
        #expect(try await composition.load(.duration) == CMTime(value: 1, timescale: 1))
        #expect(try await composition.load(.tracks).count == 1)

        // Past the source's end: thrown, naming the file.
        #expect {
            try track.insertTimeRange(CMTimeRange(start: half, duration: CMTime(value: 1, timescale: 1)), of: aTrack, at: .zero)
        } throws: { ($0 as NSError).localizedDescription.contains("a.wav") && ($0 as NSError).localizedDescription.contains("past the track's end") }
        #expect(track.segments.count == 2)

        let reader = try AVAssetReader(asset: composition)
        let stored = AVAssetReaderTrackOutput(track: track, outputSettings: nil)
        #expect(!reader.canAdd(stored))  // WAV pieces: no MP4 sample description says they can be joined as stored
        let output = AVAssetReaderTrackOutput(track: track, outputSettings: Self.pcm16)
        #expect(reader.canAdd(output))
        reader.add(output)
        #expect(reader.startReading())
        var frames = 0, last = CMTime.negativeInfinity
        while let sample = output.copyNextSampleBuffer() {
            frames += CMSampleBufferGetNumSamples(sample)
            let pts = CMSampleBufferGetPresentationTimeStamp(sample)
            #expect(pts > last)
            last = pts
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        #expect(frames == 44_100)
    }

    /// An AVMutableComposition of two MP4s exported with the passthrough preset, as AVFoundation
    /// code does: the join's packets are the sources'; with 640x480, encoded once; scaleTimeRange
    /// shows a range slower, and such a composition is not copied as stored (the session refuses
    /// it when exporting).
    @Test func aCompositionExportsInPassthroughAndScales() async throws {
        var urls: [URL] = []
        for n in 0..<2 {
            let url = folder.appendingPathComponent("v\(n).mp4")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1", "-c:v", "libx264",
                                             "-g", "25", "-pix_fmt", "yuv420p", "-y", url.path])
            urls.append(url)
        }
        let composition = AVMutableComposition()
        for url in urls {
            let asset = AVURLAsset(url: url)
            try composition.insertTimeRange(CMTimeRange(start: .zero, duration: CMTime(value: 1, timescale: 1)), of: asset,
                                            at: try await composition.load(.duration))
        }
        // Every video preset takes it (AVFoundation gives a session for each); one re-encodes it once.
        #expect(AVAssetExportSession.exportPresets(compatibleWith: composition)
                == [AVAssetExportPresetPassthrough, AVAssetExportPresetHighestQuality, AVAssetExportPresetMediumQuality,
                    AVAssetExportPresetLowQuality, AVAssetExportPreset3840x2160, AVAssetExportPreset1920x1080,
                    AVAssetExportPreset1280x720, AVAssetExportPreset960x540, AVAssetExportPreset640x480,
                    AVAssetExportPresetHEVCHighestQuality, AVAssetExportPresetHEVC1920x1080, AVAssetExportPresetHEVC3840x2160])
        let encoding = try #require(AVAssetExportSession(asset: composition, presetName: AVAssetExportPreset640x480))
        let encoded = folder.appendingPathComponent("encoded.mov")
        try await encoding.export(to: encoded, as: .mov)
        #expect(encoding.status == .completed)
        let probed = try MediaProbe(encoded.path, countFrames: true)
        #expect(probed.stream("video")?.codecName == "h264" && probed.stream("video")?.width == 160 && probed.stream("video")?.frameCount == 50)
        #expect(abs(probed.duration - 2) < 0.05)
        let session = try #require(AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetPassthrough))
        let out = folder.appendingPathComponent("joined.mp4")
        try await session.export(to: out, as: .mp4)
        let probe = { (path: String) in try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=size,data_hash",
                                                                          "-show_data_hash", "md5", "-of", "csv=p=0", path]) }
        #expect(try probe(out.path) == (try probe(urls[0].path)) + (try probe(urls[1].path)))

        composition.scaleTimeRange(CMTimeRange(start: .zero, duration: CMTime(value: 1, timescale: 1)), toDuration: CMTime(value: 2, timescale: 1))
        #expect(try await composition.load(.duration) == CMTime(value: 3, timescale: 1))
        let scaled = try #require(AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetPassthrough))
        await #expect(throws: (any Error).self) { try await scaled.export(to: folder.appendingPathComponent("scaled.mp4"), as: .mp4) }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("scaled.mp4").path))
    }

    /// A composition track's preferredTransform, set as code sets it to keep a phone video
    /// upright, is what the track loads and what an export writes as the display matrix, in a
    /// passthrough and in a re-encode (ffprobe reads the rotation back); a transform no file can
    /// hold is not kept.
    @Test func aSetPreferredTransformIsExported() async throws {
        let url = folder.appendingPathComponent("landscape.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1", "-c:v", "libx264",
                                         "-pix_fmt", "yuv420p", url.path])
        let asset = AVURLAsset(url: url)
        let source = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let composition = AVMutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .video, preferredTrackID: kCMPersistentTrackID_Invalid))
        try track.insertTimeRange(CMTimeRange(start: .zero, duration: try await asset.load(.duration)), of: source, at: .zero)
        #expect(track.preferredTransform == .identity)
        let upright = CGAffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 240, ty: 0)
        track.preferredTransform = upright
        track.preferredTransform = CGAffineTransform(a: .nan, b: 0, c: 0, d: 1, tx: 0, ty: 0)
        #expect(try await track.load(.preferredTransform) == upright)
        for preset in [AVAssetExportPresetPassthrough, AVAssetExportPreset640x480] {
            let session = try #require(AVAssetExportSession(asset: composition, presetName: preset))
            let out = folder.appendingPathComponent("upright-\(preset.count).mp4")
            try await session.export(to: out, as: .mp4)
            let rotation = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream_side_data=rotation",
                                                             "-of", "csv=p=0", out.path])
            #expect(rotation.trimmingCharacters(in: .whitespacesAndNewlines) == "-90", "\(preset): \(rotation)")
        }
    }

    /// A passthrough join of three pieces cut between key frames, read back decoded: every
    /// frame the joined file shows comes out (ffprobe's count of the file's frames).
    @Test func aJoinedFileReadsToItsEnd() async throws {
        let url = folder.appendingPathComponent("gop.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4", "-c:v", "libx264", "-g", "25",
                                         "-bf", "2", "-pix_fmt", "yuv420p", url.path])
        let asset = AVURLAsset(url: url)
        let source = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let composition = AVMutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .video, preferredTrackID: kCMPersistentTrackID_Invalid))
        for (start, length) in [(0.3, 1.2), (2.1, 0.9), (1.0, 1.7)] {
            try track.insertTimeRange(CMTimeRange(start: CMTimeMakeWithSeconds(start, preferredTimescale: 600), duration: CMTimeMakeWithSeconds(length, preferredTimescale: 600)),
                                      of: source, at: try await composition.load(.duration))
        }
        let session = try #require(AVAssetExportSession(asset: composition, presetName: AVAssetExportPresetPassthrough))
        let out = folder.appendingPathComponent("joined.mp4")
        try await session.export(to: out, as: .mp4)
        let shown = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                      "-of", "csv=p=0", out.path]).trimmingCharacters(in: .whitespacesAndNewlines)
        let joined = AVURLAsset(url: out)
        let reader = try AVAssetReader(asset: joined)
        let output = AVAssetReaderTrackOutput(track: try #require(try await joined.loadTracks(withMediaType: .video).first),
                                              outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
        reader.add(output)
        #expect(reader.startReading())
        var frames = 0
        while output.copyNextSampleBuffer() != nil { frames += 1 }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        // The joined file plays two edits (the first piece's, then the other two, contiguous in
        // its media), which GStreamer 1.22's demuxer showed 80 of 95 frames of: decode applies
        // such a list itself (gkvideotrim).
        #expect(String(frames) == shown, "read \(frames) frames; ffmpeg reads \(shown)")
    }
}
