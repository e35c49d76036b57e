import Foundation
import Testing
import MediaContainers
import GraphKit
import GraphKitTesting
import TestSupport

/// Every node that takes audio handles the channel counts it advertises (PCM ports carry 1 to
/// 64), or says which count it cannot take. A valid 64-channel WAV crashed the waveform graph
/// (GStreamer's converter asserts `in_channels < 64`, then SIGSEGV), leaving `.partial` files.
@Suite(.media, .timeLimit(.minutes(10))) struct ChannelCountTests {
    /// One second of a sine at 8 kHz in `channels` channels, the same on each, written by
    /// GStreamer (unpositioned past stereo, as WAVE_FORMAT_EXTENSIBLE with no speaker mask).
    static func wav(_ path: String, channels: Int) throws {
        let mask = channels > 2 ? ",channel-mask=(bitmask)0" : ""
        try TestMedia.gstLaunch("audiotestsrc num-buffers=10 samplesperbuffer=800 volume=0.5 ! "
                                + "audio/x-raw,format=S16LE,rate=8000,channels=\(channels)\(mask) ! wavenc ! filesink location=\(path)")
    }

    static func waveform(_ wav: String, _ json: String, _ png: String) throws -> Graphctl.Result {
        try Graphctl.run("run", Graphctl.graph("waveform.json"), "--progress", "never", "--set", "src.path=\(wav)",
                         "--set", "wave.json=\(json)", "--set", "wave.png=\(png)", "--set", "wave.splitChannels=true",
                         "--set", "wave.samplesPerPixel=400")
    }

    /// What graphctl said as errors: GStreamer's muxer may print GLib criticals of its own when
    /// a run fails before its input had a format (sink.mp4's mp4mux), which are not the message.
    static func errors(_ r: Graphctl.Result) -> String {
        r.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }.map { $0 + "\n" }.joined()
    }

    /// The waveform data of the one-channel file, which every channel of the others must match.
    static func monoReference(in folder: URL) throws -> [Int] {
        let mono = folder.appendingPathComponent("mono.wav").path, json = folder.appendingPathComponent("mono.json").path
        try Self.wav(mono, channels: 1)
        try #require(try Self.waveform(mono, json, "").status == 0)
        return try Self.data(json).values
    }

    static func data(_ json: String) throws -> (channels: Int, values: [Int]) {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any]
        return (object?["channels"] as? Int ?? 0, object?["data"] as? [Int] ?? [])
    }

    /// Up to 64 channels: a waveform per channel, each the mono file's to the value. 65: refused
    /// by decode, naming the file and the count (70), with nothing left behind.
    @Test(arguments: [1, 2, 6, 8, 63, 64, 65])
    func aWaveformOfEveryAdvertisedChannelCount(_ channels: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path
        try Self.wav(wav, channels: channels)
        let one = try Self.monoReference(in: folder)
        let json = folder.appendingPathComponent("w.json").path, png = folder.appendingPathComponent("w.png").path
        let r = try Self.waveform(wav, json, png)
        if channels <= 64 {
            #expect(r.status == 0, "\(channels) channels: \(r.stderr)")
            let (count, values) = try Self.data(json)
            #expect(count == channels)
            #expect(!one.isEmpty && values.count == one.count * channels)
            // Bin b of channel c: values[(b × channels + c) × 2 ..< +2], the mono bin's.
            let same = values.count == one.count * channels && (0..<(one.count / 2)).allSatisfy { b in
                (0..<channels).allSatisfy { c in values[(b * channels + c) * 2] == one[b * 2] && values[(b * channels + c) * 2 + 1] == one[b * 2 + 1] }
            }
            #expect(same, "\(channels) channels: each channel's waveform is the mono one's")
            #expect(FileManager.default.fileExists(atPath: png))
        } else {
            #expect(r.status == 70)
            #expect(Self.errors(r) == "error: node \"dec\" (decode, reading \"\(wav)\"): \"\(wav)\" has 65 audio channels, and decode gives 1 to 64\n")
            #expect(!FileManager.default.fileExists(atPath: json) && !FileManager.default.fileExists(atPath: png))
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".partial") }
        #expect(left.isEmpty, "\(left)")
    }

    /// A plain PCM header (WAVE_FORMAT_PCM, which says nothing of speakers) of more than 2
    /// channels: GStreamer gave "Internal data stream error" from the file source (its converter
    /// wants a channel mask, and GStreamer has a default one only up to 8). It decodes, as
    /// ffmpeg decodes it.
    @Test(arguments: [9, 63, 64])
    func aPlainPCMHeaderOfManyChannelsDecodes(_ channels: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = folder.appendingPathComponent("made.wav").path
        try Self.wav(made, channels: channels)
        // GStreamer wrote WAVE_FORMAT_EXTENSIBLE; the same samples under a 16-byte PCM fmt chunk.
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: made)))
        let header = try #require(WAVEHeader(MemoryBytes(bytes)))
        let fmt = try #require(header.formatChunk)
        #expect(fmt.offset == 12 && fmt.size == 40)
        // The data chunk (its ID on), after the chunks GStreamer writes between (a "fact").
        let data = Array(bytes[Int(try #require(header.dataChunkOffset))...])
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let format = Array(bytes[20..<36])  // format tag, channels, rate, byte rate, block align, bits
        var plain = Array("RIFF".utf8) + le(4 + 24 + data.count, 4) + Array("WAVE".utf8) + Array("fmt ".utf8) + le(16, 4)
        plain += le(1, 2) + format[2...] + data
        let wav = folder.appendingPathComponent("plain.wav").path
        try Data(plain).write(to: URL(fileURLWithPath: wav))
        let one = try Self.monoReference(in: folder), json = folder.appendingPathComponent("w.json").path
        let r = try Self.waveform(wav, json, "")
        #expect(r.status == 0, "\(channels) channels: \(r.stderr)")
        let (count, values) = try Self.data(json)
        #expect(count == channels && values.count == one.count * channels)
        #expect(values.count == one.count * channels && (0..<one.count).allSatisfy { values[($0 / 2 * channels) * 2 + $0 % 2] == one[$0] })
    }

    /// The AAC encoder takes what GStreamer's converter takes, at most 63 channels (the mix
    /// down): 64 fails saying so, at the encoder, with the count; it crashed before.
    @Test func sixtyFourChannelsIntoTheEncoderAreRefusedByCount() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path, m4a = folder.appendingPathComponent("out.m4a").path
        try Self.wav(wav, channels: 64)
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never",
                                 "--set", "src.path=\(wav)", "--set", "file.path=\(m4a)")
        #expect(r.status == 70)
        #expect(Self.errors(r) == "error: node \"aac\" (encode.aac, reading \"\(wav)\"): \"\(wav)\" has 64 audio channels, and its input \"in\" takes channel counts of 1 to 63\n")
        // Mixing down needs the converter, which cannot take 64 either: decode says so.
        let mixed = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never",
                                     "--set", "src.path=\(wav)", "--set", "file.path=\(m4a)", "--set", "dec.channels=2")
        #expect(mixed.status == 70)
        #expect(Self.errors(mixed).hasSuffix("\"\(wav)\" has 64 audio channels, and GStreamer's converter takes at most 63: decode cannot convert it from 64 channels to 2; take it as it is (sampleFormat auto, no sampleRate or channels)\n"),
                "\(mixed.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "in.wav" }
        #expect(left.isEmpty, "\(left)")
    }
}
