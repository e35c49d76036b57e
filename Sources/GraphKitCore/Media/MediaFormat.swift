/// What a buffer holds, like `CMFormatDescription`. Maps to and from GStreamer caps.
public enum MediaFormat: Sendable, Hashable, CustomStringConvertible {
    /// Interleaved PCM audio.
    case pcm(PCMFormat)
    /// AAC audio (raw access units, as MP4 stores them).
    case aac(sampleRate: Int?, channels: Int?)
    /// Uncompressed video frames.
    case rawVideo(VideoFormat)
    /// H.264 video (AVC, as MP4 stores it).
    case h264(width: Int?, height: Int?)
    /// Compressed video past H.264: HEVC, VP9 or AV1 (`kCMVideoCodecType_HEVC`, `_VP9`, `_AV1`).
    case video(VideoCoding, width: Int?, height: Int?)
    /// Compressed audio past AAC: Opus, FLAC or ALAC (`kAudioFormatOpus`, `_FLAC`, `_AppleLossless`).
    case audio(AudioCoding, sampleRate: Int?, channels: Int?)
    /// Waveform peaks: min/max pairs per bin per channel.
    case peaks(samplesPerPixel: Int, channels: Int)
    /// The bytes of a media file before demuxing.
    case container
    /// Anything else, by its media type name.
    case data(String)

    public struct PCMFormat: Sendable, Hashable {
        public var sampleRate: Int
        public var channels: Int
        public var sampleFormat: SampleFormat
        public init(sampleRate: Int, channels: Int, sampleFormat: SampleFormat) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.sampleFormat = sampleFormat
        }
        /// Bytes of one frame (one sample of every channel).
        public var bytesPerFrame: Int { channels * sampleFormat.bytesPerSample }
    }

    public struct VideoFormat: Sendable, Hashable {
        public var pixelFormat: PixelFormat
        public var width: Int
        public var height: Int
        public var frameRate: FrameRate
        public init(pixelFormat: PixelFormat, width: Int, height: Int, frameRate: FrameRate) {
            self.pixelFormat = pixelFormat
            self.width = width
            self.height = height
            self.frameRate = frameRate
        }
    }

    public var kind: FormatKind {
        switch self {
        case .pcm: .pcm
        case .aac: .aac
        case .rawVideo: .rawVideo
        case .h264: .h264
        case .video(let coding, _, _): coding.kind
        case .audio(let coding, _, _): coding.kind
        case .peaks: .peaks
        case .container: .container
        case .data: .data
        }
    }

    /// Speaker positions by channel count, 3 to 8: 2.1, quad, 5.0, 5.1, 6.1, 7.1.
    static let channelMasks: [Int: UInt64] = [3: 0xb, 4: 0x33, 5: 0x37, 6: 0x3f, 7: 0x13f, 8: 0xc3f]

    /// The GStreamer caps string for this format.
    public var capsString: String {
        switch self {
        case .pcm(let f):
            var s = "audio/x-raw, format=(string)\(f.sampleFormat.gstName), layout=(string)interleaved, rate=(int)\(f.sampleRate), channels=(int)\(f.channels)"
            // Past stereo, GStreamer needs to know which speaker each channel is for (audioconvert
            // refuses caps without it): the usual layout for the count, as GStreamer's
            // gst_audio_channel_get_fallback_mask and ffmpeg's default layouts give it.
            if let mask = Self.channelMasks[f.channels] { s += ", channel-mask=(bitmask)0x\(String(mask, radix: 16))" }
            return s
        case .aac(let rate, let channels):
            var s = "audio/mpeg, mpegversion=(int)4"
            if let rate { s += ", rate=(int)\(rate)" }
            if let channels { s += ", channels=(int)\(channels)" }
            return s
        case .rawVideo(let v):
            return "video/x-raw, format=(string)\(v.pixelFormat.gstName), width=(int)\(v.width), height=(int)\(v.height), framerate=(fraction)\(v.frameRate.numerator)/\(v.frameRate.denominator)"
        case .h264(let w, let h):
            var s = "video/x-h264"
            if let w { s += ", width=(int)\(w)" }
            if let h { s += ", height=(int)\(h)" }
            return s
        case .video(let coding, let w, let h):
            var s = coding.capsName
            if let w { s += ", width=(int)\(w)" }
            if let h { s += ", height=(int)\(h)" }
            return s
        case .audio(let coding, let rate, let channels):
            var s = coding.capsName
            if let rate { s += ", rate=(int)\(rate)" }
            if let channels { s += ", channels=(int)\(channels)" }
            return s
        case .peaks(let spp, let channels):
            return "application/x-graphkit-peaks, samples-per-pixel=(int)\(spp), channels=(int)\(channels)"
        case .container:
            return "application/octet-stream"
        case .data(let name):
            return name
        }
    }

    public var description: String {
        switch self {
        case .pcm(let f): "audio/pcm \(f.sampleFormat.gstName) \(f.sampleRate) Hz \(f.channels) ch"
        case .aac(let r, let c): "audio/aac" + (r.map { " \($0) Hz" } ?? "") + (c.map { " \($0) ch" } ?? "")
        case .rawVideo(let v): "video/raw \(v.pixelFormat.gstName) \(v.width)x\(v.height) \(v.frameRate)"
        case .h264(let w, let h): "video/h264" + ((w != nil && h != nil) ? " \(w!)x\(h!)" : "")
        case .video(let coding, let w, let h): coding.kind.displayName + ((w != nil && h != nil) ? " \(w!)x\(h!)" : "")
        case .audio(let coding, let r, let c): coding.kind.displayName + (r.map { " \($0) Hz" } ?? "") + (c.map { " \($0) ch" } ?? "")
        case .peaks(let spp, let c): "peaks \(spp) samples/pixel \(c) ch"
        case .container: "container stream"
        case .data(let n): n
        }
    }
}

/// Compressed video codecs past H.264, each its own kind of port.
public enum VideoCoding: String, Sendable, Hashable, CaseIterable {
    case hevc, vp9, av1
    public var kind: FormatKind {
        switch self {
        case .hevc: .hevc
        case .vp9: .vp9
        case .av1: .av1
        }
    }
    /// GStreamer's media type for the codec.
    public var capsName: String {
        switch self {
        case .hevc: "video/x-h265"
        case .vp9: "video/x-vp9"
        case .av1: "video/x-av1"
        }
    }
}

/// Compressed audio codecs past AAC, each its own kind of port.
public enum AudioCoding: String, Sendable, Hashable, CaseIterable {
    case opus, flac, alac
    public var kind: FormatKind {
        switch self {
        case .opus: .opus
        case .flac: .flac
        case .alac: .alac
        }
    }
    /// GStreamer's media type for the codec.
    public var capsName: String {
        switch self {
        case .opus: "audio/x-opus"
        case .flac: "audio/x-flac"
        case .alac: "audio/x-alac"
        }
    }
}

public enum SampleFormat: String, Sendable, Hashable, CaseIterable {
    case s16le, f32le
    public var bytesPerSample: Int {
        switch self {
        case .s16le: 2
        case .f32le: 4
        }
    }
    public var gstName: String {
        switch self {
        case .s16le: "S16LE"
        case .f32le: "F32LE"
        }
    }
    public init?(gstName: String) {
        switch gstName {
        case "S16LE": self = .s16le
        case "F32LE": self = .f32le
        default: return nil
        }
    }
}

public enum PixelFormat: String, Sendable, Hashable, CaseIterable {
    case bgra, rgba, i420, nv12
    /// I420 with 10 bits a sample, each in a 16-bit little-endian word (GStreamer's I420_10LE):
    /// 10-bit video (phones' HDR) decoded and kept so to an encoder that takes it
    /// (`encode.hevc`'s main10), with no 8-bit step between.
    case i420_10le
    /// NV12 with 10 bits a sample, each in the high bits of a 16-bit little-endian word
    /// (GStreamer's P010_10LE; CoreVideo's `kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange`,
    /// what Apple's decoders give for 10-bit HEVC).
    case p010_10le
    public var gstName: String { rawValue.uppercased() }
    /// The 8-bit formats: what a port that reads or writes pixels takes unless it says more.
    public static let eightBit: Set<PixelFormat> = [.bgra, .rgba, .i420, .nv12]
    /// The 10-bit formats, which only the ports that say so take.
    public static let tenBit: Set<PixelFormat> = [.i420_10le, .p010_10le]
    /// Bits a sample.
    public var bitDepth: Int { Self.tenBit.contains(self) ? 10 : 8 }
    /// How many planes a frame has: one for packed RGB, Y then U and V (I420), Y then UV (NV12).
    public var planeCount: Int {
        switch self {
        case .bgra, .rgba: 1
        case .i420, .i420_10le: 3
        case .nv12, .p010_10le: 2
        }
    }
    /// Bytes of one pixel's worth of `plane` (a BGRA pixel, an I420 sample, an NV12 chroma pair).
    public func bytesPerPixel(plane: Int) -> Int {
        switch self {
        case .bgra, .rgba: 4
        case .i420: 1
        case .nv12: plane > 0 ? 2 : 1
        case .i420_10le: 2
        case .p010_10le: plane > 0 ? 4 : 2
        }
    }
    public init?(gstName: String) { self.init(rawValue: gstName.lowercased()) }
}

public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int
    public var denominator: Int
    public init(_ numerator: Int, _ denominator: Int = 1) {
        self.numerator = numerator
        self.denominator = denominator
    }
    public var framesPerSecond: Double { Double(numerator) / Double(denominator) }
    public var description: String { denominator == 1 ? "\(numerator) fps" : "\(numerator)/\(denominator) fps" }
}

/// The broad kind of a format, as a port declares it.
public enum FormatKind: String, Sendable, Hashable, CaseIterable {
    case pcm, aac, rawVideo, h264, hevc, vp9, av1, opus, flac, alac, peaks, container, data
    public var displayName: String {
        switch self {
        case .pcm: "audio/pcm"
        case .aac: "audio/aac"
        case .rawVideo: "video/raw"
        case .h264: "video/h264"
        case .hevc: "video/hevc"
        case .vp9: "video/vp9"
        case .av1: "video/av1"
        case .opus: "audio/opus"
        case .flac: "audio/flac"
        case .alac: "audio/alac"
        case .peaks: "peaks"
        case .container: "container stream"
        case .data: "data"
        }
    }
}

/// The formats a port accepts or offers, like a pad template's caps: kinds with ranges.
/// Connecting two ports needs a non-empty intersection, checked when a graph loads.
public struct FormatSet: Sendable, Hashable, CustomStringConvertible {
    public enum Pattern: Sendable, Hashable {
        case pcm(sampleFormats: Set<SampleFormat>, sampleRates: ClosedRange<Int>, channels: ClosedRange<Int>)
        case aac
        case rawVideo(pixelFormats: Set<PixelFormat>)
        case h264
        case video(VideoCoding)
        case audio(AudioCoding)
        case peaks
        case container
        case any

        var kind: FormatKind? {
            switch self {
            case .pcm: .pcm
            case .aac: .aac
            case .rawVideo: .rawVideo
            case .h264: .h264
            case .video(let c): c.kind
            case .audio(let c): c.kind
            case .peaks: .peaks
            case .container: .container
            case .any: nil
            }
        }

        /// Exhaustive, with no `default:`: a new kind must say what it meets.
        func intersects(_ other: Pattern) -> Bool {
            switch (self, other) {
            case (.any, _), (_, .any): return true
            case let (.pcm(f1, r1, c1), .pcm(f2, r2, c2)):
                return !f1.isDisjoint(with: f2) && r1.overlaps(r2) && c1.overlaps(c2)
            case let (.rawVideo(p1), .rawVideo(p2)):
                return !p1.isDisjoint(with: p2)
            case (.aac, .aac), (.h264, .h264), (.peaks, .peaks), (.container, .container):
                return true
            case let (.video(c1), .video(c2)):
                return c1 == c2
            case let (.audio(c1), .audio(c2)):
                return c1 == c2
            case (.pcm, _), (.aac, _), (.rawVideo, _), (.h264, _), (.video, _), (.audio, _), (.peaks, _), (.container, _):
                return false
            }
        }

        /// The formats both patterns describe, or nil when none.
        func intersection(_ other: Pattern) -> Pattern? {
            switch (self, other) {
            case (.any, let p), (let p, .any): return p
            case let (.pcm(f1, r1, c1), .pcm(f2, r2, c2)):
                let f = f1.intersection(f2)
                guard !f.isEmpty, r1.overlaps(r2), c1.overlaps(c2) else { return nil }
                return .pcm(sampleFormats: f, sampleRates: r1.clamped(to: r2), channels: c1.clamped(to: c2))
            case let (.rawVideo(p1), .rawVideo(p2)):
                let p = p1.intersection(p2)
                return p.isEmpty ? nil : .rawVideo(pixelFormats: p)
            case (.aac, .aac), (.h264, .h264), (.peaks, .peaks), (.container, .container):
                return self
            case let (.video(c1), .video(c2)):
                return c1 == c2 ? self : nil
            case let (.audio(c1), .audio(c2)):
                return c1 == c2 ? self : nil
            case (.pcm, _), (.aac, _), (.rawVideo, _), (.h264, _), (.video, _), (.audio, _), (.peaks, _), (.container, _):
                return nil
            }
        }

        /// The aspects in which two patterns of one kind differ; nil for two kinds.
        func differences(from other: Pattern) -> [Aspect]? {
            switch (self, other) {
            case (.any, _), (_, .any): return []
            case let (.pcm(f1, r1, c1), .pcm(f2, r2, c2)):
                var d: [Aspect] = []
                if f1.isDisjoint(with: f2) { d.append(.sampleFormat) }
                if !r1.overlaps(r2) { d.append(.sampleRate) }
                if !c1.overlaps(c2) { d.append(.channels) }
                return d
            case let (.rawVideo(p1), .rawVideo(p2)):
                return p1.isDisjoint(with: p2) ? [.pixelFormat] : []
            case (.aac, .aac), (.h264, .h264), (.peaks, .peaks), (.container, .container):
                return []
            case let (.video(c1), .video(c2)):
                return c1 == c2 ? [] : nil
            case let (.audio(c1), .audio(c2)):
                return c1 == c2 ? [] : nil
            case (.pcm, _), (.aac, _), (.rawVideo, _), (.h264, _), (.video, _), (.audio, _), (.peaks, _), (.container, _):
                return nil
            }
        }

        var description: String {
            switch self {
            case let .pcm(formats, rates, channels):
                let names = SampleFormat.allCases.filter(formats.contains).map(\.gstName).joined(separator: "|")
                func span(_ r: ClosedRange<Int>) -> String { r.count == 1 ? "\(r.lowerBound)" : "\(r.lowerBound)-\(r.upperBound)" }
                return "audio/pcm \(names) \(span(rates)) Hz \(span(channels)) ch"
            case let .rawVideo(formats):
                return "video/raw " + PixelFormat.allCases.filter(formats.contains).map(\.gstName).joined(separator: "|")
            case .any: return "any"
            case .aac: return FormatKind.aac.displayName
            case .h264: return FormatKind.h264.displayName
            case .video(let c): return c.kind.displayName
            case .audio(let c): return c.kind.displayName
            case .peaks: return FormatKind.peaks.displayName
            case .container: return FormatKind.container.displayName
            }
        }
    }

    public var patterns: [Pattern]
    public init(_ patterns: [Pattern]) { self.patterns = patterns }

    public static let any = FormatSet([.any])
    public static let aac = FormatSet([.aac])
    public static let h264 = FormatSet([.h264])
    /// Compressed video of one codec past H.264 (`.video(.hevc)`).
    public static func video(_ coding: VideoCoding) -> FormatSet { FormatSet([.video(coding)]) }
    /// Compressed audio of one codec past AAC (`.audio(.opus)`).
    public static func audio(_ coding: AudioCoding) -> FormatSet { FormatSet([.audio(coding)]) }
    public static let container = FormatSet([.container])
    public static let peaks = FormatSet([.peaks])
    /// PCM audio in any of the given sample formats, any rate, any channel count.
    public static func pcm(_ formats: Set<SampleFormat> = [.s16le, .f32le],
                           sampleRates: ClosedRange<Int> = 1...768_000,
                           channels: ClosedRange<Int> = 1...64) -> FormatSet {
        FormatSet([.pcm(sampleFormats: formats, sampleRates: sampleRates, channels: channels)])
    }
    /// Raw video in any of `formats` (by default the 8-bit ones: a node takes 10-bit frames only
    /// where it says so).
    public static func rawVideo(_ formats: Set<PixelFormat> = PixelFormat.eightBit) -> FormatSet {
        FormatSet([.rawVideo(pixelFormats: formats)])
    }

    /// The narrowest set that holds `format`, for an output that gives one format (a
    /// `source.app` that declares it); a format GraphKit has no pattern for gives `.any`.
    public init(exactly format: MediaFormat) {
        switch format {
        case .pcm(let f):
            self = .pcm([f.sampleFormat], sampleRates: f.sampleRate...f.sampleRate, channels: f.channels...f.channels)
        case .rawVideo(let v): self = .rawVideo([v.pixelFormat])
        case .aac: self = .aac
        case .h264: self = .h264
        case .video(let c, _, _): self = .video(c)
        case .audio(let c, _, _): self = .audio(c)
        case .peaks: self = .peaks
        case .container: self = .container
        case .data: self = .any
        }
    }

    public func intersects(_ other: FormatSet) -> Bool {
        patterns.contains { p in other.patterns.contains { p.intersects($0) } }
    }

    /// The formats in both sets: what a connection between them can carry.
    public func intersection(_ other: FormatSet) -> FormatSet {
        var common: [Pattern] = []
        for p in patterns {
            for q in other.patterns {
                if let r = p.intersection(q), !common.contains(r) { common.append(r) }
            }
        }
        return FormatSet(common)
    }

    public var isEmpty: Bool { patterns.isEmpty }

    /// What a format can differ in, so that a refused connection is reported at what decides it
    /// (decode's `sampleFormat` decides the sample format, its `channels` the count).
    public enum Aspect: String, Sendable, Hashable, CaseIterable {
        case kind, sampleFormat, sampleRate, channels, pixelFormat
    }

    /// Why nothing of this set fits `accepted`: the aspects in which the closest pair of patterns
    /// (of one kind, differing in the fewest aspects) differs; `[.kind]` when no kind is shared.
    /// Empty when the sets intersect.
    public func differences(from accepted: FormatSet) -> [Aspect] {
        guard !intersects(accepted) else { return [] }
        var best: [Aspect] = [.kind]
        for p in patterns {
            for q in accepted.patterns {
                guard let d = p.differences(from: q), d.count < best.count || best == [.kind] else { continue }
                best = d
            }
        }
        return best
    }

    /// Whether a concrete format fits this set. Exhaustive, with no `default:`: a new kind of
    /// pattern or format must say what it accepts.
    public func contains(_ format: MediaFormat) -> Bool {
        patterns.contains { pattern in
            switch (pattern, format) {
            case (.any, _): return true
            case let (.pcm(formats, rates, channels), .pcm(f)):
                return formats.contains(f.sampleFormat) && rates.contains(f.sampleRate) && channels.contains(f.channels)
            case let (.rawVideo(formats), .rawVideo(v)):
                return formats.contains(v.pixelFormat)
            case (.aac, .aac), (.h264, .h264), (.peaks, .peaks), (.container, .container):
                return true
            case let (.video(c1), .video(c2, _, _)):
                return c1 == c2
            case let (.audio(c1), .audio(c2, _, _)):
                return c1 == c2
            case (.pcm, _), (.aac, _), (.rawVideo, _), (.h264, _), (.video, _), (.audio, _), (.peaks, _), (.container, _):
                return false
            }
        }
    }

    public var description: String { patterns.map(\.description).joined(separator: " or ") }
}

extension SampleFormat: ParameterEnum {}
extension PixelFormat: ParameterEnum {}
