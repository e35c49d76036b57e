import FoundationEssentials
import Glibc

/// What ``LoudnessMeter`` measured over a whole stream, per EBU R128 and ITU-R BS.1770-4: the
/// result `analysis.loudness` writes as JSON.
///
/// Loudness is in LUFS (loudness units relative to full scale), a range in LU, peaks in dB
/// relative to full scale (dBTP for the true peak, found on the signal oversampled as BS.1770-4
/// Annex 2 says). A value that the stream leaves undefined (the integrated loudness of silence:
/// every block under the absolute gate) is `nil`, written as JSON `null`.
public struct LoudnessMeasurement: Codable, Sendable, Equatable {
    /// Integrated (programme) loudness, gated at −70 LUFS and then 10 LU under the mean.
    public var integratedLUFS: Double?
    /// Loudness range (EBU Tech 3342): the spread of the short-term loudness, 10th to 95th
    /// percentile, of 3 s blocks gated at −70 LUFS and 20 LU under their mean.
    public var loudnessRangeLU: Double
    /// The largest true peak of any channel, at least its sample peak.
    public var truePeakDBTP: Double?
    /// The largest sample of any channel.
    public var samplePeakDBFS: Double?
    /// Each channel's true peak, in the stream's channel order.
    public var channelTruePeaksDBTP: [Double?]
    /// The relative gate the integrated loudness was measured with, in LUFS.
    public var integratedThresholdLUFS: Double?
    /// The relative gate of the loudness range, in LUFS.
    public var rangeThresholdLUFS: Double?
    /// The measured stream's rate (Hz) and channel count.
    public var sampleRate: Int
    public var channels: Int
    /// The frames measured, and their duration in seconds.
    public var frames: Int
    public var durationSeconds: Double
    /// Momentary (400 ms) and short-term (3 s) loudness every 100 ms, when asked for.
    public var series: [LoudnessPoint]?

    /// A momentary/short-term reading. `nil` loudness: the window is not yet full, or silent.
    public struct LoudnessPoint: Codable, Sendable, Equatable {
        /// The end of the window, in seconds from the first frame.
        public var time: Double
        /// Loudness of the last 400 ms, and (below) of the last 3 s.
        public var momentaryLUFS: Double?
        public var shortTermLUFS: Double?
    }
}

/// An EBU R128 / ITU-R BS.1770-4 loudness meter, in Swift: K-weighting (the two filters of
/// BS.1770, their coefficients computed for any rate as libebur128 does), 400 ms gating blocks
/// every 100 ms, 3 s short-term blocks every second for the loudness range, and true peak on the
/// signal oversampled 4× below 96 kHz (2× below 192 kHz) through a 49-tap Hann-windowed sinc.
///
/// A value: feed it interleaved PCM with ``add(_:)-(UnsafeBufferPointer<Float>)`` or
/// ``add(_:)-(UnsafeBufferPointer<Int16>)``, then read ``measurement``. Memory grows with the
/// stream's length by one `Double` per 100 ms (and per second, and a series point per 100 ms
/// when ``keepsSeries``): about 0.6 MB for an hour.
///
/// Channel weights follow BS.1770 and libebur128's default order: 1 for the first three
/// channels (left, right, centre), 0 for the fourth (LFE) of five-or-more, 1.41 for surrounds
/// (4 channels: L R Ls Rs; 5: L R C Ls Rs; 6: L R C LFE Ls Rs); channels past the sixth count 0.
public struct LoudnessMeter: PCMMeasuring {
    /// The stream's rate (Hz) and channel count, fixed for the meter's life.
    public let sampleRate: Int
    public let channels: Int
    /// Whether ``measurement`` includes the momentary/short-term series.
    public let keepsSeries: Bool

    /// Energies below this (−70 LUFS) are never counted: BS.1770's absolute gate.
    static let absoluteGateEnergy = energy(ofLoudness: -70)

    let segmentFrames: Int
    let weights: [Double]
    // K-weighting: a high shelf, then a high pass, as two biquads (b0 b1 b2 a1 a2).
    let shelf: (Double, Double, Double, Double, Double)
    let highPass: (Double, Double, Double, Double, Double)
    var filterState: [Double]  // 4 per channel: shelf z1 z2, high pass z1 z2
    // The 100 ms segment being filled: weighted squares summed per channel.
    var segmentSums: [Double]
    var segmentFilled = 0
    var segmentEnergies: [Double] = []  // each closed segment: the channels' weighted sum of squares
    var blockEnergies: [Double] = []  // 400 ms blocks, every 100 ms, at or above the absolute gate
    var shortTermEnergies: [Double] = []  // 3 s blocks, every second, at or above the absolute gate
    var seriesPoints: [LoudnessMeasurement.LoudnessPoint] = []
    var samplePeaks: [Double]
    var truePeaks: [Double]
    var framesSeen = 0
    // True peak: the interpolator's taps, phase after phase (phase i ends at phaseEnds[i]).
    // In Float: the interpolation is most of the meter's work, and Float's 24 bits are far
    // finer than the 0.01 dB a true peak is written to.
    let tapCoefficients: [Float]
    let tapDelays: [Int]
    let phaseEnds: [Int]
    let historyLength: Int
    var history: [Float]  // the last historyLength samples of each channel, oldest first
    var scratch: [Double] = []
    var line: [Float] = []  // one channel's history and new samples, kept between calls

    /// A meter of a stream of `channels` channels at `sampleRate` Hz (1 to 64 channels,
    /// ``lowestRate`` Hz and up, where BS.1770's filters are stable).
    public init(sampleRate: Int, channels: Int, keepsSeries: Bool = false) {
        precondition(sampleRate >= Self.lowestRate && (1...64).contains(channels), "a loudness meter needs \(Self.lowestRate) Hz or more and 1 to 64 channels")
        self.sampleRate = sampleRate
        self.channels = channels
        self.keepsSeries = keepsSeries
        segmentFrames = (sampleRate + 5) / 10
        weights = (0..<channels).map { Self.weight(channel: $0, of: channels) }
        let rate = Double(sampleRate)
        do {
            let f0 = 1681.974450955533, gain = 3.999843853973347, q = 0.7071752369554196
            let k = tan(Double.pi * f0 / rate)
            let vh = pow(10, gain / 20), vb = pow(vh, 0.4996667741545416)
            let a0 = 1 + k / q + k * k
            shelf = ((vh + vb * k / q + k * k) / a0, 2 * (k * k - vh) / a0, (vh - vb * k / q + k * k) / a0,
                     2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0)
        }
        do {
            let f0 = 38.13547087602444, q = 0.5003270373238773
            let k = tan(Double.pi * f0 / rate)
            let a0 = 1 + k / q + k * k
            highPass = (1, -2, 1, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0)
        }
        filterState = Array(repeating: 0, count: 4 * channels)
        segmentSums = Array(repeating: 0, count: channels)
        samplePeaks = Array(repeating: 0, count: channels)
        truePeaks = Array(repeating: 0, count: channels)
        let factor = sampleRate < 96_000 ? 4 : sampleRate < 192_000 ? 2 : 1
        let phases = Self.interpolationPhases(taps: 49, factor: factor)
        tapCoefficients = phases.flatMap { $0.map { Float($0.coefficient) } }
        tapDelays = phases.flatMap { $0.map(\.delay) }
        phaseEnds = phases.reduce(into: [Int]()) { $0.append(($0.last ?? 0) + $1.count) }
        historyLength = (49 + factor - 1) / factor
        history = Array(repeating: 0, count: historyLength * channels)
    }

    static func weight(channel: Int, of count: Int) -> Double {
        switch count {
        case 4: return channel < 2 ? 1 : 1.41
        case 5: return channel < 3 ? 1 : 1.41
        default: return channel < 3 ? 1 : channel == 3 ? 0 : channel < 6 ? 1.41 : 0
        }
    }

    /// The polyphase split of a Hann-windowed sinc low pass (cut-off at the input's Nyquist
    /// frequency): phase f makes output sample n·factor + f. With factor 1, one unit tap.
    static func interpolationPhases(taps: Int, factor: Int) -> [[(coefficient: Double, delay: Int)]] {
        guard factor > 1 else { return [[(1, 0)]] }
        var phases = Array(repeating: [(coefficient: Double, delay: Int)](), count: factor)
        for j in 0..<taps {
            let m = Double(j) - Double(taps - 1) / 2
            var c = abs(m) > 1e-6 ? sin(m * .pi / Double(factor)) / (m * .pi / Double(factor)) : 1
            c *= 0.5 * (1 - cos(2 * .pi * Double(j) / Double(taps - 1)))
            if abs(c) > 1e-6 { phases[j % factor].append((c, j / factor)) }
        }
        return phases
    }

    static func loudness(ofEnergy energy: Double) -> Double? {
        energy > 0 ? 10 * log10(energy) - 0.691 : nil
    }

    static func energy(ofLoudness lufs: Double) -> Double { pow(10, (lufs + 0.691) / 10) }

    static func decibels(_ amplitude: Double) -> Double? { amplitude > 0 ? 20 * log10(amplitude) : nil }

    /// The lowest rate measured: BS.1770's high-frequency shelf sits at 1,682 Hz, and below
    /// twice that its filter is unstable (its output grows without bound).
    public static let lowestRate = 4_000

    /// Adds interleaved 32-bit float frames (full scale ±1). A sample that is not a number or is
    /// infinite counts as silence: one would otherwise poison the filters for the rest of the
    /// stream (NaN) or make every figure infinite.
    public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        if scratch.count != samples.count { scratch = [Double](repeating: 0, count: samples.count) }
        scratch.withUnsafeMutableBufferPointer { out in
            for i in samples.indices { out[i] = samples[i].isFinite ? Double(samples[i]) : 0 }
        }
        addScratch()
    }

    /// Adds interleaved signed 16-bit frames (full scale 32768).
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples.lazy.map { Double($0) / 32768 })
        addScratch()
    }

    /// Adds interleaved frames already as `Double` (full scale ±1).
    public mutating func add(_ samples: [Double]) {
        scratch = samples.allSatisfy(\.isFinite) ? samples : samples.map { $0.isFinite ? $0 : 0 }
        addScratch()
    }

    private mutating func addScratch() {
        let frames = scratch.count / channels
        var start = 0
        while start < frames {
            let count = min(frames - start, segmentFrames - segmentFilled)
            for c in 0..<channels { process(channel: c, from: start, count: count) }
            segmentFilled += count
            framesSeen += count
            start += count
            if segmentFilled == segmentFrames { closeSegment() }
        }
    }

    /// Filters `count` frames of one channel from frame `start` of the scratch buffer: peaks,
    /// true peak, and K-weighted energy into the open segment.
    private mutating func process(channel c: Int, from start: Int, count: Int) {
        let channels = self.channels
        let (b0, b1, b2, a1, a2) = shelf
        let (h0, h1, h2, g1, g2) = highPass
        var s1 = filterState[4 * c], s2 = filterState[4 * c + 1], p1 = filterState[4 * c + 2], p2 = filterState[4 * c + 3]
        var sum = 0.0, peak = samplePeaks[c], truePeak = truePeaks[c]
        let historyLength = self.historyLength
        // The channel's recent samples then these, so each tap reads back without wrapping (and
        // eight lanes past the end, so a vector load never leaves the buffer).
        var line: [Float] = []
        swap(&line, &self.line)
        defer { swap(&line, &self.line) }
        if line.count < historyLength + count + 8 { line = [Float](repeating: 0, count: historyLength + count + 8) }
        for i in 0..<historyLength { line[i] = history[c * historyLength + i] }
        scratch.withUnsafeBufferPointer { input in
            for i in 0..<count {
                let x = input[(start + i) * channels + c]
                line[historyLength + i] = Float(x)
                peak = max(peak, abs(x))
                // Direct form II transposed, twice.
                let y = b0 * x + s1
                s1 = b1 * x - a1 * y + s2
                s2 = b2 * x - a2 * y
                let z = h0 * y + p1
                p1 = h1 * y - g1 * z + p2
                p2 = h2 * y - g2 * z
                sum += z * z
            }
        }
        line.withUnsafeBufferPointer { line in
            tapCoefficients.withUnsafeBufferPointer { coefficients in
                tapDelays.withUnsafeBufferPointer { delays in
                    // Eight output samples of a phase at once: each tap reads eight neighbours.
                    let samples = UnsafeRawPointer(line.baseAddress!)
                    var peaks = SIMD8<Float>(repeating: 0)
                    var first = 0
                    for end in phaseEnds {
                        var i = 0
                        while i + 8 <= count {
                            var acc = SIMD8<Float>(repeating: 0)
                            for t in first..<end {
                                acc += coefficients[t] * samples.loadUnaligned(fromByteOffset: (historyLength + i - delays[t]) * 4, as: SIMD8<Float>.self)
                            }
                            // |acc| by its sign bit, and a masked max: pointwiseMax was not inlined,
                            // a fifth of the meter's time.
                            let magnitude = unsafeBitCast(unsafeBitCast(acc, to: SIMD8<UInt32>.self) & SIMD8<UInt32>(repeating: 0x7FFF_FFFF),
                                                          to: SIMD8<Float>.self)
                            peaks.replace(with: magnitude, where: magnitude .> peaks)
                            i += 8
                        }
                        while i < count {
                            var acc: Float = 0
                            for t in first..<end { acc += coefficients[t] * line[historyLength + i - delays[t]] }
                            truePeak = max(truePeak, Double(abs(acc)))
                            i += 1
                        }
                        first = end
                    }
                    truePeak = max(truePeak, Double(peaks.max()))
                }
            }
            for i in 0..<historyLength { history[c * historyLength + i] = line[count + i] }
        }
        filterState[4 * c] = s1; filterState[4 * c + 1] = s2; filterState[4 * c + 2] = p1; filterState[4 * c + 3] = p2
        segmentSums[c] += sum
        samplePeaks[c] = peak
        truePeaks[c] = truePeak
    }

    private mutating func closeSegment() {
        var energy = 0.0
        for c in 0..<channels { energy += segmentSums[c] * weights[c]; segmentSums[c] = 0 }
        segmentFilled = 0
        segmentEnergies.append(energy)
        let n = segmentEnergies.count
        func window(_ segments: Int) -> Double? {
            guard n >= segments else { return nil }
            return segmentEnergies[(n - segments)...].reduce(0, +) / Double(segments * segmentFrames)
        }
        let momentary = window(4), shortTerm = window(30)
        if let momentary, momentary >= Self.absoluteGateEnergy { blockEnergies.append(momentary) }
        // Short-term blocks for the range: at 3 s, then every second.
        if let shortTerm, (n - 30) % 10 == 0, shortTerm >= Self.absoluteGateEnergy { shortTermEnergies.append(shortTerm) }
        if keepsSeries {
            seriesPoints.append(.init(time: Double(n * segmentFrames) / Double(sampleRate),
                                      momentaryLUFS: momentary.flatMap(Self.loudness(ofEnergy:)).map(Self.rounded),
                                      shortTermLUFS: shortTerm.flatMap(Self.loudness(ofEnergy:)).map(Self.rounded)))
        }
    }

    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    /// The loudness of the last `seconds` measured, gated as the integrated loudness is (400 ms
    /// blocks every 100 ms, −70 LUFS, then 10 LU under their mean): a moving integrated loudness,
    /// what `effect.normalize`'s live mode steers by. Nil before 400 ms, or when all is silent.
    func recentLoudness(seconds: Double) -> Double? {
        let n = segmentEnergies.count
        guard n >= 4 else { return nil }
        let first = max(4, n - max(1, Int(seconds * 10)) + 1)
        var blocks: [Double] = []
        for end in first...n {
            let energy = segmentEnergies[(end - 4)..<end].reduce(0, +) / Double(4 * segmentFrames)
            if energy >= Self.absoluteGateEnergy { blocks.append(energy) }
        }
        guard !blocks.isEmpty else { return nil }
        let gate = blocks.reduce(0, +) / Double(blocks.count) * 0.1
        let kept = blocks.filter { $0 >= gate }
        return Self.loudness(ofEnergy: kept.reduce(0, +) / Double(kept.count))
    }

    /// The measurement of every frame added so far (a partial last 100 ms counts in the peaks,
    /// not in the loudness: BS.1770's blocks are whole).
    public var measurement: LoudnessMeasurement {
        var integrated: Double?, integratedGate: Double?
        if !blockEnergies.isEmpty {
            let gate = blockEnergies.reduce(0, +) / Double(blockEnergies.count) * 0.1  // −10 LU
            let kept = blockEnergies.filter { $0 >= gate }
            integratedGate = Self.loudness(ofEnergy: gate)
            integrated = kept.isEmpty ? nil : Self.loudness(ofEnergy: kept.reduce(0, +) / Double(kept.count))
        }
        var range = 0.0, rangeGate: Double?
        if !shortTermEnergies.isEmpty {
            let gate = shortTermEnergies.reduce(0, +) / Double(shortTermEnergies.count) * 0.01  // −20 LU
            rangeGate = Self.loudness(ofEnergy: gate)
            let kept = shortTermEnergies.filter { $0 >= gate }.sorted()
            if !kept.isEmpty {
                let low = kept[Int(Double(kept.count - 1) * 0.1 + 0.5)], high = kept[Int(Double(kept.count - 1) * 0.95 + 0.5)]
                range = (Self.loudness(ofEnergy: high) ?? 0) - (Self.loudness(ofEnergy: low) ?? 0)
            }
        }
        let channelTruePeaks = (0..<channels).map { max(truePeaks[$0], samplePeaks[$0]) }
        return LoudnessMeasurement(
            integratedLUFS: integrated, loudnessRangeLU: range,
            truePeakDBTP: Self.decibels(channelTruePeaks.max() ?? 0),
            samplePeakDBFS: Self.decibels(samplePeaks.max() ?? 0),
            channelTruePeaksDBTP: channelTruePeaks.map(Self.decibels),
            integratedThresholdLUFS: integratedGate, rangeThresholdLUFS: rangeGate,
            sampleRate: sampleRate, channels: channels, frames: framesSeen,
            durationSeconds: Double(framesSeen) / Double(sampleRate),
            series: keepsSeries ? seriesPoints : nil)
    }
}
