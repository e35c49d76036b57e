import FoundationEssentials
import Glibc

/// A look-ahead true-peak limiter: keeps interleaved float PCM at or under a ceiling between
/// samples as well as on them, and leaves the samples as they are wherever they already are
/// (its gain is exactly 1 there). What `effect.normalize` puts after its gain.
///
/// How (a value: time is the frame count, so a test drives it exactly):
/// 1. each frame's true peak: the largest magnitude of any channel at the frame and at three
///    points between it and the next (the signal oversampled 4× through a 12-tap Hann-windowed
///    sinc, each phase normalized to unity gain), as BS.1770-4 Annex 2 estimates it;
/// 2. the gain each frame needs, `ceiling / peak` where the peak is over the ceiling, else 1;
/// 3. the smallest of those over the next ``lookAheadFrames`` (a sliding minimum), released
///    toward 1 no faster than ``releaseSeconds`` allows, then averaged over the last
///    ``lookAheadFrames``: a ramp down that is complete when the peak arrives, never a step. The
///    average of values each at most the gain a frame needs is at most that gain, so no frame
///    passes over the ceiling.
///
/// Output lags input by ``delayFrames``; ``flush(into:)`` gives the last frames at the end.
public struct TruePeakLimiter: Sendable {
    public let channels: Int
    public let sampleRate: Int
    /// The ceiling, as a linear amplitude.
    public let ceiling: Float
    /// How far ahead the limiter looks: 5 ms.
    public let lookAheadFrames: Int
    /// How long the gain takes to recover (a time constant) after a peak: 100 ms.
    public static let releaseSeconds = 0.1
    static let halfTaps = 6
    /// Frames between a frame going in and coming out.
    public var delayFrames: Int { Self.halfTaps + lookAheadFrames - 1 }
    /// Frames the limiter turned down (gain under 1).
    public private(set) var limitedFrames = 0

    /// Three phases (¼, ½, ¾ of the way to the next frame), 2·halfTaps taps each, for frames
    /// j − halfTaps + 1 … j + halfTaps.
    private let phases: [Float]
    private let ringMask: Int
    private var ring: [Float]
    private var pushed = 0
    // The sliding minimum: a monotonic queue of (frame, gain needed), in a ring.
    private let queueMask: Int
    private var queueFrames: [Int]
    private var queueGains: [Float]
    private var queueHead = 0, queueCount = 0
    private let release: Double
    private var released = 1.0
    // The average of the last lookAheadFrames released gains (1 before the stream).
    private var window: [Double]
    private var windowSum: Double
    private var windowBelowOne = 0

    /// A limiter to `ceilingDB` dBTP (a ceiling of 0 dBTP or less).
    public init(channels: Int, sampleRate: Int, ceilingDB: Double) {
        self.channels = channels
        self.sampleRate = sampleRate
        ceiling = Float(pow(10, ceilingDB / 20))
        lookAheadFrames = max(2, Int((Double(sampleRate) * 0.005).rounded()))
        release = 1 - exp(-1 / (Self.releaseSeconds * Double(sampleRate)))
        let k = Self.halfTaps
        var taps: [Float] = []
        for f in 1...3 {
            let d = Double(f) / 4
            var phase = (-k + 1...k).map { t -> Double in
                let u = Double(t) - d
                let sinc = sin(Double.pi * u) / (Double.pi * u)
                return sinc * 0.5 * (1 + cos(Double.pi * u / Double(k)))
            }
            let sum = phase.reduce(0, +)
            phase = phase.map { $0 / sum }
            taps += phase.map(Float.init)
        }
        phases = taps
        var size = 1
        while size < 2 * k + lookAheadFrames + 2 { size *= 2 }
        ringMask = size - 1
        ring = Array(repeating: 0, count: size * channels)
        var q = 1
        while q < lookAheadFrames + 2 { q *= 2 }
        queueMask = q - 1
        queueFrames = Array(repeating: 0, count: q)
        queueGains = Array(repeating: 1, count: q)
        window = Array(repeating: 1, count: lookAheadFrames)
        windowSum = Double(lookAheadFrames)
    }

    /// Takes interleaved frames, each multiplied by a gain that moves linearly from `from`
    /// (before the first) to `to` (at the last), and appends the frames that come out. A sample
    /// that is not a finite number enters as 0.
    public mutating func process(_ input: UnsafeBufferPointer<Float>, gainFrom from: Float, to: Float, into output: inout [Float]) {
        let frames = input.count / channels
        guard frames > 0 else { return }
        output.reserveCapacity(output.count + input.count)
        let step = (to - from) / Float(frames)
        var frame = [Float](repeating: 0, count: channels)
        for i in 0..<frames {
            let g = from + step * Float(i + 1)
            for c in 0..<channels {
                let x = input[i * channels + c]
                frame[c] = x.isFinite ? x * g : 0
            }
            push(frame, into: &output)
        }
    }

    /// The frames still inside: silence is pushed until every frame that went in came out.
    public mutating func flush(into output: inout [Float]) {
        let silence = [Float](repeating: 0, count: channels)
        for _ in 0..<delayFrames { push(silence, into: &output) }
    }

    private mutating func push(_ frame: [Float], into output: inout [Float]) {
        let m = pushed
        pushed += 1
        let slot = (m & ringMask) * channels
        for c in 0..<channels { ring[slot + c] = frame[c] }
        let k = Self.halfTaps
        let j = m - k  // the frame whose true peak is now known (its taps reach frame m)
        guard j >= 0 else { return }
        var peak: Float = 0
        phases.withUnsafeBufferPointer { taps in
            ring.withUnsafeBufferPointer { ring in
                for c in 0..<channels {
                    peak = max(peak, abs(ring[(j & ringMask) * channels + c]))
                    for f in 0..<3 {
                        var acc: Float = 0
                        for t in 0..<(2 * k) {
                            acc += taps[f * 2 * k + t] * ring[((j - k + 1 + t) & ringMask) * channels + c]
                        }
                        peak = max(peak, abs(acc))
                    }
                }
            }
        }
        let needed: Float = peak > ceiling ? ceiling / peak : 1
        // Sliding minimum of the gain needed over frames i … i + lookAhead − 1, i = j − lookAhead + 1.
        while queueCount > 0, queueGains[(queueHead + queueCount - 1) & queueMask] >= needed { queueCount -= 1 }
        queueFrames[(queueHead + queueCount) & queueMask] = j
        queueGains[(queueHead + queueCount) & queueMask] = needed
        queueCount += 1
        let i = j - lookAheadFrames + 1
        while queueFrames[queueHead & queueMask] < i { queueHead += 1; queueCount -= 1 }
        let smallest = Double(queueGains[queueHead & queueMask])
        released = min(smallest, released + (1 - released) * release)
        if released > 1 - 1e-4 { released = 1 }  // recovered, 0.92 s after: an exponential never quite arrives
        let w = (i % lookAheadFrames + lookAheadFrames) % lookAheadFrames
        windowBelowOne += (released < 1 ? 1 : 0) - (window[w] < 1 ? 1 : 0)
        windowSum += released - window[w]
        window[w] = released
        // Where nothing needs limiting the gain is exactly 1 (and the sum starts afresh, exact).
        if windowBelowOne == 0 { windowSum = Double(lookAheadFrames) }
        guard i >= 0 else { return }
        let gain = windowBelowOne == 0 ? 1 : Float(min(1, windowSum / Double(lookAheadFrames)))
        if gain < 1 { limitedFrames += 1 }
        let out = (i & ringMask) * channels
        for c in 0..<channels { output.append(ring[out + c] * gain) }
    }
}
