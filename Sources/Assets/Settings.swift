import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// The kind of file an ``AssetWriter`` writes, like `AVFileType`.
public enum FileType: String, Sendable, CaseIterable {
    /// MPEG-4 (`.mp4`), audio and video.
    case mp4
    /// QuickTime (`.mov`), audio and video.
    case mov
    /// MPEG-4 audio (`.m4a`): audio only.
    case m4a
}

/// What a track or an input carries, like `AVMediaType`.
public enum MediaType: String, Sendable, CaseIterable {
    case audio, video
}

/// How a writer input encodes what is appended to it (`outputSettings` in AVFoundation).
public protocol OutputSettings: Sendable {
    /// The media type these settings encode.
    var mediaType: MediaType { get }
}

/// The codec of a writer's video input, like `AVVideoCodecType`: each is its encoder node's
/// (`encode.h264`, `encode.hevc`, `encode.vp9`, `encode.av1`).
public enum VideoCodec: String, Sendable, CaseIterable { case h264, hevc, vp9, av1 }
/// The codec of a writer's audio input, like `AVFormatIDKey`: each is its encoder node's
/// (`encode.aac`, `encode.opus`, `encode.flac`, `encode.alac`). A file type refuses the codecs
/// its writer cannot hold: FLAC goes into MP4 and M4A (a `fLaC` track, as ffmpeg writes it), not
/// QuickTime (`.mov`).
public enum AudioCodec: String, Sendable, CaseIterable { case aac, opus, flac, alac }

/// Video encoding settings: `AVVideoCodecKey`, `AVVideoWidthKey`, `AVVideoHeightKey`,
/// `AVVideoAverageBitRateKey` and `AVVideoMaxKeyFrameIntervalKey`. Frames of another size are
/// scaled to `width` × `height`, which must be even (every codec here codes 4:2:0).
public struct VideoSettings: OutputSettings, Hashable {
    public var codec: VideoCodec
    public var width: Int
    public var height: Int
    /// Bits per second; nil picks one from the frame size (`recommendedVideoSettings`).
    public var averageBitRate: Int?
    /// At most this many frames between keyframes; nil: 60.
    public var keyframeInterval: Int?
    /// The H.264 profile (`AVVideoProfileLevelKey`); nil: High. Only for `.h264`.
    public var h264Profile: H264EncoderNode.Profile?
    /// The colour the stream states in its VUI (`AVVideoColorPropertiesKey`), as
    /// `H264EncoderNode.colorimetry` takes it; nil: the frames' own. Only for `.h264`: the writer
    /// refuses it for the other codecs rather than drop it.
    public var colorimetry: String?
    /// HEVC Main 10 (`kVTProfileLevel_HEVC_Main10_AutoLevel`): 10-bit samples, from 10-bit
    /// frames as they come (decode's `i420_10le`) with no 8-bit step; 8-bit frames are widened.
    /// Only for `.hevc`. An HEVC export of a 10-bit source sets it, as a Mac's HEVC presets keep
    /// an HDR video's 10 bits.
    public var tenBit = false

    /// Whether an export with these settings encodes video of `colors` (a piece's each) in 10
    /// bits: asked (`tenBit`), or HEVC and every piece 10-bit or more, or HDR whose depth the file
    /// does not state (BT.2100 has no 8-bit), as a Mac's HEVC presets keep them.
    func keepsTenBits(_ colors: [VideoColor?]) -> Bool {
        tenBit || (codec == .hevc && !colors.isEmpty && colors.allSatisfy { c in c?.bitDepth.map { $0 >= 10 } ?? (c?.hdr != nil) })
    }

    public init(codec: VideoCodec = .h264, width: Int, height: Int, averageBitRate: Int? = nil, keyframeInterval: Int? = nil,
                h264Profile: H264EncoderNode.Profile? = nil, colorimetry: String? = nil) {
        self.codec = codec
        self.width = width
        self.height = height
        self.averageBitRate = averageBitRate
        self.keyframeInterval = keyframeInterval
        self.h264Profile = h264Profile
        self.colorimetry = colorimetry
    }

    public var mediaType: MediaType { .video }
}

extension VideoCodec {
    /// The bit rate the encoder picks for a frame size when none is given (`encode.h264`'s
    /// `auto`; half of it for the codecs that code as well at half the rate).
    package func automaticBitRate(width: Int, height: Int) -> Int {
        self == .h264 ? H264EncoderNode.automaticBitrate(width: width, height: height)
                      : VideoEncoderInput.automaticBitrate(width: width, height: height)
    }

    /// Whether HDR video is made SDR before this encoder: every codec but HEVC, as AVFoundation's
    /// H.264 presets give SDR and its HEVC presets keep HDR.
    package var encodesHDRAsSDR: Bool { self != .hevc }
}

/// Audio encoding settings: `AVFormatIDKey`, `AVSampleRateKey`, `AVNumberOfChannelsKey` and
/// `AVEncoderBitRateKey`. Audio of another rate or channel count is converted to these. Opus
/// codes at 48 kHz only; FLAC and ALAC are lossless and take no bit rate.
public struct AudioSettings: OutputSettings, Hashable {
    public var codec: AudioCodec
    public var sampleRate: Int
    public var channels: Int
    /// Bits per second; nil: the encoder's default (96,000 for AAC and Opus). Lossless codecs take none.
    public var bitRate: Int?
    /// Bits a sample the lossless codecs keep, 16 or 24 (`AVEncoderBitDepthHintKey`); nil: 16 for
    /// 16-bit input, 24 for deeper or float. The lossy codecs have no such depth and ignore it.
    public var bitDepth: Int?

    public init(codec: AudioCodec = .aac, sampleRate: Int, channels: Int, bitRate: Int? = nil, bitDepth: Int? = nil) {
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitRate = bitRate
        self.bitDepth = bitDepth
    }

    public var mediaType: MediaType { .audio }
}

/// Samples written as they are, already encoded (AAC for audio, H.264 for video, with their
/// codec configuration, as a reader's `.stored` output gives them): no encoder, the muxer takes
/// them with their timing (`outputSettings: nil` in AVFoundation).
public struct PassthroughSettings: OutputSettings, Hashable {
    public var mediaType: MediaType
    public init(mediaType: MediaType) { self.mediaType = mediaType }
}

/// What an ``AssetReaderTrackOutput`` decodes its track to (`outputSettings` in AVFoundation).
public enum ReaderOutputSettings: Sendable, Hashable {
    /// Interleaved PCM (`kAudioFormatLinearPCM`), converted to `sampleRate` and `channels`
    /// when given (else the track's own).
    case linearPCM(sampleFormat: SampleFormat, sampleRate: Int? = nil, channels: Int? = nil)
    /// Raw frames of this pixel format (`kCVPixelBufferPixelFormatTypeKey`).
    case pixels(PixelFormat)
    /// The compressed samples as stored, not decoded (`outputSettings: nil` in AVFoundation):
    /// AAC or H.264, with their codec configuration and the file's timing (`demux`).
    case stored(MediaType)

    var mediaType: MediaType {
        switch self {
        case .linearPCM: .audio
        case .pixels: .video
        case .stored(let type): type
        }
    }
}

/// The frames a pixel-buffer adaptor's pool makes (`sourcePixelBufferAttributes`).
public struct PixelBufferAttributes: Sendable, Hashable {
    public var pixelFormat: PixelFormat
    public var width: Int
    public var height: Int

    public init(pixelFormat: PixelFormat = .bgra, width: Int, height: Int) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
    }
}
