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

/// How a video track is meant to be drawn: the affine transform of its track header's display
/// matrix (`tkhd`), `x' = a·x + c·y + tx`, `y' = b·x + d·y + ty`, as AVFoundation's
/// `CGAffineTransform` (`AVAssetTrack.preferredTransform`, `AVAssetWriterInput.transform`) holds
/// it. Stored as 16.16 fixed point: about five decimals, and values within ±32,768.
public struct DisplayMatrix: Sendable, Equatable, CustomStringConvertible {
    public var a, b, c, d, tx, ty: Double

    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    public static let identity = DisplayMatrix(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    /// The largest value 16.16 fixed point holds.
    public static let limit = Double(Int32.max) / 65_536

    /// Whether the file can hold it: six finite numbers, each within ±``limit``.
    public var isStorable: Bool { [a, b, c, d, tx, ty].allSatisfy { $0.isFinite && abs($0) <= Self.limit } }

    /// The nine values of a track header's matrix (a, b, u, c, d, v, tx, ty, w; 2.30 for u, v, w).
    package init?(fixedPoint m: [Int32]) {
        guard m.count == 9 else { return nil }
        func f(_ v: Int32) -> Double { Double(v) / 65_536 }
        self.init(a: f(m[0]), b: f(m[1]), c: f(m[3]), d: f(m[4]), tx: f(m[6]), ty: f(m[7]))
    }

    /// The nine values to store (a storable matrix; see ``isStorable``).
    package var fixedPoint: [Int32] {
        func v(_ x: Double) -> Int32 { Int32((x * 65_536).rounded()) }
        return [v(a), v(b), 0, v(c), v(d), 0, v(tx), v(ty), 1 << 30]
    }

    /// "a b c d tx ty", as the `videoTransform` parameter of `sink.mp4` takes it.
    public var description: String { [a, b, c, d, tx, ty].map { "\($0)" }.joined(separator: " ") }

    /// Reads "a b c d tx ty": six numbers, by spaces or commas. Nil when it is not that.
    public init?(text: String) {
        let values = text.split(whereSeparator: { $0 == " " || $0 == "," }).map { Double(String($0)) }
        guard values.count == 6, values.allSatisfy({ $0 != nil }) else { return nil }
        let v = values.map { $0! }
        self.init(a: v[0], b: v[1], c: v[2], d: v[3], tx: v[4], ty: v[5])
    }
}

/// Something a writer learns from a stream on its way in.
public enum StreamFact: Sendable, Equatable {
    case orientation(DisplayOrientation)
    case encoderDelay(EncoderDelay)
}
