import CKernels
import Testing
import Nodes

/// Exact values on inputs whose answer is worked out by hand.
@Suite struct WaveformReducerTests {
    func reduce(_ samples: [Int16], channels: Int = 1, spp: Int, split: Bool = false, mode: WaveformReducer.Mode = .minmax,
                chunks: Int = 1) -> WaveformReducer {
        var r = WaveformReducer(samplesPerPixel: spp, inputChannels: channels, splitChannels: split, mode: mode)
        // Feed in pieces that do not line up with bins: bins must not care.
        let frames = samples.count / channels
        let per = max(1, frames / chunks)
        var f = 0
        while f < frames {
            let n = min(per, frames - f)
            samples[(f * channels)..<((f + n) * channels)].withUnsafeBufferPointer { r.add($0) }
            f += n
        }
        r.finish()
        return r
    }

    @Test func rampWithAFinalPartialBin() {
        let r = reduce((0..<10).map(Int16.init), spp: 4, chunks: 3)
        #expect(r.data == [0, 3, 4, 7, 8, 9])
        #expect(r.binCount == 3)  // ceil(10 / 4)
    }

    /// Bins past a count fold into the last kept one: its lowest low and highest high, per
    /// channel, as if it had taken their samples.
    @Test func binsPastACountFoldIntoTheLast() {
        var r = reduce([0, 1, 2, 3, 4, 5, -9, 7, 8, 20], spp: 2)  // bins [0,1] [2,3] [4,5] [-9,7] [8,20]
        r.keepBins(3)
        #expect(r.data == [0, 1, 2, 3, -9, 20])
        var split = reduce([1, -1, 2, -2, 3, -3, 9, -9], channels: 2, spp: 1, split: true)
        split.keepBins(2)
        #expect(split.data == [1, 1, -1, -1, 2, 9, -9, -2])
        split.keepBins(5)  // fewer than the count: unchanged
        #expect(split.binCount == 2)
    }

    @Test func squareWave() {
        let square: [Int16] = (0..<12).map { ($0 / 2) % 2 == 0 ? 1000 : -1000 }
        #expect(reduce(square, spp: 4).data == [-1000, 1000, -1000, 1000, -1000, 1000])
        #expect(reduce(square, spp: 2).data == [1000, 1000, -1000, -1000, 1000, 1000, -1000, -1000, 1000, 1000, -1000, -1000])
    }

    @Test func oppositePhaseStereoCancelsWhenCombined() {
        var stereo: [Int16] = []
        for i in 0..<8 { let v = Int16(i * 1000 - 3000); stereo += [v, -v] }
        #expect(reduce(stereo, channels: 2, spp: 4).data == [0, 0, 0, 0])
        // Split, each channel keeps its own: per bin, left min/max then right min/max.
        #expect(reduce(stereo, channels: 2, spp: 4, split: true).data == [-3000, 0, 0, 3000, 1000, 4000, -4000, -1000])
    }

    @Test func combinedChannelsDivideTruncatingTowardZero() {
        // (1 + 2) / 2 = 1 and (-1 + -2) / 2 = -1 (C division), not -2 (floor).
        #expect(reduce([1, 2, -1, -2], channels: 2, spp: 2).data == [-1, 1])
        // Three channels: (32767 + 32767 + -1) / 3 = 21844.
        #expect(reduce([32767, 32767, -1], channels: 3, spp: 2).data == [21844, 21844])
    }

    @Test func maxabsAndRMSArePairsOfMinusVAndV() {
        #expect(reduce([-500, 300, 200, 100], spp: 2, mode: .maxabs).data == [-500, 500, -200, 200])
        #expect(reduce([-32768, 0], spp: 2, mode: .maxabs).data == [-32767, 32767])
        #expect(reduce([1000, -1000, 1000, -1000], spp: 4, mode: .rms).data == [-1000, 1000])
        #expect(reduce([3, 4], spp: 2, mode: .rms).data == [-4, 4])  // sqrt(12.5) = 3.54 rounds to 4
    }

    @Test func floatInputTruncatesToward0() {
        var r = WaveformReducer(samplesPerPixel: 5, inputChannels: 1)
        let floats: [Float] = [0.5, -0.5, 1.0, -1.0, 0.00001]
        floats.withUnsafeBufferPointer { r.add($0) }
        r.finish()
        // 0.5 × 32767 = 16383.5 → 16383; −1.0 → −32767 (not −32768).
        #expect(r.data == [-32767, 32767])
        var r2 = WaveformReducer(samplesPerPixel: 1, inputChannels: 1)
        floats.withUnsafeBufferPointer { r2.add($0) }
        #expect(r2.data == [16383, 16383, -16383, -16383, 32767, 32767, -32767, -32767, 0, 0])
    }

    @Test func eightBitValuesDivideBy256TruncatingNotShifting() {
        let w = WaveformData(sampleRate: 8000, samplesPerPixel: 2, channels: 1, bits: 8,
                             data: [-255, -1, -32768, 32767, -256, 255, -257, 256])
        #expect(w.writtenValues == [0, 0, -128, 127, -1, 0, -1, 1])
    }

    @Test func jsonIsOneLineInAudiowaveformsKeyOrder() {
        let w = WaveformData(sampleRate: 44_100, samplesPerPixel: 256, channels: 1, bits: 16, data: [-3, 5, 0, 0])
        #expect(w.json == #"{"version":2,"channels":1,"sample_rate":44100,"samples_per_pixel":256,"bits":16,"length":2,"data":[-3,5,0,0]}"# + "\n")
        let stereo8 = WaveformData(sampleRate: 48_000, samplesPerPixel: 512, channels: 2, bits: 8, data: [-512, 512, -256, 256])
        #expect(stereo8.json == #"{"version":2,"channels":2,"sample_rate":48000,"samples_per_pixel":512,"bits":8,"length":1,"data":[-2,2,-1,1]}"# + "\n")
    }

    /// Long data crosses many 64 KB chunks: every value comes back, in order, each written once.
    @Test func longJSONIsEveryValueInOrder() throws {
        var rng = SystemRandomNumberGenerator()
        // The extremes, then each count of digits at its edges, then random values.
        let edges: [Int16] = [.min, -1, 0, .max, 9, 10, 99, 100, 999, 1000, 9999, 10000, -9, -10, -99, -100, -10000, 7, 1010, 20202]
        let data = (0..<60_000).map { i in i < edges.count ? edges[i] : Int16.random(in: .min ... .max, using: &rng) }
        let w = WaveformData(sampleRate: 44_100, samplesPerPixel: 256, channels: 1, bits: 16, data: data)
        var chunks = 0
        var bytes: [UInt8] = []
        w.encodeJSON { bytes += $0; chunks += 1 }
        #expect(chunks > 5)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"version":2,"channels":1,"sample_rate":44100,"samples_per_pixel":256,"bits":16,"length":30000,"data":[-32768,-1,0,32767,"#))
        #expect(text.hasSuffix("]}\n"))
        let values = text.split(separator: "[")[1].dropLast(3).split(separator: ",").map { Int16($0)! }
        #expect(values == data)
    }

    @Test func datLayoutIsVersion1ForOneChannelAnd2ForMore() {
        let mono = WaveformData(sampleRate: 44_100, samplesPerPixel: 256, channels: 1, bits: 16, data: [-2, 258])
        #expect(mono.dat == [1, 0, 0, 0, /* flags */ 0, 0, 0, 0, /* rate */ 0x44, 0xAC, 0, 0, /* spp */ 0, 1, 0, 0,
                             /* length */ 1, 0, 0, 0, /* data */ 0xFE, 0xFF, 0x02, 0x01])
        let stereo8 = WaveformData(sampleRate: 8000, samplesPerPixel: 2, channels: 2, bits: 8, data: [-512, 512, -32768, 32767])
        #expect(stereo8.dat == [2, 0, 0, 0, /* 8-bit */ 1, 0, 0, 0, 0x40, 0x1F, 0, 0, 2, 0, 0, 0, /* length */ 1, 0, 0, 0,
                                /* channels */ 2, 0, 0, 0, /* data */ 0xFE, 0x02, 0x80, 0x7F])
    }
}

private extension Array where Element == Int {
    /// These lengths, repeated until their sum reaches `total`.
    func cycled(toCover total: Int) -> [Int] {
        var out: [Int] = []
        var sum = 0
        while sum < total { for n in self { out.append(n); sum += n } }
        return out
    }
}

/// The vectorised paths agree with the plain arithmetic on every value, including the
/// extremes and negative odd sums (where a shift alone would round the wrong way).
@Suite struct WaveformReducerVectorTests {
    /// The reference: audiowaveform's arithmetic, one frame at a time.
    func reference(_ s: [Int16], channels: Int, spp: Int, split: Bool) -> [Int16] {
        var out: [Int16] = []
        let frames = s.count / channels
        for start in stride(from: 0, to: frames, by: spp) {
            let end = min(frames, start + spp)
            for ch in 0..<(split ? channels : 1) {
                var lo = Int32.max, hi = Int32.min
                for f in start..<end {
                    let v: Int32 = split ? Int32(s[f * channels + ch])
                        : (0..<channels).reduce(Int32(0)) { $0 + Int32(s[f * channels + $1]) } / Int32(channels)
                    lo = min(lo, v)
                    hi = max(hi, v)
                }
                out += [Int16(lo), Int16(hi)]
            }
        }
        return out
    }

    @Test(arguments: [(1, false), (2, false), (2, true)])
    func matchesTheReference(_ channels: Int, _ split: Bool) {
        var rng = SystemRandomNumberGenerator()
        var samples = (0..<(5000 * channels)).map { _ in Int16.random(in: .min ... .max, using: &rng) }
        samples[0] = .min
        samples[1] = -1
        samples[3] = .max
        for spp in [3, 64, 1000, 4999] {
            var r = WaveformReducer(samplesPerPixel: spp, inputChannels: channels, splitChannels: split)
            samples.withUnsafeBufferPointer { r.add($0) }
            r.finish()
            #expect(r.data == reference(samples, channels: channels, spp: spp, split: split), "spp \(spp)")
        }
    }

    /// Both paths of the stereo kernel, whichever the CPU would pick, on every length from 0 to
    /// 40 frames (the vector steps and the scalar tail) and at the extremes.
    @Test func stereoKernelPathsMatchThePlainArithmetic() {
        var rng = SystemRandomNumberGenerator()
        var samples = (0..<(1000 * 2)).map { _ in Int16.random(in: .min ... .max, using: &rng) }
        samples[10] = .min; samples[11] = .min  // -32768
        samples[20] = .max; samples[21] = .max  // 32767
        samples[30] = -1; samples[31] = -2  // -3 / 2 = -1
        samples[40] = 1; samples[41] = 2  // 3 / 2 = 1
        typealias Kernel = (UnsafePointer<Int16>?, Int, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?) -> Void
        var kernels: [(String, Kernel)] = [("sse2", gk_stereo_half_sum_range_sse2), ("dispatched", gk_stereo_half_sum_range)]
        if gk_cpu_has_avx2() == 1 { kernels.append(("avx2", gk_stereo_half_sum_range_avx2)) }
        for (name, kernel) in kernels {
            for (from, count) in (0...40).map({ (0, $0) }) + [(1, 999), (3, 517), (0, 1000)] {
                var expected = (lo: Int32.max, hi: Int32.min)
                for f in from..<(from + count) {
                    let v = (Int32(samples[f * 2]) + Int32(samples[f * 2 + 1])) / 2
                    expected = (min(expected.lo, v), max(expected.hi, v))
                }
                var lo: Int32 = 0, hi: Int32 = 0
                samples.withUnsafeBufferPointer { kernel($0.baseAddress! + from * 2, count, &lo, &hi) }
                #expect(lo == expected.lo && hi == expected.hi, "\(name), frames \(from)..<\(from + count)")
            }
        }
    }

    /// Buffers that end inside a bin and inside a 16-frame block carry the open bin over; maxabs
    /// folds each bin's range into (-v, v).
    @Test(arguments: WaveformReducer.Mode.allCases.filter { $0 != .rms })
    func stereoCombinedAcrossBuffers(_ mode: WaveformReducer.Mode) {
        var rng = SystemRandomNumberGenerator()
        var samples = (0..<(6000 * 2)).map { _ in Int16.random(in: .min ... .max, using: &rng) }
        samples[2] = .min
        samples[3] = .min  // (-32768 + -32768) / 2, the lowest combined value
        samples[4] = -1
        samples[5] = -2  // -3 / 2 = -1, not -2
        for spp in [2, 37, 256] {
            var r = WaveformReducer(samplesPerPixel: spp, inputChannels: 2, mode: mode)
            var f = 0
            for n in [1, 15, 17, 700, 1764].cycled(toCover: 6000) {
                let end = min(6000, f + n)
                samples[(f * 2)..<(end * 2)].withUnsafeBufferPointer { r.add($0) }
                f = end
                if f == 6000 { break }
            }
            r.finish()
            var expected = reference(samples, channels: 2, spp: spp, split: false)
            if mode == .maxabs {
                for i in stride(from: 0, to: expected.count, by: 2) {
                    let v = Int16(min(32767, max(abs(Int32(expected[i])), abs(Int32(expected[i + 1])))))
                    (expected[i], expected[i + 1]) = (-v, v)
                }
            }
            #expect(r.data == expected, "spp \(spp)")
        }
    }
}
