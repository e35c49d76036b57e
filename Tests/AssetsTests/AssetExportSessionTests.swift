@testable import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// AssetExportSession on H.264 + AAC files ffmpeg makes: each preset's output as ffprobe sees
/// it, passthrough trims copied and not re-encoded, cancel, progress and the refusals.
@Suite(.media, .serialized, .timeLimit(.minutes(10))) struct AssetExportSessionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of `size` H.264 at 25 fps, a keyframe every 2 s exactly (no scene cuts), and a
    /// 44.1 kHz stereo AAC tone, tagged with a title.
    func source(_ name: String = "source.mp4", size: String = "1280x720", seconds: Int = 6) throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y",
                                         "-f", "lavfi", "-i", "testsrc2=s=\(size):r=25:d=\(seconds)",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=\(seconds)",
                                         "-ac", "2", "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-keyint_min", "50",
                                         "-sc_threshold", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k",
                                         "-metadata", "title=Source title", p])
        return p
    }

    func session(_ source: String, _ preset: ExportPreset, output: String) throws -> AssetExportSession {
        let session = try AssetExportSession(asset: try Asset(path: source), preset: preset)
        session.outputPath = path(output)
        return session
    }

    /// The frame md5s (`ffmpeg -f framemd5`) of a file's video, in presentation order, with each
    /// frame's time in seconds.
    func frameHashes(_ file: String) throws -> [(time: Double, md5: String)] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:v", "-f", "framemd5", "-"])
            .split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }.compactMap { line in
                let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                guard f.count == 6, let pts = Double(f[2]) else { return nil }
                return (pts / 25 * 1, f[5])  // framemd5's time base here is 1/25 (the stream's frame rate)
            }
    }

    @Test func resizingPresetsFitTheBoxKeepTheAspectAndTheTags() async throws {
        let src = try source(seconds: 3)
        let session = try session(src, .sd640x480, output: "small.mp4")
        #expect(session.outputFileType == .mp4)
        try await session.export()
        #expect(session.status == .completed)
        #expect(session.progress == 1)
        let probe = try MediaProbe(path("small.mp4"))
        #expect(probe.stream("video")?.codecName == "h264")
        // 1280x720 in a 640x480 box: 640x360, the aspect kept.
        #expect(probe.stream("video")?.width == 640)
        #expect(probe.stream("video")?.height == 360)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs(probe.duration - 3) < 0.1)
        // The source's tags by default.
        let title = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", path("small.mp4")])
        #expect(title.trimmingCharacters(in: .whitespacesAndNewlines) == "Source title")
    }

    /// The cover and the place go through a transcode (the asset's by default, or set), as
    /// ffprobe reads them; a cover set that is not a picture fails the export before anything
    /// is written.
    @Test func coverAndLocationSurviveATranscodeAndABadCoverIsRefused() async throws {
        let cover = path("cover.png")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=32x32:duration=1", "-frames:v", "1", "-y", cover])
        let src = try source(size: "320x240", seconds: 1)
        let tagged = try session(src, .appleM4A, output: "tagged.m4a")
        var tags = try Asset(path: src).metadata
        tags.location = "+48.8583+002.2945/"
        tags.artwork = MediaMetadata.Artwork(mimeType: "image/png", data: Array(try Data(contentsOf: URL(fileURLWithPath: cover))))
        tagged.metadata = tags
        try await tagged.export()
        let printed = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags:stream=codec_name:stream_disposition=attached_pic",
                                                        "-of", "default=nw=1", path("tagged.m4a")])
        for line in ["TAG:location=+48.8583+002.2945/", "TAG:title=Source title", "codec_name=png", "attached_pic=1"] {
            #expect(printed.contains(line), "\(line) not in \(printed)")
        }
        #expect(try Asset(path: path("tagged.m4a")).metadata.artwork?.data == tags.artwork?.data)

        let refused = try session(src, .appleM4A, output: "refused.m4a")
        var bad = MediaMetadata()
        bad.artwork = MediaMetadata.Artwork(mimeType: "image/png", data: Array("not a picture".utf8))
        refused.metadata = bad
        let error = await #expect(throws: GraphError.self) { try await refused.export() }
        #expect(error?.code == .usage && error?.description.contains("metadata.artwork") == true && error?.message.contains("not a JPEG or PNG") == true,
                "\(String(describing: error))")
        #expect(refused.status == .failed)
        #expect(!FileManager.default.fileExists(atPath: path("refused.m4a")))
    }

    @Test func aPresetNeverEnlargesAndTurnsItsBoxForPortrait() {
        #expect(ExportPreset.hd1280x720.settings(width: 640, height: 360, sampleRate: nil, channels: nil).video.map { [$0.width, $0.height] } == [640, 360])
        #expect(ExportPreset.hd1280x720.settings(width: 1080, height: 1920, sampleRate: nil, channels: nil).video.map { [$0.width, $0.height] } == [720, 1280])
        #expect(ExportPreset.hd1920x1080.settings(width: 3840, height: 2160, sampleRate: 96_000, channels: 6).video.map { [$0.width, $0.height] } == [1920, 1080])
        #expect(ExportPreset.hd1920x1080.settings(width: 3840, height: 2160, sampleRate: 96_000, channels: 6).audio == AudioSettings(sampleRate: 48_000, channels: 2, bitRate: 128_000))
        #expect(ExportPreset.highestQuality.settings(width: 1278, height: 718, sampleRate: nil, channels: nil).video.map { [$0.width, $0.height] } == [1278, 718])
        // The quality presets keep about their number of pixels: Apple's 224x128 for 16:9 at Low.
        let size = { (p: ExportPreset, w: Int, h: Int) in p.settings(width: w, height: h, sampleRate: nil, channels: nil).video.map { [$0.width, $0.height] } }
        #expect(size(.lowQuality, 1920, 1080) == [224, 128])
        #expect(size(.lowQuality, 640, 480) == [192, 144])
        #expect(size(.mediumQuality, 640, 480) == [480, 360])
        #expect(size(.mediumQuality, 1080, 1920) == [312, 552])
        #expect(size(.mediumQuality, 320, 240) == [320, 240], "never enlarged")
        #expect(size(.qhd960x540, 1920, 1080) == [960, 540] && size(.uhd3840x2160, 7680, 4320) == [3840, 2160])
        #expect(ExportPreset.lowQuality.settings(width: 640, height: 480, sampleRate: 44_100, channels: 2).audio?.bitRate == 64_000)
        for hevc in [ExportPreset.hevcHighestQuality, .hevc1920x1080, .hevc3840x2160] {
            #expect(hevc.settings(width: 640, height: 360, sampleRate: nil, channels: nil).video?.codec == .hevc, "\(hevc)")
        }
        #expect(ExportPreset.hd1920x1080.settings(width: 640, height: 360, sampleRate: nil, channels: nil).video?.codec == .h264)
    }

    @Test func appleM4AWritesTheSoundAloneAsAACInM4AWithTheRangeAndTags() async throws {
        let src = try source(size: "320x240", seconds: 4)
        let session = try session(src, .appleM4A, output: "sound.m4a")
        #expect(session.supportedFileTypes == [.m4a])
        session.timeRange = MediaTimeRange(start: MediaTime(seconds: 1), duration: MediaTime(seconds: 2))
        var tags = MediaMetadata()
        tags.title = "Exported"
        tags.artist = "GraphKit"
        session.metadata = tags
        try await session.export()
        let probe = try MediaProbe(path("sound.m4a"))
        #expect(probe.streams.map(\.codecType) == ["audio"])
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs((probe.stream("audio")?.duration ?? 0) - 2) < 0.03)
        let brand = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand,title,artist", "-of", "json", path("sound.m4a")])
        #expect(brand.contains("\"M4A \""))
        #expect(brand.contains("\"Exported\"") && brand.contains("\"GraphKit\""))
    }

    /// The samples from the key frame at or before the start (decoded, not shown), each track's
    /// edit list showing exactly the range: the pictures are the source's from 2.5 s to 5 s,
    /// decoded from the same packets (framemd5), and the sound is the source's to the sample.
    @Test func passthroughTrimCopiesFromTheKeyframeBeforeTheStartWithoutReencoding() async throws {
        let src = try source(size: "320x240", seconds: 8)
        let session = try session(src, .passthrough, output: "trim.mp4")
        // Keyframes at 0, 2, 4, 6 s: a start at 2.5 s copies from the keyframe at 2 s.
        session.timeRange = MediaTimeRange(start: MediaTime(seconds: 2.5), end: MediaTime(seconds: 5))
        try await session.export()
        #expect(session.progress == 1)
        let out = path("trim.mp4")
        let source = try frameHashes(src), copied = try frameHashes(out)
        let expected = source.filter { $0.time >= 2.5 - 0.001 && $0.time < 5 - 0.001 }.map(\.md5)
        // The same pictures, decoded from the same packets: copied, not encoded again.
        #expect(copied.map(\.md5) == expected)
        #expect(copied.count == 62)
        let packets = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags", "-of", "csv=p=0", out])
            .split(whereSeparator: \.isNewline)
        // Stored from the keyframe at 2 s: 12 frames before the start are decoded and not shown.
        #expect(packets.first?.hasPrefix("K") == true)
        #expect(packets.count == 75, "\(packets.count) packets")
        let probe = try MediaProbe(out)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs((probe.stream("audio")?.duration ?? 0) - 2.5) < 0.001)
        // The sound, decoded, is the source's from 2.5 s, to the sample.
        func pcm(_ file: String) throws -> [Int16] {
            let raw = path(URL(fileURLWithPath: file).lastPathComponent + ".raw")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", file, "-map", "0:a", "-ac", "1", "-f", "s16le", raw])
            return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        }
        let whole = try pcm(src), part = try pcm(out)
        let from = Int(2.5 * 44_100)
        #expect(abs(TestMedia.lag(of: part, against: Array(whole[from..<(from + part.count)]), within: 64)) <= 1)
    }

    /// HEVC and ALAC in a QuickTime file: a passthrough copies every track, whatever its codec, as
    /// AVFoundation's does (it used to leave the HEVC video out and exit 0): the same packets, the
    /// range trimmed. From a Matroska file, where the graph copies H.264 and AAC only, a track it
    /// would leave out is refused by name instead.
    @Test func passthroughCopiesEveryCodecOfAnMP4AndRefusesToDropOne() async throws {
        let src = path("hevc.mov")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=4",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=4",
                                         "-c:v", "libx265", "-x265-params", "log-level=error:keyint=25:min-keyint=25:scenecut=0", "-tag:v", "hvc1",
                                         "-c:a", "alac", src])
        let whole = try session(src, .passthrough, output: "whole.mov")
        try await whole.export()
        #expect(whole.status == .completed)
        let probe = try MediaProbe(path("whole.mov"))
        #expect(probe.stream("video")?.codecName == "hevc")
        #expect(probe.stream("audio")?.codecName == "alac")
        #expect(try frameHashes(path("whole.mov")).map(\.md5) == frameHashes(src).map(\.md5))

        let trim = try session(src, .passthrough, output: "trim.mp4")
        trim.timeRange = MediaTimeRange(start: MediaTime(seconds: 1), end: MediaTime(seconds: 3))
        try await trim.export()
        let copied = try frameHashes(path("trim.mp4")), source = try frameHashes(src)
        #expect(copied.map(\.md5) == source.filter { $0.time >= 1 - 0.001 && $0.time < 3 - 0.001 }.map(\.md5))
        #expect(try MediaProbe(path("trim.mp4")).stream("video")?.codecName == "hevc")

        let mkv = path("hevc.mkv")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", src, "-c:v", "copy", "-c:a", "aac", mkv])
        let refused = #expect(throws: GraphError.self) { try self.session(mkv, .passthrough, output: "mkv.mp4") }
        #expect(refused?.message.contains("would be left out") == true && refused?.message.contains("H.265") == true, "\(String(describing: refused))")
        #expect(!FileManager.default.fileExists(atPath: path("mkv.mp4")))
    }

    /// A phone's HDR10 video copied as stored, whole and a range: its colour (BT.2020, PQ, 10
    /// bits) and HDR metadata (mastering display, content light level) are what the copy says
    /// too, as AVFoundation keeps them on passthrough (issue 49).
    @Test func passthroughKeepsHDRColourAndMetadata() async throws {
        let src = path("hdr10.mov")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=3",
                                         "-c:v", "libx265", "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1",
                                         "-x265-params", "log-level=error:keyint=25:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:hdr10=1:"
                                         + "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400",
                                         "-color_primaries", "bt2020", "-color_trc", "smpte2084", "-colorspace", "bt2020nc", src])
        let stated = try #require(try MediaFileInfo(path: src).streams.first?.color)
        #expect(stated.hdr == .pq && stated.bitDepth == 10 && stated.masteringDisplay?.maxLuminance == 1000 && stated.contentLightLevel?.maxCLL == 1000)
        let whole = try session(src, .passthrough, output: "whole.mov")
        try await whole.export()
        let trim = try session(src, .passthrough, output: "trim.mp4")
        trim.timeRange = MediaTimeRange(start: MediaTime(seconds: 1), end: MediaTime(seconds: 2))
        try await trim.export()
        for name in ["whole.mov", "trim.mp4"] {
            #expect(try MediaFileInfo(path: path(name)).streams.first?.color == stated, "\(name)")
        }
    }

    /// With B-frames (shown in another order than stored, the first after the keyframe shown
    /// before it): the pictures of the range are still the source's, every one, none more.
    @Test func passthroughTrimOfBFramesShowsExactlyTheRange() async throws {
        let src = path("bframes.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=6", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:duration=6", "-c:v", "libx264", "-preset", "veryfast", "-bf", "3", "-g", "25",
                                         "-keyint_min", "25", "-sc_threshold", "0", "-c:a", "aac", src])
        let session = try session(src, .passthrough, output: "b.mp4")
        session.timeRange = MediaTimeRange(start: MediaTime(seconds: 1.62), end: MediaTime(seconds: 3.3))
        try await session.export()
        let source = try frameHashes(src), copied = try frameHashes(path("b.mp4"))
        #expect(copied.map(\.md5) == source.filter { $0.time >= 1.62 - 0.001 && $0.time < 3.3 - 0.001 }.map(\.md5))
        #expect(copied.count == 42)
    }

    /// `seconds` of `size` testsrc2 with a little noise (pictures whose detail is worth about the
    /// bits a preset gives them, so that an encoder's rate control lands near its target: on a
    /// clean picture it spends less, on heavy noise more), 25 fps, 2 s GOP, and 44.1 kHz stereo
    /// pink noise as AAC.
    func noisySource(_ name: String, size: String, seconds: Int) throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size):r=25:d=\(seconds),noise=alls=2:allf=t",
                                         "-f", "lavfi", "-i", "anoisesrc=color=pink:sample_rate=44100:duration=\(seconds)",
                                         "-ac", "2", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "26", "-g", "50",
                                         "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "192k", p])
        return p
    }

    /// Each preset's promise, as ffprobe reads the file: H.264 at the size it fits the source in
    /// (never enlarged), AAC at 128 kbit/s, as long as the source, and the video at the bit
    /// rate `encode.h264` picks for the size (10.1 bits per pixel from 640x480, 4.05 below).
    /// Bit rates within 20 % (x264's average bit rate over 4 s lands near its target, not on
    /// it: ffmpeg's libx264 at the same settings was 3-8 % over on this picture); the duration
    /// within a frame.
    @Test(arguments: [(ExportPreset.highestQuality, "640x360", 640, 360), (.hd1920x1080, "2560x1440", 1920, 1080), (.hd1280x720, "1920x1080", 1280, 720)])
    func presetsWriteTheSizeCodecsDurationAndBitRatesTheyPromise(_ preset: ExportPreset, _ size: String, _ width: Int, _ height: Int) async throws {
        let src = try noisySource("noisy-\(size).mp4", size: size, seconds: 4)
        let session = try session(src, preset, output: "\(width)x\(height).mp4")
        try await session.export()
        let probe = try MediaProbe(path("\(width)x\(height).mp4"))
        let video = try #require(probe.stream("video")), audio = try #require(probe.stream("audio"))
        #expect(video.codecName == "h264" && video.width == width && video.height == height)
        #expect(audio.codecName == "aac" && audio.sampleRate == 44_100 && audio.channels == 2)
        #expect(abs(probe.duration - 4) < 0.04 && abs((video.duration ?? 0) - 4) < 0.04, "\(probe.duration) s")
        let promised = Double(width * height) * (width * height >= 640 * 480 ? 10.1 : 4.05)
        let videoRate = Double(try #require(video.bitRate)), audioRate = Double(try #require(audio.bitRate))
        #expect(abs(videoRate / promised - 1) < 0.2, "video at \(videoRate) bit/s, \(promised) promised")
        #expect(abs(audioRate / 128_000 - 1) < 0.2, "audio at \(audioRate) bit/s, 128000 promised")
    }

    /// `shouldOptimizeForNetworkUse` puts the index before the media, false (the default) after
    /// it: in a passthrough (by the container library) and a re-encode (by a graph), of the whole
    /// file and of a range, and each file plays to its end.
    @Test func theIndexGoesWhereShouldOptimizeForNetworkUseSays() async throws {
        let src = try source(size: "320x240", seconds: 4)
        for preset in [ExportPreset.passthrough, .sd640x480] {
            for ranged in [false, true] {
                for first in [false, true] {
                    let name = "\(preset == .passthrough ? "copy" : "encode")-\(ranged ? "range" : "whole")-\(first ? "first" : "last").mp4"
                    let session = try session(src, preset, output: name)
                    #expect(!session.shouldOptimizeForNetworkUse)  // AVFoundation's default
                    session.shouldOptimizeForNetworkUse = first
                    if ranged { session.timeRange = MediaTimeRange(start: MediaTime(seconds: 1), duration: MediaTime(seconds: 2)) }
                    try await session.export()
                    let boxes = MediaProbe.boxes(path(name))
                    let (moov, mdat) = (try #require(boxes.firstIndex(of: "moov")), try #require(boxes.firstIndex(of: "mdat")))
                    #expect(first ? moov < mdat : mdat < moov, "\(name): \(boxes)")
                    #expect(abs(try MediaProbe(path(name)).duration - (ranged ? 2 : 4)) < 0.05, "\(name)")
                    try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", path(name), "-f", "null", "-"])
                }
            }
        }
    }

    /// A passthrough of an MP4 asked for as `.mov` is a QuickTime file (its brand `qt  `, not the
    /// source's), with the source's packets; tags set replace the source's; a length limit ends a
    /// complete file within it, every packet there one of the source's.
    @Test func aPassthroughWritesTheFileTypeTagsAndLimitAsked() async throws {
        let src = try source(size: "320x240", seconds: 6)
        let mov = try session(src, .passthrough, output: "copy.mov")
        mov.outputFileType = .mov
        var tags = MediaMetadata()
        tags.title = "Copied"
        mov.metadata = tags
        try await mov.export()
        let format = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand,compatible_brands,title", "-of", "default=nw=1", path("copy.mov")])
        #expect(format.contains("TAG:major_brand=qt  ") && format.contains("TAG:compatible_brands=qt  ") && format.contains("TAG:title=Copied"), "\(format)")
        let packets = { (file: String) in try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=size,data_hash",
                                                                            "-show_data_hash", "md5", "-of", "csv=p=0", file]) }
        #expect(try packets(path("copy.mov")) == (try packets(src)))
        // Before: the source's brand, whatever was asked.
        let mp4 = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand", "-of", "csv=p=0", src])
        #expect(mp4.trimmingCharacters(in: .whitespacesAndNewlines) == "isom")

        let whole = (try FileManager.default.attributesOfItem(atPath: src)[.size] as? Int) ?? 0
        let limited = try session(src, .passthrough, output: "limited.mp4")
        limited.fileLengthLimit = Int64(whole / 2)
        try await limited.export()
        let size = (try FileManager.default.attributesOfItem(atPath: path("limited.mp4"))[.size] as? Int) ?? .max
        #expect(size <= whole / 2 && size > whole / 3, "\(size) bytes of \(whole)")
        let kept = try packets(path("limited.mp4")), all = try packets(src)
        #expect(!kept.isEmpty && all.hasPrefix(kept))
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", path("limited.mp4"), "-f", "null", "-"])
        let tiny = try session(src, .passthrough, output: "tiny.mp4")
        tiny.fileLengthLimit = 1_000
        let refused = await #expect(throws: GraphError.self) { try await tiny.export() }
        #expect(refused?.problems.first?.location == "fileLengthLimit", "\(String(describing: refused))")
        #expect(!FileManager.default.fileExists(atPath: path("tiny.mp4")))
    }

    /// Exports 60 s of 640x360 into a folder of its own (`range`, when given), ended by `cancel`
    /// once it has written some (``expectCancelledMidExport(_:leaving:_:)``).
    func cancelMidExport(range: MediaTimeRange? = nil, _ cancel: @escaping @Sendable (AssetExportSession, Task<Void, any Error>) -> Void) async throws {
        let src = try source(size: "640x360", seconds: 60)
        let outputs = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: outputs) }
        let session = try AssetExportSession(asset: try Asset(path: src), preset: .highestQuality)
        session.outputPath = outputs.appendingPathComponent("cancelled.mp4").path
        if let range { session.timeRange = range }
        try await expectCancelledMidExport(session, leaving: outputs, cancel)
    }

    @Test func cancelMidExportLeavesNothingAndWakesTheExport() async throws {
        try await cancelMidExport { session, _ in session.cancelExport() }
    }

    @Test func cancellingTheAwaitingTaskCancelsTheExport() async throws {
        // A range, so that the export starts with a seek (a blocking start that must wake too).
        try await cancelMidExport(range: MediaTimeRange(start: MediaTime(seconds: 3), duration: MediaTime(seconds: 50))) { _, task in task.cancel() }
    }

    /// The progress, read every millisecond from a thread of its own while the export runs
    /// (not a task on the cooperative pool, which other tests' blocking calls can hold for the
    /// whole export), rises and never falls, ends at 1, and is seen on the way; `states()`
    /// gives the same, as it changes.
    @Test func progressRisesMonotonicallyToOne() async throws {
        let src = try source(size: "640x360", seconds: 12)
        let session = try session(src, .sd640x480, output: "progress.mp4")
        #expect(session.progress == 0)
        let done = Atomic(false)
        let reader = TestThread("progress") { () -> [Double] in
            var seen: [Double] = []
            while !done.load(ordering: .acquiring) {
                if session.status == .exporting { seen.append(session.progress) }
                usleep(1_000)
            }
            return seen
        }
        let states = Guarded<[Double]>([])
        let watcher = Task {
            for await state in session.states(updateInterval: .milliseconds(20)) {
                if case .exporting(let p) = state { states.withLock { $0.append(p) } }
            }
        }
        try await session.export()
        done.store(true, ordering: .releasing)
        let values = await reader.join() + [session.progress]
        await watcher.value
        // Seen on the way, not only at the end.
        #expect(values.contains { $0 > 0 && $0 < 1 })
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(values.last == 1)
        let given = states.withLock { $0 }
        #expect(zip(given, given.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func fileLengthLimitEndsACompletePlayableFileWithinIt() async throws {
        let src = try source(size: "640x360", seconds: 10)
        let session = try session(src, .highestQuality, output: "limited.mp4")
        let full = (try FileManager.default.attributesOfItem(atPath: src)[.size] as? Int) ?? 0
        session.fileLengthLimit = Int64(full / 3)
        try await session.export()
        let size = (try FileManager.default.attributesOfItem(atPath: path("limited.mp4"))[.size] as? Int) ?? .max
        #expect(size <= full / 3, "\(size) bytes, limit \(full / 3)")
        let probe = try MediaProbe(path("limited.mp4"))
        #expect(probe.duration > 1 && probe.duration < 9, "\(probe.duration) s in \(size) bytes (limit \(full / 3)): \(probe)")
        // Decodes to the end without an error: complete.
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", path("limited.mp4"), "-f", "null", "-"])
    }

    @Test func badRangesAndOutputsAreRefusedNamingTheThing() async throws {
        let src = try source(size: "320x240", seconds: 2)
        func refusal(_ configure: (AssetExportSession) throws -> Void) async throws -> GraphError? {
            let session = try AssetExportSession(asset: try Asset(path: src), preset: .passthrough)
            session.outputPath = path("refused.mp4")
            try configure(session)
            do {
                try await session.export()
                return nil
            } catch {
                #expect(session.status == .failed)
                #expect(session.error == error)
                return error
            }
        }
        let beyond = try await refusal { $0.timeRange = MediaTimeRange(start: MediaTime(seconds: 5), duration: MediaTime(seconds: 1)) }
        #expect(beyond?.problems.first?.location == "timeRange")
        #expect(beyond?.message.contains("past the end") == true)
        let empty = try await refusal { $0.timeRange = MediaTimeRange(start: MediaTime(seconds: 1), duration: .zero) }
        #expect(empty?.message.contains("empty") == true)
        #expect(FileManager.default.createFile(atPath: path("exists.mp4"), contents: Data("mine".utf8)))
        let exists = try await refusal { $0.outputPath = path("exists.mp4") }
        #expect(exists?.code == .outputUnwritable)
        #expect(exists?.problems.first?.location == path("exists.mp4"))
        #expect(try String(contentsOfFile: path("exists.mp4"), encoding: .utf8) == "mine")
        // A folder that is a file: the output cannot be made.
        let unwritable = try await refusal { $0.outputPath = path("exists.mp4") + "/out.mp4" }
        #expect(unwritable?.code == .outputUnwritable)
        #expect(unwritable?.message.contains("exists.mp4") == true)
        let m4a = try await refusal { $0.outputFileType = .m4a }
        #expect(m4a?.problems.first?.location == "outputFileType")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["exists.mp4", "source.mp4"])
        // A video preset on sound alone.
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", path("sound.m4a")])
        let sound = try Asset(path: path("sound.m4a"))
        #expect(ExportPreset.presets(compatibleWith: sound) == [.passthrough, .appleM4A])
        #expect(throws: GraphError.self) { try AssetExportSession(asset: sound, preset: .hd1280x720) }
    }
}
