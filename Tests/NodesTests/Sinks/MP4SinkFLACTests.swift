import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.mp4` with FLAC (``MP4FLAC``, `gkmp4flac`): ffmpeg reads a `fLaC` track, decodes the
/// input's samples bit for bit and count for count, with and without video; STREAMINFO holds the
/// encoder's final sample count and MD5; a FLAC file remuxed keeps its frames; QuickTime and
/// fragmented files refuse FLAC, naming the file, and leave nothing.
@Suite(.media, .timeLimit(.minutes(10))) struct MP4SinkFLACTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The sound track's sample entry and the header its `dfLa` holds, by GraphKit's reader.
    static func flacEntry(_ path: String) throws -> (entry: MP4Box, header: FLACStreamHeader) {
        let bytes = try #require(FileBytes(path: path))
        let movie = try #require(try MP4File(bytes).movie())
        let entry = try #require(movie.tracks(handler: "soun").first?.track.box.find(["mdia", "minf", "stbl", "stsd"])?.children.first)
        #expect(entry.type == "fLaC")
        let body = entry.body
        let dfLa = try #require(try MP4Box.parse(body[28...]).first { $0.type == "dfLa" })
        var native = Array("fLaC".utf8)
        native += dfLa.body.dropFirst(4)  // the full box's version and flags
        return (entry, try FLACStreamHeader(native: native))
    }

    /// ffmpeg's MD5 of a WAV's samples: what FLAC's STREAMINFO holds for 16-bit audio.
    static func md5(ofSamplesIn wav: String) throws -> [UInt8] {
        let text = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", wav, "-c:a", "pcm_s16le", "-f", "md5", "-"])
        let hex = Array(text.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("MD5=".count))
        return stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(hex[$0...$0 + 1]), radix: 16) }
    }

    /// ffprobe's stream duration in its time base (the sample rate for this track).
    static func durationInSamples(_ path: String) throws -> Int? {
        Int(try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path])
            .trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// encode.flac → sink.mp4 (and .m4a): ffprobe names FLAC (`fLaC`) at the input's rate and
    /// channels; ffmpeg decodes the input's samples exactly (an odd count, not a whole block), and
    /// the stream lasts exactly that many; STREAMINFO has the count and the input's MD5, which
    /// the encoder wrote at the end; the entry states the channels and bits.
    @Test(arguments: [(1, "mono.m4a"), (2, "stereo.mp4"), (6, "surround.mp4")])
    func encodedFLACDecodesBitExact(channels: Int, name: String) throws {
        let wav = path("noise.wav"), out = path(name)
        let count = 44_100 + 777
        try EncodedMediaChecks.writeNoise(wav, channels: channels, sampleRate: 44_100, samples: count)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.flac", path: out)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(out, "a")
        #expect(facts["codec_name"] == "flac" && facts["codec_tag_string"] == "fLaC", "\(facts)")
        #expect(facts["sample_rate"] == "44100" && facts["channels"] == "\(channels)" && facts["bits_per_raw_sample"] == "16", "\(facts)")
        let input = try EncodedMediaChecks.decode(wav, channels: channels), decoded = try EncodedMediaChecks.decode(out, channels: channels)
        #expect(input.count == count * channels)
        #expect(decoded.count == input.count, "\(decoded.count / channels) samples for \(count)")
        #expect(decoded == input)
        #expect(try Self.durationInSamples(out) == count)
        let (entry, header) = try Self.flacEntry(out)
        #expect(header.totalSamples == UInt64(count) && header.sampleRate == 44_100 && header.channels == channels)
        #expect(header.md5 == (try Self.md5(ofSamplesIn: wav)), "STREAMINFO's MD5 is not the input's")
        let body = entry.body
        #expect(Int(body[17]) == channels && Int(body[19]) == 16)
        if name.hasSuffix(".m4a") { #expect(try brand(out) == "M4A ") }
    }

    /// The file's major brand.
    func brand(_ path: String) throws -> String {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(12))
        return String(decoding: bytes[8..<12], as: UTF8.self)
    }

    /// FLAC beside H.264: both tracks whole (every frame, every sample, bit-exact), the index
    /// first (faststart), and the sound interleaved with the video in the media data, as the
    /// muxer writes any two tracks.
    @Test func withVideoBothTracksAreWholeAndInterleaved() throws {
        let wav = path("noise.wav"), out = path("movie.mp4")
        let count = 2 * 48_000
        try EncodedMediaChecks.writeNoise(wav, channels: 2, sampleRate: 48_000, samples: count)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
              "flac": { "type": "encode.flac" },
              "cam": { "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 2, "live": false, "pattern": "ball" } },
              "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> flac.in", "flac.out -> file.audio", "cam.out -> h264.in", "h264.out -> file.video" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let report = run.wait()
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.codecName == "h264" && probe.stream("video")?.frameCount == 60)
        #expect(probe.stream("audio")?.codecName == "flac")
        #expect(try EncodedMediaChecks.decode(out, channels: 2) == EncodedMediaChecks.decode(wav, channels: 2))
        #expect(try Self.durationInSamples(out) == count)
        let boxes = probe.topLevelBoxes
        let moov = try #require(boxes.firstIndex(of: "moov")), mdat = try #require(boxes.firstIndex(of: "mdat"))
        #expect(moov < mdat)
        // In file order, the packets change stream many times (not all of one, then the other).
        let order = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "packet=stream_index,pos", "-of", "csv=p=0", out])
            .split(separator: "\n").compactMap { line -> (Int, Int)? in
                let f = line.split(separator: ",")
                guard f.count == 2, let s = Int(f[0]), let p = Int(f[1]) else { return nil }
                return (p, s)
            }.sorted { $0.0 < $1.0 }.map(\.1)
        let switches = zip(order, order.dropFirst()).filter { $0 != $1 }.count
        #expect(switches >= 4, "\(switches) changes of track in the media data")
    }

    /// A FLAC file (ffmpeg's) remuxed into an MP4: the same frames, the same decoded samples, and
    /// STREAMINFO's MD5 as the file had it.
    @Test func aFLACFileRemuxedKeepsItsFramesAndMD5() throws {
        let input = try RemuxChecks.Source.flac.make(in: folder)
        let out = path("remuxed.mp4")
        let report = try RemuxChecks.run(input, into: "sink.mp4", at: out, ports: ["audio"])
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        #expect(try RemuxChecks.packets(out, "a") == RemuxChecks.packets(input, "a"))
        let (md5, samples) = try RemuxChecks.audio(input)
        let remuxed = try RemuxChecks.audio(out)
        #expect(samples == 88_200 && remuxed.samples == samples, "\(remuxed.samples) samples of \(samples)")
        #expect(remuxed.md5 == md5)
        let source = try FLACStreamHeader(native: [UInt8](try Data(contentsOf: URL(fileURLWithPath: input))))
        #expect(try Self.flacEntry(out).header.md5 == source.md5)
        #expect(source.md5.contains { $0 != 0 })
    }

    /// FLAC into a QuickTime file or a fragmented MP4 fails the run, saying why and naming the
    /// file, and nothing is left in the folder (the fragmented file, written under its name, is
    /// removed too: it was refused, not cut short).
    @Test(arguments: [("out.mov", ""), ("out.mp4", #", "fragmentInterval": 1"#)])
    func quickTimeAndFragmentsRefuseFLAC(name: String, params: String) throws {
        let wav = path("tone.wav"), out = path("out/\(name)")
        try EncodedMediaChecks.writeTones(wav, frequencies: [440], sampleRate: 44_100, seconds: 1)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
              "flac": { "type": "encode.flac" }, "file": { "type": "sink.mp4", "params": { "path": "\(out)"\(params) } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> flac.in", "flac.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let report = run.wait()
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains(name.hasSuffix(".mov") ? "FLAC is written in MP4 and M4A files, not QuickTime (.mov)" : "leave out fragmentInterval for FLAC"),
                "\(message)")
        #expect(message.contains(out), "\(message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: path("out")) == [])
    }

    /// A length limit ends the file before the stream's end: the samples it holds decode exactly
    /// (the input's first ones), STREAMINFO counts them, and its MD5, of the whole input, is
    /// given as unknown.
    @Test func aLengthLimitEndsTheTrackExactly() throws {
        let wav = path("noise.wav"), out = path("limited.mp4")
        try EncodedMediaChecks.writeNoise(wav, channels: 2, sampleRate: 44_100, samples: 10 * 44_100)
        let report = try EncodedMediaChecks.encode(wav, with: "encode.flac", params: #""compressionLevel": 0"#, path: out)
        try #require(report.status == .completed)
        let whole = try Data(contentsOf: URL(fileURLWithPath: out)).count
        let limit = whole / 2
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
              "flac": { "type": "encode.flac", "params": { "compressionLevel": 0 } },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)", "fileLengthLimit": \(limit) } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> flac.in", "flac.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        try #require(run.wait().status == .completed)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)).count <= limit)
        let input = try EncodedMediaChecks.decode(wav, channels: 2), decoded = try EncodedMediaChecks.decode(out, channels: 2)
        #expect(decoded.count > input.count / 4 && decoded.count < input.count, "\(decoded.count) of \(input.count)")
        #expect(decoded == Array(input.prefix(decoded.count)))
        let header = try Self.flacEntry(out).header
        #expect(header.totalSamples == UInt64(decoded.count / 2))
        #expect(header.md5.allSatisfy { $0 == 0 })
        #expect(try Self.durationInSamples(out) == decoded.count / 2)
    }
}
