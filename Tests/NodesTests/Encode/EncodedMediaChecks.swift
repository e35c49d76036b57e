import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes

/// What the codec tests ask of a file an encoder made, answered by FFmpeg (an independent
/// decoder): the stream's codec, profile and tag as ffprobe names them, the samples it decodes
/// to, each channel's level at a frequency, and the frames it decodes.
enum EncodedMediaChecks {
    /// ffprobe's `key=value` facts of the file's first stream of `type` (`a` or `v`), with
    /// `nb_read_frames` counted by decoding every frame.
    static func probe(_ path: String, _ type: String) throws -> [String: String] {
        let text = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "\(type):0", "-show_entries",
                                                     "stream=codec_name,profile,codec_tag_string,pix_fmt,sample_rate,channels,width,height,nb_read_frames,duration,bits_per_raw_sample",
                                                     "-of", "default=nw=1", path])
        var facts: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { facts[parts[0]] = parts[1] }
        }
        return facts
    }

    /// The samples ffmpeg decodes from `path`, 16-bit interleaved, `channels` a frame.
    static func decode(_ path: String, channels: Int) throws -> [Int16] {
        let raw = path + ".raw"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "s16le", "-ac", String(channels), raw])
        let data = try Data(contentsOf: URL(fileURLWithPath: raw))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// One channel's power at `frequency` (Goertzel), in dB relative to a full-scale sine: a
    /// per-channel spectrum check of a tone's place.
    static func power(_ samples: [Int16], channel: Int, of channels: Int, at frequency: Double, sampleRate: Int) -> Double {
        let w = 2 * Double.pi * frequency / Double(sampleRate), coefficient = 2 * cos(w)
        var (s1, s2) = (0.0, 0.0), n = 0
        for i in stride(from: channel, to: samples.count, by: channels) {
            let s = Double(samples[i]) / 32768 + coefficient * s1 - s2
            s2 = s1
            s1 = s
            n += 1
        }
        guard n > 0 else { return -.infinity }
        let magnitude = (s1 * s1 + s2 * s2 - coefficient * s1 * s2).squareRoot() * 2 / Double(n)
        return 20 * log10(max(magnitude, 1e-12))
    }

    /// A WAV of one tone a channel (`frequencies[c]` on channel c, 0.5 of full scale), 16-bit,
    /// written by ffmpeg.
    static func writeTones(_ path: String, frequencies: [Int], sampleRate: Int, seconds: Double) throws {
        let tones = frequencies.map { "0.5*sin(2*PI*\($0)*t)" }.joined(separator: "|")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "aevalsrc=\(tones):s=\(sampleRate):d=\(seconds)",
                                             "-c:a", "pcm_s16le", path])
    }

    /// A WAV of white noise (no period, so a shift of the decoded samples shows), 16-bit.
    static func writeNoise(_ path: String, channels: Int, sampleRate: Int, samples: Int) throws {
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=c=white:a=0.3:r=\(sampleRate):seed=7",
                                             "-af", "atrim=end_sample=\(samples)", "-ac", String(channels), "-c:a", "pcm_s16le", path])
    }

    /// Runs `file.wav → decode → ENCODER → sink`, with the encoder's parameters and the sink's
    /// type, and returns its report.
    static func encode(_ wav: String, with encoder: String, params: String = "", into sink: String = "sink.mp4", path: String) throws -> RunReport {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } },
              "dec": { "type": "decode" }, "enc": { "type": "\(encoder)", "params": { \(params) } },
              "file": { "type": "\(sink)", "params": { "path": "\(path)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> enc.in", "enc.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        return run.wait()
    }

    /// Runs `capture.video (pattern) → ENCODER → sink`: `frames` frames of `width`×`height` at 30 fps.
    static func encodeVideo(with encoder: String, params: String = "", width: Int = 64, height: Int = 48, frames: Int, pattern: String = "ball",
                            into sink: String = "sink.mp4", path: String) throws -> RunReport {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
              "cam": { "type": "capture.video", "params": { "width": \(width), "height": \(height), "duration": \(Double(frames) / 30), "live": false, "pattern": "\(pattern)" } },
              "enc": { "type": "\(encoder)", "params": { \(params) } },
              "file": { "type": "\(sink)", "params": { "path": "\(path)" } } },
              "edges": [ "cam.out -> enc.in", "enc.out -> file.video" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        return run.wait()
    }

    /// The problems the loader reports for a graph, as text (empty when it loads).
    static func problems(_ json: String) -> [String] {
        do {
            _ = try GraphLoader(registry: .builtIn).load(json: json)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }
}
