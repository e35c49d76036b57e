import AVFoundation
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// AVAssetExportSession as AVFoundation code uses it: Apple's preset names, the completion
/// handler, status and error (AVError codes), the modern export(to:as:) and states.
@Suite(.media, .serialized, .timeLimit(.minutes(10))) struct AVAssetExportSessionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 4 s of 640x360 H.264 (a keyframe every 2 s) and stereo AAC.
    func source(seconds: Int = 4) throws -> URL {
        let url = folder.appendingPathComponent("source.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=\(seconds)",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)", "-ac", "2",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-sc_threshold", "0", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", url.path])
        return url
    }

    @Test func presetsAreApplesNamesAndCompatibility() throws {
        #expect(AVAssetExportPresetPassthrough == "AVAssetExportPresetPassthrough")
        #expect(AVAssetExportPreset1280x720 == "AVAssetExportPreset1280x720")
        #expect(AVAssetExportPresetAppleM4A == "AVAssetExportPresetAppleM4A")
        let asset = AVURLAsset(url: try source())
        #expect(AVAssetExportSession.exportPresets(compatibleWith: asset) == AVAssetExportSession.allExportPresets())
        #expect(AVAssetExportSession(asset: asset, presetName: "AVAssetExportPresetNoSuchThing") == nil)
        let m4a = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetAppleM4A))
        #expect(m4a.supportedFileTypes == [.m4a])
        let video = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPreset640x480))
        #expect(video.supportedFileTypes == [.mp4, .mov])
    }

    /// The presets past the first six, by Apple's names, through Apple's asynchronous calls
    /// (`compatibility(ofExportPreset:…)`, `export()`): MediumQuality as H.264 at Apple's 568×320
    /// class of size for 16:9 (here 552×312: about 480×360's pixels), HEVC1920x1080 as HEVC at the
    /// source's size (never enlarged), written as `hvc1`; an export that fails says so in
    /// `status` and `error`, as `export()` itself does not throw.
    @Test func mediumQualityAndHEVCPresetsThroughTheAsyncCalls() async throws {
        let asset = AVURLAsset(url: try source(seconds: 2))
        for name in [AVAssetExportPresetMediumQuality, AVAssetExportPresetLowQuality, AVAssetExportPreset960x540, AVAssetExportPreset3840x2160,
                     AVAssetExportPresetHEVCHighestQuality, AVAssetExportPresetHEVC1920x1080, AVAssetExportPresetHEVC3840x2160] {
            #expect(await AVAssetExportSession.compatibility(ofExportPreset: name, with: asset, outputFileType: .mp4), "\(name)")
            #expect(!(await AVAssetExportSession.compatibility(ofExportPreset: name, with: asset, outputFileType: .m4a)), "\(name)")
        }
        #expect(!(await AVAssetExportSession.compatibility(ofExportPreset: "AVAssetExportPresetNoSuchThing", with: asset, outputFileType: nil)))
        for (name, codec, tag, size) in [(AVAssetExportPresetMediumQuality, "h264", "avc1", "552x312"), (AVAssetExportPresetHEVC1920x1080, "hevc", "hvc1", "640x360")] {
            let session = try #require(AVAssetExportSession(asset: asset, presetName: name))
            let out = folder.appendingPathComponent("\(codec).mp4")
            session.outputURL = out
            session.outputFileType = .mp4
            await session.export()
            #expect(session.status == .completed, "\(name): \(String(describing: session.error))")
            let probe = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_name,codec_tag_string,width,height",
                                                          "-of", "csv=p=0", out.path])
            let w = size.split(separator: "x")
            #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "\(codec),\(tag),\(w[0]),\(w[1])", "\(name): \(probe)")
        }
        let failing = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetLowQuality))
        failing.outputURL = folder.appendingPathComponent("missing/low.mp4")
        failing.outputFileType = .mp4
        await failing.export()
        #expect(failing.status == .failed && failing.error != nil)
    }

    @Test func exportAsynchronouslyCompletesAndCallsTheHandler() async throws {
        let asset = AVURLAsset(url: try source())
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPreset640x480))
        let out = folder.appendingPathComponent("out.mov")
        session.outputURL = out
        session.outputFileType = .mov
        session.timeRange = CMTimeRange(start: CMTime(value: 1, timescale: 1), duration: CMTime(value: 2, timescale: 1))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            session.exportAsynchronously { done.resume() }
        }
        #expect(session.status == .completed)
        #expect(session.error == nil)
        #expect(session.progress == 1)
        let probe = try MediaProbe(out.path)
        #expect(probe.formatName.contains("mov"))
        #expect(probe.stream("video")?.width == 640 && probe.stream("video")?.height == 360)
        #expect(abs(probe.duration - 2) < 0.1)
    }

    @Test func anExistingOutputIsApplesFileAlreadyExists() async throws {
        let asset = AVURLAsset(url: try source())
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetPassthrough))
        let out = folder.appendingPathComponent("taken.mp4")
        #expect(FileManager.default.createFile(atPath: out.path, contents: Data("mine".utf8)))
        await #expect(throws: (any Error).self) { try await session.export(to: out, as: .mp4) }
        #expect(session.status == .failed)
        let error = try #require(session.error as NSError?)
        #expect(error.domain == AVFoundationErrorDomain)
        #expect(error.code == AVErrorCode.fileAlreadyExists.rawValue)
        #expect(error.localizedDescription.contains("taken.mp4"))
        #expect(try String(contentsOf: out, encoding: .utf8) == "mine")
    }

    /// An export into a folder that is not there fails as Apple's does, and makes no folder.
    @Test func aMissingFolderFailsTheExport() async throws {
        let asset = AVURLAsset(url: try source())
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetPassthrough))
        let out = folder.appendingPathComponent("missing/out.mp4")
        await #expect(throws: (any Error).self) { try await session.export(to: out, as: .mp4) }
        #expect(session.status == .failed)
        let error = try #require(session.error as NSError?)
        #expect(error.domain == AVFoundationErrorDomain && error.code == AVErrorCode.unknown.rawValue)
        #expect(error.localizedDescription.contains("missing"), "\(error.localizedDescription)")
        #expect(!FileManager.default.fileExists(atPath: out.deletingLastPathComponent().path))
    }

    @Test func cancelExportLeavesNothingAndStatesEnd() async throws {
        let asset = AVURLAsset(url: try source(seconds: 30))
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality))
        let outputs = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: outputs) }
        let exporting = Task { try await session.export(to: outputs.appendingPathComponent("gone.mp4"), as: .mp4) }
        let cancelled = await watchFromThread("canceller") { () -> Bool? in
            switch session.status {
            case .exporting:
                session.cancelExport()
                return true
            case .completed, .failed, .cancelled: return false
            default: return nil
            }
        }
        #expect(cancelled, "the export ended before it could be cancelled")
        await #expect(throws: CancellationError.self) { try await exporting.value }
        #expect(session.status == .cancelled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outputs.path) == [])
    }
}
