/// Formats written as text, the way `description` prints them, so a graph file can declare what
/// a `source.app` takes: `audio/pcm s16le 48000 Hz 2 ch`, `video/raw bgra 1280x720 30 fps`
/// (`30000/1001 fps`), `audio/aac`, `video/h264 1280x720`. Names are case-insensitive; the units
/// (`Hz`, `ch`, `fps`) may be left out.
extension MediaFormat {
    public init?(text: String) {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            .map { $0.lowercased() }
            .filter { !["hz", "ch", "fps"].contains($0) }
        guard let kind = words.first else { return nil }
        let rest = Array(words.dropFirst())
        switch kind {
        case "audio/pcm":
            guard rest.count == 3, let format = SampleFormat(rawValue: rest[0]),
                  let rate = Int(rest[1]), (1...768_000).contains(rate),
                  let channels = Int(rest[2]), (1...64).contains(channels) else { return nil }
            self = .pcm(.init(sampleRate: rate, channels: channels, sampleFormat: format))
        case "video/raw":
            guard rest.count == 3, let pixels = PixelFormat(rawValue: rest[0]),
                  let size = Self.size(rest[1]), let rate = Self.rate(rest[2]) else { return nil }
            self = .rawVideo(.init(pixelFormat: pixels, width: size.width, height: size.height, frameRate: rate))
        case "audio/aac":
            switch rest.count {
            case 0: self = .aac(sampleRate: nil, channels: nil)
            case 2:
                guard let rate = Int(rest[0]), rate > 0, let channels = Int(rest[1]), channels > 0 else { return nil }
                self = .aac(sampleRate: rate, channels: channels)
            default: return nil
            }
        case "video/h264":
            switch rest.count {
            case 0: self = .h264(width: nil, height: nil)
            case 1:
                guard let size = Self.size(rest[0]) else { return nil }
                self = .h264(width: size.width, height: size.height)
            default: return nil
            }
        default:
            if let coding = VideoCoding.allCases.first(where: { $0.kind.displayName == kind }) {
                switch rest.count {
                case 0: self = .video(coding, width: nil, height: nil)
                case 1:
                    guard let size = Self.size(rest[0]) else { return nil }
                    self = .video(coding, width: size.width, height: size.height)
                default: return nil
                }
            } else if let coding = AudioCoding.allCases.first(where: { $0.kind.displayName == kind }) {
                switch rest.count {
                case 0: self = .audio(coding, sampleRate: nil, channels: nil)
                case 2:
                    guard let rate = Int(rest[0]), rate > 0, let channels = Int(rest[1]), channels > 0 else { return nil }
                    self = .audio(coding, sampleRate: rate, channels: channels)
                default: return nil
                }
            } else {
                return nil
            }
        }
    }

    /// The text forms `init(text:)` reads, for messages.
    public static let textForms = "audio/pcm s16le 48000 Hz 2 ch, video/raw bgra 1280x720 30 fps, audio/aac, video/h264 (or video/hevc, video/vp9, video/av1, audio/opus, audio/flac, audio/alac)"

    private static func size(_ s: String) -> (width: Int, height: Int)? {
        let parts = s.split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (1...16_384).contains(w), (1...16_384).contains(h) else { return nil }
        return (w, h)
    }

    private static func rate(_ s: String) -> FrameRate? {
        let parts = s.split(separator: "/")
        guard let n = Int(parts[0]), n > 0, n <= 1_000_000, parts.count <= 2 else { return nil }
        guard parts.count == 2 else { return FrameRate(n) }
        guard let d = Int(parts[1]), d > 0, d <= 1_000_000 else { return nil }
        return FrameRate(n, d)
    }

    /// Whether a sample of this format is what `declared` says: equal, where `declared` leaves
    /// nothing open (a compressed format's declaration without rate or size takes any).
    public func fits(_ declared: MediaFormat) -> Bool {
        switch (self, declared) {
        case let (.aac(rate, channels), .aac(declaredRate, declaredChannels)):
            return (declaredRate == nil || rate == declaredRate) && (declaredChannels == nil || channels == declaredChannels)
        case let (.h264(w, h), .h264(declaredWidth, declaredHeight)):
            return (declaredWidth == nil || w == declaredWidth) && (declaredHeight == nil || h == declaredHeight)
        case let (.video(coding, w, h), .video(declaredCoding, declaredWidth, declaredHeight)):
            return coding == declaredCoding && (declaredWidth == nil || w == declaredWidth) && (declaredHeight == nil || h == declaredHeight)
        case let (.audio(coding, rate, channels), .audio(declaredCoding, declaredRate, declaredChannels)):
            return coding == declaredCoding && (declaredRate == nil || rate == declaredRate) && (declaredChannels == nil || channels == declaredChannels)
        default:
            return self == declared
        }
    }
}
