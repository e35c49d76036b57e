import Foundation
import Testing
import GraphKit
import GraphKitTesting
import MediaContainers
import Nodes
import TestSupport

@Suite(.media) struct DecodeNodeTests {
    /// The bytes of a WAV file's data chunk.
    static func wavData(_ path: String) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        guard let range = WAVEHeader(MemoryBytes(bytes))?.dataRange(inFileOf: UInt64(bytes.count)) else {
            throw GraphError(.runFailed, "no data chunk in \(path)")
        }
        return Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)])
    }

    static func fileBuffers(_ path: String, chunk: Int = 16_384) throws -> [SampleBuffer] {
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return stride(from: 0, to: data.count, by: chunk).map {
            SampleBuffer(format: .container, bytes: data[$0..<min(data.count, $0 + chunk)])
        }
    }

    @Test func a16BitWAVDecodesSampleExact() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("tone.wav").path
        try TestMedia.writeWAV(wav, seconds: 1.5, sampleRate: 44_100, channels: 2, frequency: 997)
        let expected = try Self.wavData(wav)
        #expect(expected.count == 66_150 * 4)

        let h = try NodeHarness(#"{ "type": "decode" }"#, outputs: ["audio"])
        try h.push(try Self.fileBuffers(wav))
        let out = try h.pullAll(from: "audio")
        #expect(out.first?.format == .pcm(.init(sampleRate: 44_100, channels: 2, sampleFormat: .s16le)))
        #expect(out.first?.presentationTime == .zero)
        let decoded = out.flatMap(\.bytes)
        #expect(decoded.count == expected.count)  // none missing at the start or the end
        #expect(decoded == expected)
    }

    @Test func outputSettingsResampleMixAndConvert() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("tone.wav").path
        try TestMedia.writeWAV(wav, seconds: 1.5, sampleRate: 44_100, channels: 2)
        let h = try NodeHarness(#"{ "type": "decode", "params": { "sampleFormat": "f32le", "sampleRate": 8000, "channels": 1 } }"#,
                                outputs: ["audio"])
        try h.push(try Self.fileBuffers(wav))
        let out = try h.pullAll(from: "audio")
        #expect(out.first?.format == .pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .f32le)))
        let frames = out.reduce(0) { $0 + $1.frameCount }
        // Resampled length kept within 1%: once, under a loaded parallel test run, audioresample
        // gave 31 frames (4 ms) more than when run alone; sample-exactness is the WAV test's job.
        #expect(abs(frames - 12_000) <= 120, "\(frames) frames")
        let peak = out.map { $0.withAudioSamples(as: Float.self) { $0.map(abs).max() ?? 0 } }.max() ?? 0
        #expect(peak > 0.3 && peak <= 1)
    }

    @Test func aMissingTrackFailsTheRunNamingTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("audio-only.wav").path
        try TestMedia.writeWAV(wav, seconds: 0.2)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } },
              "dec": { "type": "decode" }, "v": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.video -> v.in" ] }
            """)
        let run = try GraphRun(graph)
        #expect(throws: GraphError(.runFailed, at: "node \"dec\" (decode, reading \"\(wav)\")", "\"\(wav)\" has no video track", node: "dec")) {
            try run.run()
        }
    }

    @Test func aTrackIndexBeyondTheFileFails() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("one-track.wav").path
        try TestMedia.writeWAV(wav, seconds: 0.2)
        let h = try NodeHarness(#"{ "type": "decode", "params": { "track": 1 } }"#, outputs: ["audio"])
        let bytes = try Self.fileBuffers(wav)
        // The decoder may refuse the track while bytes are still being pushed (a push then throws
        // the run's error) or after: the same failure either way.
        #expect(throws: GraphError(.runFailed, at: "node \"node\" (decode)", "the input has 1 audio track; track 1 does not exist (tracks count from 0)", node: "node")) {
            try h.push(bytes)
            try h.finish()
        }
    }

    @Test func bytesThatAreNotMediaFail() throws {
        let h = try NodeHarness(#"{ "type": "decode" }"#, outputs: ["audio"])
        try h.push(SampleBuffer(format: .container, bytes: Array("this is not a media file\n".utf8)))
        do {
            try h.finish()
            Issue.record("decoding text should fail")
        } catch let error as GraphError {
            #expect(error.code == .runFailed)
            #expect(error.node == "node")
        }
    }
}

extension DecodeNodeTests {
    @Test func autoSampleFormatKeepsTheDecodersOwn() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("int.wav").path
        try TestMedia.writeWAV(wav, seconds: 0.2, sampleRate: 8000, channels: 1)
        let h = try NodeHarness(#"{ "type": "decode", "params": { "sampleFormat": "auto" } }"#, outputs: ["audio"])
        try h.push(try Self.fileBuffers(wav))
        #expect(try h.pullAll(from: "audio").first?.format == .pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .s16le)))

        let flt = folder.appendingPathComponent("float.wav").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=10 ! audio/x-raw,format=F32LE,rate=8000,channels=1 ! wavenc ! filesink location=\(flt)")
        let f = try NodeHarness(#"{ "type": "decode", "params": { "sampleFormat": "auto" } }"#, outputs: ["audio"])
        try f.push(try Self.fileBuffers(flt))
        #expect(try f.pullAll(from: "audio").first?.format == .pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .f32le)))
    }

    /// `readOnlyFrames`: H.264 pictures come as libavcodec decoded them (gkavdec), in its own padded
    /// layout and shared with it, so not writable in place; their visible pixels are the pictures
    /// decoded as usual (copied into GStreamer's layout, rows of 328 bytes at 328 wide).
    @Test func readOnlyFramesAreTheDecodersOwnPicturesUncopied() throws {
        let file = try TestMedia.temporaryFolder().appendingPathComponent("328x240.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=328x240:rate=25:duration=0.4",
                                         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "2", "-y", file])
        /// Each plane's visible rows, and its rows' length.
        func pixels(_ frame: SampleBuffer) throws -> (rows: [[UInt8]], bytesPerRow: Int) {
            try frame.withPixelPlanes { planes in
                (planes.flatMap { p in (0..<p.height).map { y in Array(UnsafeRawBufferPointer(start: p.baseAddress + y * p.bytesPerRow, count: p.width)) } },
                 planes[0].bytesPerRow)
            }
        }
        let copied = try Self.decodedFrames(file, readOnly: false)
        var shared = try Self.decodedFrames(file, readOnly: true)
        #expect(copied.count == 10 && shared.count == 10, "\(copied.count) copied, \(shared.count) shared")
        for (c, s) in zip(copied, shared) {
            let (a, b) = (try pixels(c), try pixels(s))
            #expect(a.bytesPerRow == 328)
            #expect(b.bytesPerRow > 328, "not libavcodec's own layout: the picture was copied")
            #expect(a.rows == b.rows)
            #expect(c.presentationTime == s.presentationTime)
        }
        // libavcodec's picture is not written in place, however few hold it (whether a copied
        // frame is, depends on what the pipeline still holds: its sink keeps the last one).
        var theirs = shared.removeFirst()
        let theirsUnique = theirs.isUniquelyOwned
        #expect(!theirsUnique, "libavcodec's picture would be written in place")
    }

    /// `readOnlyFrames` takes every H.264 and HEVC a decoder takes: RGB coded as such (x264rgb),
    /// 4:4:4 at 12 bits, 4:2:0 at 10, gray at 10 (which gkavdec leaves to the usual decoder):
    /// each decodes, every frame, to I420.
    @Test(arguments: [["-c:v", "libx264rgb"], ["-c:v", "libx265", "-pix_fmt", "yuv444p12le", "-x265-params", "log-level=error"],
                      ["-c:v", "libx264", "-pix_fmt", "yuv420p10le"], ["-c:v", "libx264", "-pix_fmt", "gray10le"],
                      ["-c:v", "libx264", "-pix_fmt", "yuv422p"]])
    func readOnlyFramesTakeEveryFormat(_ codec: [String]) throws {
        let file = try TestMedia.temporaryFolder().appendingPathComponent("in.mkv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=0.4"] + codec + ["-y", file])
        let frames = try Self.decodedFrames(file, readOnly: true)
        #expect(frames.count == 10, "\(codec)")
        #expect(frames.allSatisfy { $0.format == .rawVideo(.init(pixelFormat: .i420, width: 160, height: 120, frameRate: FrameRate(25))) },
                "\(codec): \(frames.first?.format?.description ?? "none")")
    }

    /// Every frame of a file's video, decoded to I420 by a graph that reads the file itself.
    static func decodedFrames(_ file: String, readOnly: Bool) throws -> [SampleBuffer] {
        try decodedFrames(file, params: #""pixelFormat": "i420", "readOnlyFrames": \#(readOnly)"#)
    }

    /// Every frame of a file's video, decoded by `decode` with `params` (JSON members).
    static func decodedFrames(_ file: String, params: String) throws -> [SampleBuffer] {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { \(params) } },
              "s": { "type": "sink.app", "params": { "maxBuffers": 0 } } },
              "edges": [ "src.out -> dec.in", "dec.video -> s.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("s")
        var frames: [SampleBuffer] = []
        while let frame = output.copyNextSampleBuffer(timeout: 60) { frames.append(frame) }
        #expect(run.wait().status == .completed)
        return frames
    }
}
