import Foundation
import MediaContainers
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// graphs/waveform.json and graphs/record-waveform.json, end to end.
@Suite(.media) struct WaveformGraphTests {
    @Test func waveformGraphReducesAFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 2, sampleRate: 44_100, channels: 2)
        let json = folder.appendingPathComponent("w.json").path, png = folder.appendingPathComponent("w.png").path
        let r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(wav)",
                                 "--set", "wave.json=\(json)", "--set", "wave.png=\(png)")
        #expect(r.status == 0, "\(r.stderr)")
        let data = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        #expect(data["version"] == 2)
        #expect(data["channels"] == 1)
        #expect(data["sample_rate"] == 44_100)
        #expect(data["samples_per_pixel"] == 256)
        #expect(data["length"] == 345)  // ceil(88200 / 256)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: png))).prefix(4) == [0x89, 0x50, 0x4E, 0x47])  // a PNG
    }

    /// An MP3's waveform lines up with its source's, bin for bin, as BBC audiowaveform's does
    /// (it skips 529 + the encoder delay of a LAME or Lavc tag): GStreamer alone left ffmpeg's
    /// MP3s 4 bins (of 256 samples) late.
    @Test func anMP3sWaveformLinesUpWithItsSource() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path, mp3 = folder.appendingPathComponent("in.mp3").path
        // Noise under a 3 Hz envelope: every bin's peak differs from its neighbours'.
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "aevalsrc=0.8*sin(2*PI*3*t)*(2*random(0)-1):s=22050:d=3", wav])
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", wav, "-c:a", "libmp3lame", "-q:a", "2", mp3])
        func peaks(_ input: String) throws -> [Int] {
            let json = input + ".json"
            let r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(input)", "--set", "wave.json=\(json)", "--set", "wave.png=")
            #expect(r.status == 0, "\(r.stderr)")
            guard case .array(let values)? = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))["data"] else { return [] }
            return values.compactMap { if case .number(let n) = $0 { Int(n) } else { nil } }
        }
        let source = try peaks(wav), decoded = try peaks(mp3)
        #expect(source.count == 2 * 259 && decoded.count == source.count, "\(source.count) \(decoded.count)")  // ceil(66150 / 256) bins, min and max
        func difference(shiftedBy bins: Int) -> Double {
            let pairs = (0..<(source.count / 2)).compactMap { i -> (Int, Int)? in
                let j = i + bins
                return j >= 0 && j < decoded.count / 2 ? (source[2 * i + 1], decoded[2 * j + 1]) : nil
            }
            return Double(pairs.reduce(0) { $0 + abs($1.0 - $1.1) }) / Double(max(1, pairs.count))
        }
        let aligned = difference(shiftedBy: 0)
        for bins in [-4, -2, -1, 1, 2, 4] { #expect(aligned < difference(shiftedBy: bins), "shift \(bins)") }
    }

    @Test func aFileWithNoAudioTrackFailsNamingIt() throws {
        let folder = try TestMedia.temporaryFolder()
        let video = folder.appendingPathComponent("silent-film.mp4").path
        try TestMedia.gstLaunch("videotestsrc num-buffers=10 ! x264enc ! mp4mux ! filesink location=\(video)")
        let json = folder.appendingPathComponent("w.json").path
        let r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(video)", "--set", "wave.json=\(json)",
                                 "--set", "wave.png=")
        #expect(r.status == 70)
        #expect(r.stderr.contains("\"\(video)\" has no audio track"))
        #expect(!FileManager.default.fileExists(atPath: json))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".w.json.partial").path))
    }

    @Test func recordingComputesItsWaveformAsItGoes() throws {
        let folder = try TestMedia.temporaryFolder()
        let m4a = folder.appendingPathComponent("rec.m4a").path, json = folder.appendingPathComponent("rec.json").path
        let r = try Graphctl.run("run", Graphctl.graph("record-waveform.json"), "--set", "mic.live=false", "--set", "mic.duration=3",
                                 "--set", "file.path=\(m4a)", "--set", "wave.json=\(json)", "--set", "wave.png=")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(abs(try MediaProbe(m4a).duration - 3) <= 0.047)
        let data = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        #expect(data["samples_per_pixel"] == 441)
        #expect(data["length"] == 300)
    }

    @Test func anUnwritableOutputIs73AndWritesNothing() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 0.5)
        let file = folder.appendingPathComponent("plain").path
        FileManager.default.createFile(atPath: file, contents: Data())
        let json = folder.appendingPathComponent("ok.json").path
        let r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(wav)", "--set", "wave.json=\(json)",
                                 "--set", "wave.png=\(file)/w.png")
        #expect(r.status == 73)
        #expect(r.stderr == "error: nodes.wave.params.png: cannot write \"\(file)/w.png\": \"\(file)\" is a file, not a folder\n")
        #expect(!FileManager.default.fileExists(atPath: json))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.wav", "plain"])
    }

    @Test func aLiveRecordingComputesItsWaveformInRealTime() throws {
        let folder = try TestMedia.temporaryFolder()
        let m4a = folder.appendingPathComponent("live.m4a").path, json = folder.appendingPathComponent("live.json").path
        let r = try Graphctl.run("run", Graphctl.graph("record-waveform.json"), "--set", "mic.duration=1.5",
                                 "--set", "file.path=\(m4a)", "--set", "wave.json=\(json)", "--set", "wave.png=")
        #expect(r.status == 0, "\(r.stderr)")
        let data = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        #expect(data["length"] == 150)  // 100 pixels per second
        #expect(abs(try MediaProbe(m4a).duration - 1.5) <= 0.047)
    }

    /// A WAV with a header and no samples: its data chunk is empty.
    static func writeEmptyWAV(_ path: String) throws {
        var header = Array("RIFF".utf8) + le32(36) + Array("WAVEfmt ".utf8) + le32(16)
        header += [1, 0, 1, 0] + le32(44_100) + le32(88_200) + [2, 0, 16, 0]
        header += Array("data".utf8) + le32(0)
        try Data(header).write(to: URL(fileURLWithPath: path))
    }

    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// Success means output: a file that holds no media fails (70) and writes nothing, naming
    /// the input and why, as the transcode does. A WAV with a header and no samples wrote an
    /// empty JSON and PNG with exit 0; an MP4 whose samples all lie past its end (its index
    /// first, its media cut off) said "completed … 0.00 s of media", exit 0, and wrote nothing.
    @Test func aFileThatHoldsNoMediaFails() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let empty = folder.appendingPathComponent("empty.wav").path
        try Self.writeEmptyWAV(empty)
        let json = folder.appendingPathComponent("w.json").path, png = folder.appendingPathComponent("w.png").path
        var r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(empty)", "--set", "wave.json=\(json)",
                                 "--set", "wave.png=\(png)")
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"wave\" (analysis.waveform, writing \"\(json)\", \"\(png)\"): nothing to write: no media reached it from \"\(empty)\""),
                "\(r.stderr)")

        let full = folder.appendingPathComponent("full.m4a").path
        try TestMedia.writeWAV(folder.appendingPathComponent("in.wav").path, seconds: 1, sampleRate: 44_100, channels: 1)
        let made = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(folder.path)/in.wav",
                                    "--set", "file.path=\(full)", "--set", "file.faststart=true")
        #expect(made.status == 0, "\(made.stderr)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        // Where mdat starts: after the boxes before it (ftyp, moov).
        let mdat = try #require(try MP4File(MemoryBytes([UInt8](bytes))).first("mdat"))
        let offset = Int(mdat.offset)
        try #require(offset > 0 && offset + 8 < bytes.count)
        let past = folder.appendingPathComponent("past.m4a").path
        try bytes.prefix(offset + 8).write(to: URL(fileURLWithPath: past))
        r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(past)", "--set", "wave.json=\(json)", "--set", "wave.png=")
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("nothing to write: no media reached it from \"\(past)\", which ends at byte \(offset + 8)"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["empty.wav", "full.m4a", "in.wav", "past.m4a"])
    }

    /// A WAV whose data is shorter than its header says (a file cut short) gives what it holds,
    /// and a warning with both figures, as the decoder ended early against the stated length.
    @Test func aShortWAVWarnsWithBothFigures() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let full = folder.appendingPathComponent("full.wav").path, short = folder.appendingPathComponent("short.wav").path
        try TestMedia.writeWAV(full, seconds: 3, sampleRate: 8000, channels: 1)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
        try bytes.prefix(bytes.count - 2 * 16_000).write(to: URL(fileURLWithPath: short))  // 2 s of 16-bit samples gone
        let json = folder.appendingPathComponent("w.json").path
        var r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(short)", "--set", "wave.json=\(json)", "--set", "wave.png=")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("warning") && r.stderr.contains("\"\(short)\" ended after 1.00 s of the 3.00 s its header states"), "\(r.stderr)")
        r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--set", "src.path=\(full)", "--set", "wave.json=\(json)", "--set", "wave.png=")
        #expect(r.status == 0 && !r.stderr.contains("warning"), "\(r.stderr)")
    }

    /// An input cut in place while the run reads it: the run ends with what it read, and warns
    /// that the file changed, with its size before and after.
    @Test(.timeLimit(.minutes(10)))
    func anInputCutWhileItIsReadWarns() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("long.wav").path
        try TestMedia.writeWAV(wav, seconds: 600, sampleRate: 44_100, channels: 2)
        var info = stat()
        #expect(stat(wav, &info) == 0)
        let m4a = folder.appendingPathComponent("out.m4a").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(wav)",
                                           "--set", "file.path=\(m4a)", "--progress", "always"])
        try graphctl.waitForPosition(atLeast: 1)
        #expect(truncate(wav, 4 << 20) == 0)  // about 23 s of the 600 left
        let r = graphctl.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("\"\(wav)\" changed while the run read it (it was \(info.st_size) bytes when the run started and is 4194304 bytes now)"),
                "\(r.stderr)")
        #expect(try MediaProbe(m4a).duration < 30)
    }
}
