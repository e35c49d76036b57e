@testable @_spi(Engine) import Assets
import Foundation
import MediaContainers
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// Asset(path:): an MP4/MOV/M4A of H.264 and AAC is read from its own index, with what the
/// discoverer gave; other files, and MP4s the index reader declines, by the discoverer.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func make(_ name: String, _ arguments: [String]) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + arguments + ["-y", path])
        return path
    }

    static let movie = ["-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=2", "-f", "lavfi", "-i", "sine=sample_rate=44100:duration=2",
                        "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "1"]

    /// The index gives every property the discoverer gave: duration, tracks, their IDs and
    /// order, codec, decoded format, time range; and the index's own (transform, time scale).
    @Test func mp4ReadFromItsIndexAsTheDiscovererReadsIt() throws {
        // A quarter turn in the display matrix, as RotatedVideo writes it, on x264's High profile.
        let plain = try make("plain.mp4", Self.movie)
        let path = try make("rotated.mp4", RotatedVideo.ffmpegHasDisplayRotation ? ["-display_rotation:v:0", "90", "-i", plain, "-c", "copy"]
                                                                                 : ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=90"])
        let asset = try Asset(path: path)
        #expect(asset.prober == .index)
        let info = try MediaFileInfo(path: path)
        #expect(asset.duration == info.duration)
        #expect(asset.tracks.count == 2)
        for (track, stream) in zip(asset.tracks, info.streams) {
            #expect(track.trackID == stream.number && track.indexInType == stream.indexInKind)
            #expect(track.codec == stream.codec)
            #expect(track.stream.width == stream.width && track.stream.height == stream.height && track.stream.frameRate == stream.frameRate)
            #expect(track.stream.sampleRate == stream.sampleRate && track.stream.channels == stream.channels)
            #expect(track.timeRange == MediaTimeRange(start: .zero, duration: info.duration))
        }
        #expect(asset.tracks(withMediaType: .video).first?.format == .rawVideo(.init(pixelFormat: .bgra, width: 320, height: 240, frameRate: FrameRate(25, 1))))
        #expect(asset.tracks(withMediaType: .audio).first?.format == .pcm(.init(sampleRate: 44_100, channels: 1, sampleFormat: .s16le)))
        #expect(asset.tracks(withMediaType: .video).first?.preferredTransform.b != 0)
        #expect(asset.tracks(withMediaType: .video).first?.stream.storedFormat.hasPrefix("video/x-h264") == true)
        #expect(asset.tracks(withMediaType: .audio).first?.stream.storedFormat.contains("mpegversion=(int)4") == true)
    }

    /// The index states a video's colour as the discoverer does (its range as ffprobe does): from
    /// the `colr` box where there is one (MOV's `nclc`, MP4's `nclx` with its range), else from
    /// the SPS's VUI, with the bit depth and chroma format; nothing where the file states nothing.
    /// x264's own parameters state the colour in the SPS on every ffmpeg (7.1 writes no VUI colour
    /// from `-color_*` alone); those flags as well make ffmpeg 5's muxer write the `colr` box too.
    @Test(arguments: [
        ("none.mp4", ""),
        ("bt709.mp4", "colorprim=bt709:transfer=bt709:colormatrix=bt709"),
        ("hlg.mp4", "colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc"),
        ("pq-full.mp4", "colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:fullrange=on"),
        ("smpte170m.mov", "colorprim=smpte170m:transfer=smpte170m:colormatrix=smpte170m"),
        ("high10.mp4", "colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc"),
    ]) func colourReadFromTheIndexAsTheDiscovererReadsIt(_ name: String, _ colour: String) throws {
        var arguments = ["-pix_fmt", name.hasPrefix("high10") ? "yuv420p10le" : "yuv420p"]
        if !colour.isEmpty {
            let stated = Dictionary(uniqueKeysWithValues: colour.split(separator: ":").map { $0.split(separator: "=").map(String.init) }.map { ($0[0], $0[1]) })
            arguments += ["-x264-params", colour, "-color_primaries", stated["colorprim"]!, "-color_trc", stated["transfer"]!,
                          "-colorspace", stated["colormatrix"]!] + (stated["fullrange"] == "on" ? ["-color_range", "pc"] : [])
        }
        let path = try make(name, ["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=0.5", "-c:v", "libx264"] + arguments)
        let asset = try Asset(path: path)
        #expect(asset.prober == .index)
        let indexed = asset.tracks(withMediaType: .video).first?.stream.color
        var discovered = try MediaFileInfo(path: path).streams.first?.color
        // The range as ffprobe reads it: GStreamer 1.22 names a full-range BT.2100 stream by its
        // limited-range colorimetry (bt2100-pq), where the index keeps the file's full range.
        let range = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=color_range", "-of", "csv=p=0", path])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if discovered?.range != nil, range == "pc" || range == "tv" { discovered?.range = range }
        #expect(indexed == discovered, "index \(String(describing: indexed)), discoverer \(String(describing: discovered))")
        #expect((indexed?.transfer != nil) == !colour.isEmpty)
    }

    /// SPS bytes that claim anything (every length, every value) read as stated or not, never
    /// past their end: the colour facts of random and cut configurations do not trap.
    @Test func damagedParameterSetsReadAsUnstated() {
        var generator = SystemRandomNumberGenerator()
        let good: [UInt8] = [1, 0x64, 0, 0x0A, 0xFF, 0xE1, 0, 0x18, 0x67, 0x64, 0, 0x0A, 0xAC, 0xD9, 0x44, 0x26, 0xC0, 0x44, 0, 0, 3, 0, 4,
                             0, 0, 3, 0, 0xC8, 0x3C, 0x48, 0x96, 0x58, 0x01, 0, 0x06]
        for length in 0...good.count { _ = VideoColourFacts(h264EntryBody: [], avcC: Array(good.prefix(length))) }
        for _ in 0..<2000 {
            var bytes = good
            for _ in 0..<4 { bytes[Int.random(in: 8..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            let facts = VideoColourFacts(h264EntryBody: (0..<100).map { _ in UInt8.random(in: 0...255, using: &generator) }, avcC: bytes)
            #expect(facts.bitDepth.map { (8...14).contains($0) } ?? true)
        }
    }

    /// Other containers, a fragmented MP4 and an MP4 of another codec are the discoverer's;
    /// a cut-short MP4 is refused by it, naming the file (66).
    @Test func otherFilesAreTheDiscoverers() throws {
        let mkv = try make("b.mkv", Self.movie)
        #expect(try Asset(path: mkv).prober == .discoverer)
        let fragmented = try make("c.mp4", Self.movie + ["-movflags", "frag_keyframe+empty_moov"])
        let asset = try Asset(path: fragmented)
        #expect(asset.prober == .discoverer && asset.tracks.count == 2)
        let mpeg4 = try make("d.mp4", ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1", "-c:v", "mpeg4"])
        #expect(try Asset(path: mpeg4).prober == .discoverer)
        let whole = try Data(contentsOf: URL(fileURLWithPath: try make("e.mp4", Self.movie + ["-movflags", "+faststart"])))
        let cut = folder.appendingPathComponent("cut.mp4").path
        try whole.prefix(whole.count / 3).write(to: URL(fileURLWithPath: cut))
        do {
            let a = try Asset(path: cut)
            // GStreamer plays what it can of a file cut short: then the discoverer read it.
            #expect(a.prober == .discoverer)
        } catch {
            #expect(error.code == .inputUnreadable && error.message.contains(cut))
        }
        #expect(throws: GraphError.self) { try Asset(path: folder.appendingPathComponent("missing.mp4").path) }
    }

    /// Chapters ffmpeg writes are the asset's, each with its time range (to the next one's
    /// start, the last to the file's end) and title: an MP4's QuickTime chapter track (Nero's
    /// list left out), an MP3's ID3 chapters, a FLAC file's Vorbis comments.
    @Test(arguments: ["mp4", "mp3", "flac"]) func chaptersAreRead(_ ext: String) throws {
        let list = folder.appendingPathComponent("chapters.txt")
        try Data(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=500\ntitle=Opening\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=500\nEND=1000\ntitle=Deuxième partie\n".utf8)
            .write(to: list)
        let path: String
        switch ext {
        case "mp4":
            path = try make("chapters.mp4", ["-f", "lavfi", "-i", "sine=duration=1", "-i", list.path, "-map", "0", "-map_chapters", "1", "-c:a", "aac",
                                             "-movflags", "disable_chpl"])
        case "mp3":
            path = try make("chapters.mp3", ["-f", "lavfi", "-i", "sine=duration=1", "-i", list.path, "-map", "0", "-map_chapters", "1"])
        default:
            path = try make("chapters.flac", ["-f", "lavfi", "-i", "sine=duration=1", "-metadata", "CHAPTER001=00:00:00.000", "-metadata", "CHAPTER001NAME=Opening",
                                              "-metadata", "CHAPTER002=00:00:00.500", "-metadata", "CHAPTER002NAME=Deuxième partie"])
        }
        let asset = try Asset(path: path)
        #expect(asset.chapters.map(\.title) == ["Opening", "Deuxième partie"], "\(ext)")
        #expect(asset.chapters.map(\.start) == [.zero, MediaTime(seconds: 0.5)], "\(ext)")
        #expect(asset.chapters.first?.timeRange.end == MediaTime(seconds: 0.5), "\(ext)")
        // The last lasts to the end: the file's (an MP3's encoder padding makes it a little longer).
        let last = try #require(asset.chapters.last).timeRange.end.seconds
        #expect(abs(last - (ext == "flac" ? asset.duration.seconds : 1)) < 0.06, "\(ext): \(last) s of \(asset.duration.seconds) s")
        #expect(asset.chapterLanguage == nil)
    }
}
