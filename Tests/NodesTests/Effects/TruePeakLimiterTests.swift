import Foundation
import Testing
import Nodes

/// TruePeakLimiter, our own math on short signals whose answer is known: untouched under the
/// ceiling, under the ceiling between samples once it engages, never a sample lost.
struct TruePeakLimiterTests {
    /// Stereo, `seconds` at 48 kHz: `amplitude`·sin at `frequency`, phase shifted by `phase`.
    static func sine(amplitude: Double, frequency: Double, phase: Double = 0, seconds: Double = 0.25) -> [Float] {
        (0..<Int(seconds * 48_000)).flatMap { n -> [Float] in
            let v = Float(amplitude * sin(2 * .pi * frequency * Double(n) / 48_000 + phase))
            return [v, v]
        }
    }

    static func limit(_ input: [Float], ceilingDB: Double, gain: Float = 1, chunk: Int = 1000) -> (TruePeakLimiter, [Float]) {
        var limiter = TruePeakLimiter(channels: 2, sampleRate: 48_000, ceilingDB: ceilingDB)
        var output: [Float] = []
        var start = 0
        while start < input.count {
            input[start..<min(input.count, start + chunk)].withUnsafeBufferPointer { limiter.process($0, gainFrom: gain, to: gain, into: &output) }
            start += chunk
        }
        limiter.flush(into: &output)
        return (limiter, output)
    }

    @Test func underTheCeilingTheSamplesAreOnlyScaled() {
        let input = Self.sine(amplitude: 0.25, frequency: 997)
        let (limiter, output) = Self.limit(input, ceilingDB: -1, gain: 2)
        #expect(limiter.delayFrames == 6 + 240 - 1)  // 5 ms at 48 kHz, and the interpolator's reach
        let scaled = output == input.map { $0 * 2 }
        #expect(scaled)  // every frame, in order, exactly
        #expect(limiter.limitedFrames == 0)
    }

    /// A sine at a quarter of the rate, its samples 45° off its crests: the samples read 3 dB
    /// under the true peak, which is +2 dBTP. Limited to −1 dBTP as the meter measures it.
    @Test func keepsTheTruePeakUnderTheCeilingBetweenSamples() throws {
        let input = Self.sine(amplitude: pow(10, 2.0 / 20), frequency: 12_000, phase: .pi / 4)
        let (limiter, output) = Self.limit(input, ceilingDB: -1)
        #expect(output.count == input.count)
        var meter = LoudnessMeter(sampleRate: 48_000, channels: 2)
        output.withUnsafeBufferPointer { meter.add($0) }
        let peak = try #require(meter.measurement.truePeakDBTP)
        #expect(peak <= -1 + 0.02 && peak >= -1.5, "\(peak)")
        #expect(limiter.limitedFrames > 11_000)
        // The samples alone stay 3 dB under: the limiter saw what lies between them.
        #expect(output.map(abs).max()! < Float(pow(10, -3.5 / 20)))
    }

    /// A burst over a quiet tone: turned down around the burst only (from 5 ms before it), then
    /// back to exactly 1 once released (0.92 s on). Interleaved stereo: sample 2·frame.
    @Test func engagesOnlyAroundAPeak() {
        var input = Self.sine(amplitude: 0.1, frequency: 440, seconds: 2)
        for i in 48_000..<48_960 { input[i] = 1.5 }  // 10 ms of +3.5 dBFS, 0.5 s in
        let (limiter, output) = Self.limit(input, ceilingDB: -1)
        let ceiling = Float(pow(10, -1.0 / 20))
        #expect(output.map(abs).max()! <= ceiling)
        let untouchedBefore = output[0..<(48_000 - 2 * 250)] == input[0..<(48_000 - 2 * 250)]
        let untouchedAfter = output[(2 * 72_000)...] == input[(2 * 72_000)...]
        #expect(untouchedBefore)
        #expect(untouchedAfter)
        #expect(limiter.limitedFrames > 480 && limiter.limitedFrames < 48_000, "\(limiter.limitedFrames)")
    }

    @Test func samplesThatAreNotNumbersBecomeSilence() {
        var input = Self.sine(amplitude: 0.1, frequency: 440, seconds: 0.05)
        input[100] = .nan; input[201] = .infinity; input[302] = -.infinity
        let (_, output) = Self.limit(input, ceilingDB: -1)
        #expect(output[100] == 0 && output[201] == 0 && output[302] == 0)
        let same = output[0..<100] == input[0..<100]
        #expect(output.allSatisfy(\.isFinite) && same)
    }
}
