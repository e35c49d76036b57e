/// How many samples of an encoded audio stream are the encoder's lead-in (priming), and how
/// many are the input's: what an MP4 edit list or an iTunes `iTunSMPB` tag describes so that a
/// decoder gives back exactly the input. Measured while encoding (``Element/measureEncoderDelay()``).
public struct EncoderDelay: Sendable, Equatable {
    /// Samples the encoder put before the input's first one.
    public var priming: Int
    /// The input's sample count; whatever the last frame holds beyond it is padding.
    public var samples: Int
    public var sampleRate: Int

    public init(priming: Int, samples: Int, sampleRate: Int) {
        self.priming = priming
        self.samples = samples
        self.sampleRate = sampleRate
    }
}

/// How a video is meant to be shown: a rotation clockwise, after a mirror (left-right) for the
/// `flip` ones. The names are GStreamer's `image-orientation` tag values; in an MP4 or MOV
/// file it is the video track header's display matrix (`AVAssetTrack.preferredTransform`).
public enum DisplayOrientation: String, Sendable, CaseIterable {
    case rotate0 = "rotate-0", rotate90 = "rotate-90", rotate180 = "rotate-180", rotate270 = "rotate-270"
    case flipRotate0 = "flip-rotate-0", flipRotate90 = "flip-rotate-90"
    case flipRotate180 = "flip-rotate-180", flipRotate270 = "flip-rotate-270"

    /// Degrees clockwise, after the mirror when ``mirrored``.
    public var degrees: Int {
        switch self {
        case .rotate0, .flipRotate0: 0
        case .rotate90, .flipRotate90: 90
        case .rotate180, .flipRotate180: 180
        case .rotate270, .flipRotate270: 270
        }
    }

    public var mirrored: Bool { rawValue.hasPrefix("flip-") }
}

/// Something a writer learns from a stream on its way in.
public enum StreamFact: Sendable, Equatable {
    case orientation(DisplayOrientation)
    case encoderDelay(EncoderDelay)
}
