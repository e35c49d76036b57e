import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `decode` reads what GStreamer can: every common audio format, and the audio of an MP4.
@Suite(.media) struct DecodeFormatsTests {
    static let encoders: [(String, String)] = [
        ("flac", "flacenc ! flacparse"),
        ("mp3", "lamemp3enc bitrate=128"),
        ("ogg", "vorbisenc ! oggmux"),
        ("opus", "audioresample ! opusenc ! oggmux"),
        ("m4a", "avenc_aac ! mp4mux"),
    ]

    @Test(arguments: encoders.map(\.0))
    func decodesOneSecondOfEachFormat(_ ext: String) throws {
        let encoder = Self.encoders.first { $0.0 == ext }!.1
        let folder = try TestMedia.temporaryFolder()
        let file = folder.appendingPathComponent("tone.\(ext)").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=100 samplesperbuffer=480 ! audio/x-raw,rate=48000,channels=2 ! audioconvert ! \(encoder) ! filesink location=\(file)")
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "sampleRate": 48000 } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("out")
        var frames = 0
        while let b = output.copyNextSampleBuffer() {
            #expect(b.format == .pcm(.init(sampleRate: 48_000, channels: 2, sampleFormat: .s16le)))
            frames += b.frameCount
        }
        #expect(run.wait().status == .completed)
        // Lossy codecs pad or trim by up to a frame or two (1152 for MP3, 2048 for AAC).
        #expect(abs(frames - 48_000) <= 2400, "\(ext): \(frames) frames")
    }

    /// Every PCM layout a WAV file can hold, mono and stereo, with an odd number of samples: an
    /// 8-bit or 24-bit mono file then has a data chunk of odd length, which wavparse cannot read
    /// when it pulls (GStreamer 1.22 gives nothing and ends cleanly). Decoding reads in push mode,
    /// so every sample arrives, at the level ffmpeg wrote.
    static let wavCodecs = ["pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le", "pcm_alaw", "pcm_mulaw"]

    @Test(arguments: wavCodecs, [1, 2])
    func everyWAVLayoutDecodesEverySample(_ codec: String, channels: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("\(codec).wav").path
        // ffmpeg's sine is at 1/8 of full scale; 8001 frames at 8 kHz.
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=2",
                                             "-af", "atrim=end_sample=8001" + (channels == 2 ? ",pan=stereo|c0=c0|c1=c0" : ""),
                                             "-c:a", codec, file])
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "sampleFormat": "f32le" } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        var frames = 0
        var peak: Float = 0
        while let b = try run.output("out").copyNextSampleBuffer() {
            #expect(b.format == .pcm(.init(sampleRate: 8000, channels: channels, sampleFormat: .f32le)))
            frames += b.frameCount
            peak = max(peak, b.withAudioSamples(as: Float.self) { $0.map(abs).max() ?? 0 })
        }
        #expect(run.wait().status == .completed)
        #expect(frames == 8001, "\(codec), \(channels) ch: \(frames) frames")
        #expect(abs(peak - 0.125) < 0.01, "\(codec), \(channels) ch: peak \(peak)")
    }

    /// decodebin breaks ties of rank by name, which would pick libav's MP3 decoder; decode
    /// ranks mpg123's above it (2.5 times as fast, a fifth of the memory; BENCHMARKS.md).
    @Test func mp3PrefersMpg123() throws {
        let folder = try TestMedia.temporaryFolder()
        let file = folder.appendingPathComponent("tone.mp3").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=10 ! audioconvert ! lamemp3enc ! filesink location=\(file)")
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode" }, "out": { "type": "sink.app" } }, "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        while try run.output("out").copyNextSampleBuffer() != nil {}
        #expect(run.wait().status == .completed)
        let mpg123 = try #require(GStreamer.rank(of: "mpg123audiodec"))
        #expect(mpg123 > GStreamer.rank(of: "avdec_mp3") ?? 0)
        #expect(mpg123 > GStreamer.rank(of: "avdec_mp3float") ?? 0)
    }

    @Test func trackSelectsAmongAudioTracks() throws {
        let folder = try TestMedia.temporaryFolder()
        let file = folder.appendingPathComponent("two.mka").path
        // Two audio tracks in Matroska: a 440 Hz and a 1000 Hz tone.
        try TestMedia.gstLaunch("matroskamux name=m ! filesink location=\(file) "
            + "audiotestsrc num-buffers=20 freq=440 ! audio/x-raw,rate=8000,channels=1 ! m. "
            + "audiotestsrc num-buffers=20 freq=1000 ! audio/x-raw,rate=8000,channels=1 ! m.")
        func upwardCrossings(track: Int) throws -> Int {
            let graph = try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
                  "dec": { "type": "decode", "params": { "track": \(track) } }, "out": { "type": "sink.app" } },
                  "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
                """)
            let run = try GraphRun(graph)
            try run.start()
            var samples: [Int16] = []
            while let b = try run.output("out").copyNextSampleBuffer() { samples += b.withAudioSamples(as: Int16.self) { Array($0) } }
            #expect(run.wait().status == .completed)
            let seconds = Double(samples.count) / 8000
            return Int(Double(zip(samples, samples.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count) / seconds)
        }
        let first = try upwardCrossings(track: 0), second = try upwardCrossings(track: 1)
        #expect(Set([first, second]).count == 2)
        #expect([first, second].sorted() == [440, 1000] || abs(first - second) > 400, "\(first) \(second)")
    }
}
