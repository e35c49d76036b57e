import FoundationEssentials
import Glibc

/// A stretch of silence that ``SilenceDetector`` found.
public struct SilenceEvent: Codable, Sendable, Equatable {
    /// The first silent frame's time and the first sounding frame's after it, in seconds from
    /// the stream's first frame; a silence still going when the stream ends ends there.
    public var start: Double
    public var end: Double
    public var duration: Double
    /// The largest sample in the stretch, in dBFS (`nil`: digital silence).
    public var peakDBFS: Double?
    /// The stretch's RMS level over every channel, in dBFS (`nil`: digital silence).
    public var rmsDBFS: Double?
}

/// What `analysis.silence` writes: the settings and the events found.
public struct SilenceReport: Codable, Sendable, Equatable {
    /// The settings the silences were found with (dBFS, seconds), the stream's rate and length, and the silences in order.
    public var thresholdDB: Double
    public var minimumDuration: Double
    public var sampleRate: Int
    public var durationSeconds: Double
    public var silences: [SilenceEvent]
}

/// The rule by which ``SilenceDetector`` calls a frame silent, alone: every channel's sample is
/// under the threshold in magnitude. `effect.trimSilence` applies it to find where sound starts
/// and ends.
public struct SilenceRule: Sendable, Equatable {
    public let thresholdDB: Double
    /// The threshold as a magnitude (full scale 1).
    public let threshold: Double

    public init(thresholdDB: Double) {
        self.thresholdDB = thresholdDB
        threshold = pow(10, thresholdDB / 20)
    }

    /// Whether a frame whose loudest sample has this magnitude is silent.
    @inline(__always) public func isSilent(loudest: Double) -> Bool { loudest < threshold }

    /// The first and the last frame of interleaved `samples` that are not silent; nil when every
    /// frame is: 32-bit float (full scale ±1) or 16-bit.
    public func soundingFrames(in samples: UnsafeBufferPointer<Float>, channels: Int) -> ClosedRange<Int>? {
        soundingFrames(count: samples.count, channels: channels) { Double(samples[$0]) }
    }

    public func soundingFrames(in samples: UnsafeBufferPointer<Int16>, channels: Int) -> ClosedRange<Int>? {
        soundingFrames(count: samples.count, channels: channels) { Double(samples[$0]) / 32768 }
    }

    private func soundingFrames(count: Int, channels: Int, _ sample: (Int) -> Double) -> ClosedRange<Int>? {
        let frames = count / channels
        func sounds(_ f: Int) -> Bool {
            var loudest = 0.0
            for c in 0..<channels { loudest = max(loudest, abs(sample(f * channels + c))) }
            return !isSilent(loudest: loudest)
        }
        guard let first = (0..<frames).first(where: sounds) else { return nil }
        let last = (first..<frames).reversed().first(where: sounds) ?? first
        return first...last
    }
}

/// Finds silences sample-exactly: a frame is silent when every channel's sample is under the
/// threshold in magnitude; a run of silent frames at least the minimum duration long is a
/// silence. Its start and end are frame times, so they are exact to the sample (ffmpeg's
/// `silencedetect` rule, whose `noise` is this threshold).
///
/// A noise floor above the threshold crosses zero often, but seldom stays under the threshold
/// for long: the minimum duration is what keeps it from making events.
public struct SilenceDetector: PCMMeasuring {
    /// The stream's format and the settings, fixed for the detector's life.
    public let sampleRate: Int
    public let channels: Int
    public let thresholdDB: Double
    public let minimumDuration: Double
    let rule: SilenceRule
    let minimumFrames: Int
    var frame = 0
    var runStart: Int?
    var runPeak = 0.0
    var runSquares = 0.0
    public private(set) var events: [SilenceEvent] = []

    /// - Parameters:
    ///   - thresholdDB: the level under which a sample is silent, in dBFS (a sample's magnitude).
    ///   - minimumDuration: the shortest silence reported, in seconds.
    ///   - sampleRate: the stream's, at least 1.
    ///   - channels: the stream's, at least 1.
    public init(sampleRate: Int, channels: Int, thresholdDB: Double, minimumDuration: Double) {
        precondition(sampleRate >= 1 && channels >= 1, "a silence detector needs a rate and a channel")
        precondition(thresholdDB.isFinite && minimumDuration.isFinite && (0...86_400).contains(minimumDuration),
                     "a silence detector needs a finite threshold and a minimum duration of 0 to 86,400 s")
        self.sampleRate = sampleRate
        self.channels = channels
        self.thresholdDB = thresholdDB
        self.minimumDuration = minimumDuration
        rule = SilenceRule(thresholdDB: thresholdDB)
        minimumFrames = max(1, Int((minimumDuration * Double(sampleRate)).rounded()))
    }

    /// Adds interleaved frames: 32-bit float (full scale ±1), 16-bit, or `Double`.
    public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        add(count: samples.count) { Double(samples[$0]) }
    }

    public mutating func add(_ samples: UnsafeBufferPointer<Int16>) {
        add(count: samples.count) { Double(samples[$0]) / 32768 }
    }

    public mutating func add(_ samples: [Double]) {
        samples.withUnsafeBufferPointer { p in add(count: p.count) { p[$0] } }
    }

    private mutating func add(count: Int, _ sample: (Int) -> Double) {
        let frames = count / channels
        for f in 0..<frames {
            var loudest = 0.0, squares = 0.0
            for c in 0..<channels {
                let v = sample(f * channels + c)
                loudest = max(loudest, abs(v))
                squares += v * v
            }
            if rule.isSilent(loudest: loudest) {
                if runStart == nil { runStart = frame; runPeak = 0; runSquares = 0 }
                runPeak = max(runPeak, loudest)
                runSquares += squares
            } else if runStart != nil {
                closeRun(at: frame)
            }
            frame += 1
        }
    }

    private mutating func closeRun(at end: Int) {
        guard let start = runStart else { return }
        runStart = nil
        guard end - start >= minimumFrames else { return }
        let rate = Double(sampleRate)
        let rms = (runSquares / Double((end - start) * channels)).squareRoot()
        events.append(SilenceEvent(start: Double(start) / rate, end: Double(end) / rate, duration: Double(end - start) / rate,
                                   peakDBFS: runPeak > 0 ? 20 * log10(runPeak) : nil, rmsDBFS: rms > 0 ? 20 * log10(rms) : nil))
    }

    /// Ends the stream: a silence still going ends at its last frame.
    public mutating func finish() { closeRun(at: frame) }

    /// The report of everything added (call ``finish()`` first).
    public var report: SilenceReport {
        SilenceReport(thresholdDB: thresholdDB, minimumDuration: minimumDuration, sampleRate: sampleRate,
                      durationSeconds: Double(frame) / Double(sampleRate), silences: events)
    }
}
