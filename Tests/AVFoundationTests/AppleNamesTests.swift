import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// Names real AVFoundation code uses most that GraphKit lacked (tools/api-coverage), each as
/// Apple documents it: asynchronous loading's status, the old key-value status, the Swift
/// overlay's sample buffer and format description properties, a mutable composition's typed
/// tracks.
@Suite(.media, .timeLimit(.minutes(5))) struct AppleNamesTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func movie() throws -> URL {
        let url = folder.appendingPathComponent("movie.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=1", "-f", "lavfi",
                                         "-i", "sine=frequency=440:sample_rate=44100:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", url.path])
        return url
    }

    /// `status(of:)` is `.notYetLoaded` until a load, then `.loaded` with the value; a file that
    /// cannot be read is `.failed` with the error `load` threw. `statusOfValue(forKey:error:)`
    /// the same the old way, and `.failed` naming an unknown key.
    @Test func loadingStatusNewAndOld() async throws {
        let asset = AVURLAsset(url: try movie())
        guard case .notYetLoaded = asset.status(of: .duration) else { Issue.record("loaded before any load"); return }
        var error: NSError?
        #expect(asset.statusOfValue(forKey: "duration", error: &error) == .unknown && error == nil)
        _ = try await asset.load(.duration)
        guard case .loaded(let duration) = asset.status(of: .duration) else { Issue.record("not loaded after load"); return }
        #expect(abs(CMTimeGetSeconds(duration) - 1) < 0.05, "\(CMTimeGetSeconds(duration))")
        #expect(asset.statusOfValue(forKey: "duration", error: &error) == .loaded && error == nil)
        #expect(asset.statusOfValue(forKey: "tracks", error: &error) == .loaded)
        #expect(asset.statusOfValue(forKey: "noSuchKey", error: &error) == .failed)
        #expect(error?.localizedDescription.contains("noSuchKey") == true)

        let missing = AVURLAsset(url: folder.appendingPathComponent("missing.mp4"))
        await #expect(throws: (any Error).self) { try await missing.load(.duration) }
        guard case .failed = missing.status(of: .duration) else { Issue.record("a missing file is not .failed"); return }
        error = nil
        #expect(missing.statusOfValue(forKey: "duration", error: &error) == .failed && error != nil)
    }

    /// The Swift overlay's names on a sample buffer and its format description, read from a
    /// decoded frame and an AAC packet; `CMSampleBufferInvalidate` makes a buffer invalid once.
    @Test func sampleBufferOverlayProperties() async throws {
        let asset = AVURLAsset(url: try movie())
        let reader = try AVAssetReader(asset: asset)
        let video = AVAssetReaderTrackOutput(track: try #require(try await asset.loadTracks(withMediaType: .video).first),
                                             outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
        let audio = AVAssetReaderTrackOutput(track: try #require(try await asset.loadTracks(withMediaType: .audio).first), outputSettings: nil)
        reader.add(video)
        reader.add(audio)
        #expect(reader.startReading())
        let frame = try #require(video.copyNextSampleBuffer()), packet = try #require(audio.copyNextSampleBuffer())
        #expect(frame.presentationTimeStamp == CMSampleBufferGetPresentationTimeStamp(frame))
        #expect(frame.duration == CMTimeMake(value: 1, timescale: 25))
        #expect(frame.formatDescription?.mediaType == .video && frame.imageBuffer != nil)
        #expect(frame.formatDescription?.mediaSubType.rawValue == kCVPixelFormatType_32BGRA)
        #expect(packet.formatDescription?.mediaType == .audio && packet.formatDescription?.mediaSubType == .mpeg4AAC)
        #expect(packet.numSamples == 1 && packet.totalSampleSize == CMSampleBufferGetTotalSampleSize(packet) && packet.totalSampleSize > 0)
        #expect(frame.isValid && CMSampleBufferIsValid(frame))
        #expect(CMSampleBufferInvalidate(frame) == noErr)
        #expect(!frame.isValid && !CMSampleBufferIsValid(frame))
        #expect(CMSampleBufferInvalidate(frame) == kCMSampleBufferError_Invalidated)
        reader.cancelReading()
        // CoreVideo's option bits, as code spells them.
        let pixels = try #require(frame.imageBuffer)
        #expect(CVPixelBufferLockBaseAddress(pixels, CVPixelBufferLockFlags(rawValue: CVOptionFlags(0))) == kCVReturnSuccess)
        #expect(CVPixelBufferUnlockBaseAddress(pixels, CVPixelBufferLockFlags(rawValue: 0)) == kCVReturnSuccess)
    }

    /// A mutable composition's `tracks(withMediaType:)` and `track(withTrackID:)` give the
    /// `AVMutableCompositionTrack`s that were added, the same objects.
    @Test func aMutableCompositionsTracksAreMutable() throws {
        let composition = AVMutableComposition()
        let added = try #require(composition.addMutableTrack(withMediaType: .video, preferredTrackID: kCMPersistentTrackID_Invalid))
        _ = composition.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid)
        let videos: [AVMutableCompositionTrack] = composition.tracks(withMediaType: .video)
        #expect(videos.count == 1 && videos.first === added)
        let byID: AVMutableCompositionTrack? = composition.track(withTrackID: added.trackID)
        #expect(byID === added)
        #expect(composition.tracks(withMediaType: .audio).count == 1)
    }
}
