@_spi(Engine) import Assets
@_spi(Engine) import GraphKitCore

/// How sound tracks are mixed, as AVFoundation's `AVAudioMix`: each track's volume over time.
/// Applied by `AVAssetExportSession.audioMix` to the sound track an export encodes.
open class AVAudioMix: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; set up before it is given to an export, which copies it.
    public internal(set) var inputParameters: [AVAudioMixInputParameters] = []
    init() {}

    /// GraphKit's value of it, as an export applies it (the last parameters of a track win).
    var engineValue: AudioMix {
        AudioMix(volumes: Dictionary(inputParameters.map { (Int($0.trackID), $0.volume) }, uniquingKeysWith: { _, last in last }))
    }
}

open class AVMutableAudioMix: AVAudioMix, @unchecked Sendable {
    public override init() { super.init() }
    public override var inputParameters: [AVAudioMixInputParameters] {
        get { super.inputParameters }
        set { super.inputParameters = newValue }
    }
}

/// One track's volume over time, as AVFoundation's: 1 before the first value set; a value set at
/// a time holds until the next; a ramp changes linearly across its range.
open class AVAudioMixInputParameters: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; set up before its mix is given to an export.
    public internal(set) var trackID: CMPersistentTrackID
    public internal(set) var audioTimePitchAlgorithm: AVAudioTimePitchAlgorithm?
    var volume = Timeline<Double>(before: 1)

    init(trackID: CMPersistentTrackID) { self.trackID = trackID }

    /// The volume ramp in effect at `time`; false before the first value set.
    public func getVolumeRamp(for time: CMTime, startVolume: UnsafeMutablePointer<Float>?, endVolume: UnsafeMutablePointer<Float>?,
                              timeRange: UnsafeMutablePointer<CMTimeRange>?) -> Bool {
        rampReport(volume, at: time, startVolume, endVolume, timeRange) { Float($0) }
    }
}

open class AVMutableAudioMixInputParameters: AVAudioMixInputParameters, @unchecked Sendable {
    public init() { super.init(trackID: kCMPersistentTrackID_Invalid) }

    /// The parameters of `track` (nil: set `trackID` later).
    public convenience init(track: AVAssetTrack?) {
        self.init()
        trackID = track?.trackID ?? kCMPersistentTrackID_Invalid
    }

    public override var trackID: CMPersistentTrackID {
        get { super.trackID }
        set { super.trackID = newValue }
    }
    public override var audioTimePitchAlgorithm: AVAudioTimePitchAlgorithm? {
        get { super.audioTimePitchAlgorithm }
        set { super.audioTimePitchAlgorithm = newValue }
    }

    /// `volume` (0 silent, 1 as recorded) from `time` on. A time that is not a number changes nothing.
    public func setVolume(_ volume: Float, at time: CMTime) {
        guard let t = time.mediaTime else { return }
        self.volume.set(Double(volume), at: t)
    }

    /// From `startVolume` to `endVolume` across `timeRange`: a fade.
    public func setVolumeRamp(fromStartVolume startVolume: Float, toEndVolume endVolume: Float, timeRange: CMTimeRange) {
        guard let r = timeRange.mediaTimeRange else { return }
        volume.ramp(from: Double(startVolume), to: Double(endVolume), over: r)
    }
}

/// How a sound's pitch is kept when its speed changes, as AVFoundation's names it. GraphKit's
/// exports do not change speed, so it is kept and has no effect.
public struct AVAudioTimePitchAlgorithm: RawRepresentable, Hashable, Sendable {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let lowQualityZeroLatency = AVAudioTimePitchAlgorithm(rawValue: "LowQualityZeroLatency")
    public static let timeDomain = AVAudioTimePitchAlgorithm(rawValue: "TimeDomain")
    public static let spectral = AVAudioTimePitchAlgorithm(rawValue: "Spectral")
    public static let varispeed = AVAudioTimePitchAlgorithm(rawValue: "Varispeed")
}
