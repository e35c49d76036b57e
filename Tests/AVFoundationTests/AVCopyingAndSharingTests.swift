import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// NSCopying as AVFoundation's assets give it (an asset is itself; a mutable composition's copy is
/// a snapshot), and an export's metadata filter for sharing.
@Suite(.media, .timeLimit(.minutes(5))) struct AVCopyingAndSharingTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    @Test func aCompositionsCopyIsWhatItHeldThen() async throws {
        let url = folder.appendingPathComponent("tone.wav")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "pcm_s16le", "-y", url.path])
        let asset = AVURLAsset(url: url)
        #expect(asset.copy() as? AVURLAsset === asset, "an asset is immutable: its copy is itself")
        let source = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        let composition = AVMutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid))
        let half = CMTime(value: 1, timescale: 2)
        try track.insertTimeRange(CMTimeRange(start: .zero, duration: half), of: source, at: .zero)
        let snapshot = try #require(composition.copy() as? AVComposition)
        #expect(!(snapshot is AVMutableComposition))
        let editable = try #require(composition.mutableCopy() as? AVMutableComposition)
        try track.insertTimeRange(CMTimeRange(start: .zero, duration: half), of: source, at: half)
        #expect(try await composition.load(.duration) == CMTime(value: 1, timescale: 1))
        #expect(try await snapshot.load(.duration) == half, "the copy holds what the composition held when it was made")
        #expect(try await editable.load(.duration) == half)
        editable.removeTimeRange(CMTimeRange(start: .zero, duration: CMTime(value: 1, timescale: 4)))
        #expect(try await editable.load(.duration) == CMTime(value: 1, timescale: 4))
        #expect(try await composition.load(.duration) == CMTime(value: 1, timescale: 1), "editing the mutable copy leaves the original")
    }

    /// `AVMetadataItemFilter.forSharing()` leaves the place a recording was made out of the
    /// exported file and keeps its title.
    @Test func theSharingFilterLeavesTheLocationOut() async throws {
        let url = folder.appendingPathComponent("where.mov")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                         "-metadata", "title=Holiday", "-metadata", "location=+48.8577+002.2950/", "-y", url.path])
        func tags(_ path: String) throws -> String {
            try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "default=nw=1", path])
        }
        #expect(try tags(url.path).contains("location=+48.8577+002.2950/"), "the source states where it was made")
        // QuickTime's ©xyz, as ffmpeg's MOV muxer and Android phones write the place.
        for (name, filter) in [("kept.mov", nil), ("shared.mov", AVMetadataItemFilter.forSharing())] {
            let session = try #require(AVAssetExportSession(asset: AVURLAsset(url: url), presetName: AVAssetExportPresetPassthrough))
            session.outputURL = folder.appendingPathComponent(name)
            session.outputFileType = .mov
            session.metadataItemFilter = filter
            await session.export()
            #expect(session.status == .completed, "\(String(describing: session.error))")
            let written = try tags(folder.appendingPathComponent(name).path)
            #expect(written.contains("title=Holiday"), "\(written)")
            #expect(written.contains("location=") == (filter == nil), "\(name): \(written)")
        }
    }
}
