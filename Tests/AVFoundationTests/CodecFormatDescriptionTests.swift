import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Format descriptions of the codecs past H.264 and AAC, read from files ffmpeg makes: each
/// track's media type and subtype are CoreMedia's codes, video its size, audio its rate and
/// channels.
@Suite(.media, .timeLimit(.minutes(10))) struct CodecFormatDescriptionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    @Test(arguments: [("hevc.mp4", ["-c:v", "libx265", "-tag:v", "hvc1", "-x265-params", "log-level=error"], ["-c:a", "libopus"], "hvc1", "opus"),
                      ("vp9.mp4", ["-c:v", "libvpx-vp9", "-deadline", "realtime"], ["-c:a", "alac"], "vp09", "alac"),
                      ("av1.mkv", ["-c:v", "libaom-av1", "-cpu-used", "8", "-row-mt", "1"], ["-c:a", "flac"], "av01", "flac")])
    func codecsHaveCoreMediasCodes(_ name: String, _ video: [String], _ audio: [String], _ videoCode: String, _ audioCode: String) async throws {
        let url = folder.appendingPathComponent(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=10:d=0.5",
                                         "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=0.5", "-ac", "2", "-pix_fmt", "yuv420p"]
                                        + video + audio + [url.path])
        let asset = AVURLAsset(url: url)
        let v = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let a = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        let vd = try #require(try await v.load(.formatDescriptions).first)
        let ad = try #require(try await a.load(.formatDescriptions).first)
        #expect(CMFormatDescriptionGetMediaType(vd) == kCMMediaType_Video && CMFormatDescriptionGetMediaSubType(vd).fourCharacters == videoCode)
        #expect(CMVideoFormatDescriptionGetDimensions(vd) == CMVideoDimensions(width: 160, height: 120))
        #expect(CMFormatDescriptionGetMediaType(ad) == kCMMediaType_Audio && CMFormatDescriptionGetMediaSubType(ad).fourCharacters == audioCode)
        let asbd = try #require(CMAudioFormatDescriptionGetStreamBasicDescription(ad)?.pointee)
        #expect(asbd.mFormatID == CMFormatDescriptionGetMediaSubType(ad) && asbd.mSampleRate == 48_000 && asbd.mChannelsPerFrame == 2)
        // The Swift properties say the same as the functions.
        #expect(vd.dimensions == CMVideoDimensions(width: 160, height: 120) && ad.dimensions == CMVideoDimensions())
        #expect(ad.audioStreamBasicDescription?.mSampleRate == 48_000 && ad.audioStreamBasicDescription?.mFormatID == asbd.mFormatID)
        #expect(vd.audioStreamBasicDescription == nil)
        // Tracks by characteristic, and by media type with a completion handler.
        #expect(asset.tracks(withMediaCharacteristic: .visual).map(\.trackID) == [v.trackID])
        #expect(try await asset.loadTracks(withMediaCharacteristic: .audible).map(\.trackID) == [a.trackID])
        let viaHandler: [CMPersistentTrackID] = try await withCheckedThrowingContinuation { done in
            asset.loadTracks(withMediaType: .audio) { tracks, error in
                if let tracks { done.resume(returning: tracks.map(\.trackID)) } else { done.resume(throwing: error ?? CocoaError(.fileReadUnknown)) }
            }
        }
        #expect(viaHandler == [a.trackID])
    }
}
