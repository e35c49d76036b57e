import Foundation
import Testing
import Nodes
import TestSupport

/// LoudnessMeter on the EBU conformance signals, generated here from their published
/// definitions (Tech 3341 for loudness and true peak, Tech 3342 for the loudness range): our own
/// math, so exact figures within the tolerances the EBU states.
@Suite(.media) struct LoudnessMeterTests {
    /// Stereo 1 kHz sines at 48 kHz: each part a level in dBFS (the sine's peak) and a length.
    static func sines(_ parts: [(dBFS: Double, seconds: Double)], frequency: Double = 1000, sampleRate: Int = 48_000,
                      phase: Double = 0) -> [Double] {
        var samples: [Double] = []
        var n = 0
        for part in parts {
            let amplitude = pow(10, part.dBFS / 20)
            for _ in 0..<Int((part.seconds * Double(sampleRate)).rounded()) {
                let v = amplitude * sin(2 * .pi * frequency * Double(n) / Double(sampleRate) + phase)
                samples.append(v); samples.append(v)
                n += 1
            }
        }
        return samples
    }

    static func measure(_ samples: [Double], sampleRate: Int = 48_000, channels: Int = 2, series: Bool = false) -> LoudnessMeasurement {
        var meter = LoudnessMeter(sampleRate: sampleRate, channels: channels, keepsSeries: series)
        let chunk = 4096 * channels
        var start = 0
        while start < samples.count {
            meter.add(Array(samples[start..<min(samples.count, start + chunk)]))
            start += chunk
        }
        return meter.measurement
    }

    // Tech 3341 table 1, cases 1 to 5: integrated loudness −23.0 (−33.0) ±0.1 LUFS.
    @Test func tech3341Case1SineAtMinus23() throws {
        let m = Self.measure(Self.sines([(-23, 20)]), series: true)
        #expect(abs(try #require(m.integratedLUFS) + 23) <= 0.1, "\(m)")
        // Momentary and short-term read −23.0 too once their windows are full.
        let last = try #require(m.series?.last)
        #expect(abs(try #require(last.momentaryLUFS) + 23) <= 0.1)
        #expect(abs(try #require(last.shortTermLUFS) + 23) <= 0.1)
        #expect(m.series?.count == 200)  // every 100 ms
        #expect(m.series?[2].momentaryLUFS == nil && m.series?[3].momentaryLUFS != nil)  // 400 ms
        #expect(m.series?[28].shortTermLUFS == nil && m.series?[29].shortTermLUFS != nil)  // 3 s
        #expect(m.frames == 960_000 && m.durationSeconds == 20)
        #expect(abs(try #require(m.samplePeakDBFS) + 23) <= 0.01)
    }

    /// A sample that is not a number, or is infinite, is silence: the figures after it are the
    /// signal's (a NaN once stopped every later block from counting; an infinity made the true
    /// peak infinite, which JSON cannot hold).
    @Test func samplesThatAreNotNumbersCountAsSilence() throws {
        var samples = Self.sines([(-23, 10)])
        samples[48_000] = .nan
        samples[96_001] = .infinity
        samples[144_002] = -.infinity
        let m = Self.measure(samples)
        #expect(abs(try #require(m.integratedLUFS) + 23) <= 0.1, "\(m)")
        #expect(try #require(m.truePeakDBTP) < 0, "\(m)")
    }

    @Test func tech3341Case2SineAtMinus33() throws {
        let m = Self.measure(Self.sines([(-33, 20)]))
        #expect(abs(try #require(m.integratedLUFS) + 33) <= 0.1, "\(m)")
    }

    @Test func tech3341Case3RelativeGateIgnoresTheQuietEnds() throws {
        let m = Self.measure(Self.sines([(-36, 10), (-23, 60), (-36, 10)]))
        #expect(abs(try #require(m.integratedLUFS) + 23) <= 0.1, "\(m)")
    }

    @Test func tech3341Case4AbsoluteAndRelativeGates() throws {
        let m = Self.measure(Self.sines([(-72, 10), (-36, 10), (-23, 60), (-36, 10), (-72, 10)]))
        #expect(abs(try #require(m.integratedLUFS) + 23) <= 0.1, "\(m)")
    }

    @Test func tech3341Case5LevelsAroundTheTarget() throws {
        let m = Self.measure(Self.sines([(-26, 20), (-20, 20.1), (-26, 20)]))
        #expect(abs(try #require(m.integratedLUFS) + 23) <= 0.1, "\(m)")
    }

    /// Tech 3341's true-peak signals: a sine at a quarter of the sampling rate, peak −6 dBFS,
    /// sampled at 45°: every sample is 3 dB under the peak between them. Expected −6.0 dBTP
    /// (+0.2 / −0.4).
    @Test func truePeakFindsThePeakBetweenSamples() throws {
        let m = Self.measure(Self.sines([(-6, 2)], frequency: 12_000, phase: .pi / 4))
        let truePeak = try #require(m.truePeakDBTP)
        #expect(truePeak >= -6.4 && truePeak <= -5.8, "\(truePeak)")
        #expect(abs(try #require(m.samplePeakDBFS) + 9.03) <= 0.05)
        #expect(m.channelTruePeaksDBTP.count == 2)
    }

    // Tech 3342 cases 1 to 4: the loudness range within ±1 LU. Each part is 20 s long.
    static let rangeCases: [Int: (levels: [Double], range: Double)] = [
        1: ([-20, -30], 10), 2: ([-20, -15], 5), 3: ([-40, -20], 20), 4: ([-50, -35, -20, -35, -50], 15),
    ]

    @Test(arguments: 1...4)
    func tech3342LoudnessRange(_ number: Int) throws {
        let test = try #require(Self.rangeCases[number])
        let m = Self.measure(Self.sines(test.levels.map { (dBFS: $0, seconds: 20) }))
        #expect(abs(m.loudnessRangeLU - test.range) <= 1, "\(m.loudnessRangeLU)")
    }

    @Test func silenceHasNoLoudnessAndEncodesAsNull() throws {
        let m = Self.measure(Array(repeating: 0, count: 48_000 * 2))
        #expect(m.integratedLUFS == nil && m.truePeakDBTP == nil && m.loudnessRangeLU == 0)
        let json = String(decoding: try LoudnessNode.encodeJSON(m), as: UTF8.self)
        #expect(json.hasPrefix("{") && json.hasSuffix("}\n") && !json.contains("inf"), "\(json)")
        #expect(try JSONDecoder().decode(LoudnessMeasurement.self, from: Data(json.utf8)) == m)
    }

    /// The same signal in 16-bit and in float measures the same, whatever the buffer sizes.
    @Test func sampleFormatsAndBufferSizesAgree() throws {
        let signal = Self.sines([(-18, 3)])
        var a = LoudnessMeter(sampleRate: 48_000, channels: 2), b = LoudnessMeter(sampleRate: 48_000, channels: 2)
        let floats = signal.map { Float($0) }, shorts = signal.map { Int16(($0 * 32768).rounded()) }
        floats.withUnsafeBufferPointer { a.add($0) }
        for start in stride(from: 0, to: shorts.count, by: 2 * 777) {
            shorts[start..<min(shorts.count, start + 2 * 777)].withUnsafeBufferPointer { b.add($0) }
        }
        let i = try #require(a.measurement.integratedLUFS), j = try #require(b.measurement.integratedLUFS)
        #expect(abs(i - j) <= 0.01 && abs(i + 18) <= 0.1, "\(i) \(j)")
    }

    /// BS.1770's channel weights: a surround channel counts 1.41 (+1.5 dB), the LFE nothing.
    @Test func surroundChannelsAreWeightedAndTheLFEIsNot() throws {
        func fiveOne(activeChannel: Int) -> [Double] {
            let mono = Self.sines([(-23, 2)]).enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            return mono.flatMap { v in (0..<6).map { $0 == activeChannel ? v : 0 } }
        }
        let front = try #require(Self.measure(fiveOne(activeChannel: 0), channels: 6).integratedLUFS)
        let surround = try #require(Self.measure(fiveOne(activeChannel: 4), channels: 6).integratedLUFS)
        #expect(abs(front + 26) <= 0.1)  // one channel of two: 3 dB under
        #expect(abs(surround - front - 10 * log10(1.41)) <= 0.01)
        #expect(Self.measure(fiveOne(activeChannel: 3), channels: 6).integratedLUFS == nil)
    }
}
