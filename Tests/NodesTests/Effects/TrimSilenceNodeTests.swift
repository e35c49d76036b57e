import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// effect.trimSilence: the trimmer's own logic sample-exactly on samples computed here (padding,
/// `ends`, `minimumDuration`, an all-silent input, quiet stretches longer than the memory hold
/// going through the spill file), then the node in a harness (times, report).
@Suite struct TrimSilenceNodeTests {
    static let rate = 8000

    /// Interleaved 16-bit stereo: each segment's seconds, tone (a 440 Hz sine at half scale) or
    /// quiet (a hiss of ±`quietLevel`, every sample under −60 dBFS but not all zero, so that
    /// what comes out can be told apart from what went in).
    static func signal(_ segments: [(seconds: Double, tone: Bool)], quietLevel: Int16 = 20) -> [Int16] {
        var samples: [Int16] = []
        var frame = 0
        var state: UInt32 = 7
        for segment in segments {
            for _ in 0..<Int(segment.seconds * Double(rate)) {
                for c in 0..<2 {
                    if segment.tone {
                        samples.append(Int16(16_000 * sin(2 * Double.pi * 440 * Double(frame) / Double(rate) + Double(c))))
                    } else {
                        state = state &* 1_664_525 &+ 1_013_904_223
                        samples.append(Int16(Int32(state >> 16) % Int32(2 * quietLevel + 1)) - quietLevel)
                    }
                }
                frame += 1
            }
        }
        return samples
    }

    struct Trimmed {
        var samples: [Int16] = []
        var firstFrames: [Int] = []
        var counts: [Int] = []
        var report: SilenceTrimReport?
        var trimmer: SilenceTrimmer?
    }

    /// Runs `samples` through a trimmer in pieces of `piece` frames.
    static func trim(_ samples: [Int16], ends: TrimmedEnds = .both, padding: Double = 0.1, minimumDuration: Double = 0,
                     memoryLimit: Int = 1 << 20, piece: Int = 1000) throws -> Trimmed {
        let format = MediaFormat.PCMFormat(sampleRate: rate, channels: 2, sampleFormat: .s16le)
        var trimmer = SilenceTrimmer(format: format, rule: SilenceRule(thresholdDB: -60), ends: ends, padding: padding,
                                     minimumDuration: minimumDuration, memoryLimit: memoryLimit, node: "trim")
        var out = Trimmed()
        let send: SilenceTrimmer.Send = { bytes, first in
            out.firstFrames.append(first)
            out.counts.append(bytes.count / 4)
            out.samples += bytes.bindMemory(to: Int16.self)
            return true
        }
        try samples.withUnsafeBytes { all in
            var at = 0
            while at < all.count {
                let end = min(all.count, at + piece * 4)
                try trimmer.add(UnsafeRawBufferPointer(rebasing: all[at..<end]), send: send)
                at = end
            }
        }
        try trimmer.finish(send: send)
        out.report = trimmer.report(padding: padding, minimumDuration: minimumDuration)
        out.trimmer = trimmer
        return out
    }

    /// Frames `from` to `to` seconds of an interleaved stereo signal.
    static func slice(_ samples: [Int16], _ from: Double, _ to: Double) -> [Int16] {
        Array(samples[(Int(from * Double(rate)) * 2)..<(Int(to * Double(rate)) * 2)])
    }

    /// Records where `actual` first differs from `expected` (not the arrays: they are long).
    static func expectSame<T: Equatable>(_ actual: [T], _ expected: [T], sourceLocation: SourceLocation = #_sourceLocation) {
        guard actual != expected else { return }
        let at = (0..<min(actual.count, expected.count)).first { actual[$0] != expected[$0] } ?? min(actual.count, expected.count)
        Issue.record("\(actual.count) samples, expected \(expected.count); the first difference at sample \(at)", sourceLocation: sourceLocation)
    }

    static let speech: [(seconds: Double, tone: Bool)] = [(1, false), (1, true), (2, false), (1, true), (3, false)]

    @Test func trimsBothEndsToThePaddingAndKeepsTheMiddleSilence() throws {
        let input = Self.signal(Self.speech)
        let out = try Self.trim(input)
        Self.expectSame(out.samples, Self.slice(input, 0.9, 5.1))
        let report = try #require(out.report)
        #expect(report.trimmedStartSeconds == 0.9 && report.trimmedEndSeconds == 2.9 && report.keptSeconds == 4.2 && report.inputSeconds == 8)
        // Each piece starts where the one before ended.
        #expect(out.firstFrames == out.counts.reduce(into: [0]) { $0.append($0.last! + $1) }.dropLast())
    }

    @Test(arguments: [(TrimmedEnds.start, 0.0, 1.0, 8.0), (.end, 0.0, 0.0, 5.0), (.both, 0.0, 1.0, 5.0),
                      (.start, 0.5, 0.5, 8.0), (.end, 0.25, 0.0, 5.25), (.both, 0.25, 0.75, 5.25)])
    func endsAndPaddingAreHonoured(_ ends: TrimmedEnds, _ padding: Double, _ from: Double, _ to: Double) throws {
        let input = Self.signal(Self.speech)
        let out = try Self.trim(input, ends: ends, padding: padding)
        Self.expectSame(out.samples, Self.slice(input, from, to))
        #expect(out.report?.trimmedStartSeconds == from && out.report?.trimmedEndSeconds == 8 - to)
    }

    @Test func aQuietEndShorterThanTheMinimumIsKeptWhole() throws {
        let input = Self.signal([(0.3, false), (1, true), (2, false), (1, true), (0.6, false)])
        let out = try Self.trim(input, padding: 0, minimumDuration: 0.5)
        Self.expectSame(out.samples, Self.slice(input, 0, 4.3))  // the start (0.3 s) stays, the end (0.6 s) goes
        #expect(out.report?.trimmedStartSeconds == 0 && out.report?.trimmedEndSeconds == 0.6)
    }

    @Test func anAllSilentInputFailsNamingTheNodeUnlessShorterThanTheMinimum() throws {
        let input = Self.signal([(2, false)])
        #expect { try Self.trim(input) } throws: { error in
            guard let e = error as? GraphError else { return false }
            return e.code == .runFailed && e.node == "trim" && e.message.contains("silent throughout")
        }
        let short = try Self.trim(input, minimumDuration: 3)
        Self.expectSame(short.samples, input)
    }

    /// A quiet stretch of 10 s between sounds (320 kB) with 16 kB of memory: it goes to the file
    /// and comes back sample for sample; memory never holds more than the limit and one piece.
    @Test func aLongPauseGoesThroughTheSpillFileIntact() throws {
        let input = Self.signal([(0.5, true), (10, false), (0.5, true), (1, false)])
        let out = try Self.trim(input, memoryLimit: 16_384)
        Self.expectSame(out.samples, Self.slice(input, 0, 11.1))
        let held = try #require(out.trimmer?.held)
        #expect(held.mostOnDisk >= 10 * Self.rate * 4 - 16_384 - 4000)
        #expect(held.mostInMemory <= 16_384 + 4000)
    }

    /// A quiet start of 20 s with 1 s of padding (32 kB) kept through 8 kB of memory: the padding
    /// lives in the file, whose front is dropped as the start goes on; the file stays near the
    /// padding's size, and the padding comes out exactly.
    @Test func aLongQuietStartKeepsItsPaddingThroughTheFile() throws {
        let input = Self.signal([(20, false), (1, true), (0.5, false)])
        let out = try Self.trim(input, padding: 1, memoryLimit: 8192)
        Self.expectSame(out.samples, Self.slice(input, 19, 21.5))
        let held = try #require(out.trimmer?.held)
        #expect(held.mostOnDisk > 0 && held.mostOnDisk <= 3 * Self.rate * 4 + 3 * 8192)
    }

    @Test func aBufferOfPartFramesIsRefused() throws {
        var trimmer = SilenceTrimmer(format: .init(sampleRate: 8000, channels: 2, sampleFormat: .s16le), rule: SilenceRule(thresholdDB: -60),
                                     ends: .both, padding: 0, minimumDuration: 0, memoryLimit: 1024, node: "trim")
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6]
        #expect(throws: GraphError.self) {
            try bytes.withUnsafeBytes { b in try trimmer.add(b) { _, _ in true } }
        }
    }
}

/// effect.trimSilence as a node in a harness: float PCM whose times start at 2 s, the output timed
/// on from there without a gap, its samples the input's exactly, and a pause longer than the
/// node's memory hold sent through its temporary file.
@Suite(.media) struct TrimSilenceNodeHarnessTests {
    static let rate = 48_000

    /// Float stereo buffers of 1,024 frames from `start` seconds: quiet (a hiss at −70 dBFS) or a
    /// tone, per segment.
    static func buffers(_ segments: [(seconds: Double, tone: Bool)], start: Double) -> (buffers: [SampleBuffer], samples: [Float]) {
        var samples: [Float] = []
        var state: UInt32 = 11
        for segment in segments {
            for f in 0..<Int(segment.seconds * Double(rate)) {
                for c in 0..<2 {
                    if segment.tone { samples.append(Float(0.5 * sin(2 * Double.pi * 330 * Double(f) / Double(rate) + Double(c)))) } else {
                        state = state &* 1_664_525 &+ 1_013_904_223
                        samples.append((Float(state >> 8) / Float(1 << 24) * 2 - 1) * 0.000_3)
                    }
                }
            }
        }
        let format = MediaFormat.pcm(.init(sampleRate: rate, channels: 2, sampleFormat: .f32le))
        let origin = Int64(start * Double(rate))
        var buffers: [SampleBuffer] = []
        for first in stride(from: 0, to: samples.count / 2, by: 1024) {
            let n = min(1024, samples.count / 2 - first)
            let bytes = samples[(2 * first)..<(2 * (first + n))].withUnsafeBytes { Array($0) }
            buffers.append(SampleBuffer(format: format, bytes: bytes, presentationTime: MediaTime(value: origin + Int64(first), timescale: Int32(rate)),
                                        duration: MediaTime(value: Int64(n), timescale: Int32(rate))))
        }
        return (buffers, samples)
    }

    @Test func timesRunOnFromTheInputsStartAndSamplesAreExact() throws {
        let (buffers, samples) = Self.buffers([(1.5, false), (1, true), (2, false), (0.5, true), (2, false)], start: 2)
        let h = try NodeHarness(#"{ "type": "effect.trimSilence", "params": { "threshold": -60, "padding": 0.25 } }"#)
        try h.push(buffers)
        let out = try h.pullAll()
        var frame: Int64 = 0
        var kept: [Float] = []
        for b in out {
            // Through GStreamer times are nanoseconds: each is the frame's, rounded.
            #expect(b.presentationTime?.converted(to: Int32(Self.rate)) == MediaTime(value: 2 * Int64(Self.rate) + frame, timescale: Int32(Self.rate)))
            #expect(b.duration?.converted(to: Int32(Self.rate)) == MediaTime(value: Int64(b.frameCount), timescale: Int32(Self.rate)))
            frame += Int64(b.frameCount)
            kept += b.withAudioSamples(as: Float.self) { Array($0) }
        }
        // From 1.25 s (the padding before the first tone) to 5.25 s (the padding after the last).
        TrimSilenceNodeTests.expectSame(kept, Array(samples[(2 * 60_000)..<(2 * 252_000)]))
        let node = try #require(h.node as? TrimSilenceNode)
        let report = try #require(node.report)
        #expect(report.trimmedStartSeconds == 1.25 && report.trimmedEndSeconds == 1.75 && report.keptSeconds == 4, "\(report)")
        #expect(node.mostHeld.disk == 0)
        try h.finish()
    }

    /// A 30 s pause (11.5 MB of float stereo) is more than the node holds in memory (8 MiB): the
    /// rest goes to the temporary file and the pause comes out sample for sample.
    @Test func aPauseLongerThanTheMemoryHoldComesBackIntact() throws {
        let (buffers, samples) = Self.buffers([(0.2, true), (30, false), (0.2, true)], start: 0)
        let h = try NodeHarness(#"{ "type": "effect.trimSilence", "params": { "padding": 0 } }"#)
        try h.push(buffers)
        let kept = try h.pullAll().flatMap { $0.withAudioSamples(as: Float.self) { Array($0) } }
        TrimSilenceNodeTests.expectSame(kept, samples)
        let node = try #require(h.node as? TrimSilenceNode)
        #expect(node.mostHeld.disk > 30 * Self.rate * 8 - TrimSilenceNode.memoryLimit - 8192)
        #expect(node.mostHeld.memory <= TrimSilenceNode.memoryLimit + 8192)
        try h.finish()
    }

    /// A run started at a position (an export's range, read by a seek, which flushes the node:
    /// `streamWasFlushed`): what comes out is the range's, from its start, its quiet end trimmed
    /// (the file: a tone, quiet from 2.5 s; the range 1–2.75 s). A preroll that reached the node
    /// before the seek is what ExportNormalizeCommandTests' range test catches for normalize.
    @Test func aSeekStartsTheStreamOver() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("steps.wav").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "aevalsrc='if(lt(t,2.5),0.5*sin(2*PI*440*t),0)':s=8000:d=3",
                                         "-y", wav])
        var b = GraphBuilder(name: "seek")
        let source = b.add("src", FileSourceNode.self) { $0[\.path] = wav }
        let decode = b.add("dec", DecodeNode.self) { $0[\.sampleFormat] = .value(.f32le) }
        let trim = b.add("trim", TrimSilenceNode.self) { $0[\.padding] = 0 }
        let out = b.add("out", AppSinkNode.self)
        b.connect(source.output(), to: decode.input())
        b.connect(decode.output("audio"), to: trim.input())
        b.connect(trim.output(), to: out.input())
        let run = try GraphRun(try b.build(registry: .builtIn))
        try run.start(at: GraphRun.Seek.exact(MediaTime(value: 1, timescale: 1)).ending(at: MediaTime(value: 11, timescale: 4)))
        let output = try run.output("out")
        var first: MediaTime?
        var frames = 0
        while let sample = output.copyNextSampleBuffer() {
            if first == nil { first = sample.presentationTime }
            frames += sample.frameCount
        }
        #expect(run.wait().status == .completed)
        // The range's tone, 1.5 s, from the range's start; its quiet quarter second at the end
        // trimmed.
        #expect(abs((first?.seconds ?? -1) - 1) < 0.001, "\(String(describing: first))")
        #expect(abs(frames - 12_000) <= 2, "\(frames) frames")
    }
}
