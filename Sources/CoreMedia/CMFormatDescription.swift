@_spi(Engine) import GraphKitCore

public typealias CMMediaType = FourCharCode
public let kCMMediaType_Audio: CMMediaType = 0x736F_756E  // 'soun'
public let kCMMediaType_Video: CMMediaType = 0x7669_6465  // 'vide'
public let kCMVideoCodecType_H264: FourCharCode = 0x6176_6331  // 'avc1'
public let kCMVideoCodecType_HEVC: FourCharCode = 0x6876_6331  // 'hvc1'
public let kCMVideoCodecType_VP9: FourCharCode = 0x7670_3039  // 'vp09'
public let kCMVideoCodecType_AV1: FourCharCode = 0x6176_3031  // 'av01'
public typealias CMVideoCodecType = FourCharCode
public typealias CMAudioFormatDescription = CMFormatDescription
public typealias CMVideoFormatDescription = CMFormatDescription

public struct CMVideoDimensions: Sendable, Hashable {
    public var width: Int32
    public var height: Int32
    public init() { width = 0; height = 0 }
    public init(width: Int32, height: Int32) { self.width = width; self.height = height }
}

/// What a sample buffer holds, as CoreMedia's: over GraphKit's `MediaFormat` (with the codec
/// configuration a compressed stream needs, when it came out of a file).
public final class CMFormatDescription: @unchecked Sendable {
    // Unchecked: its stream description is behind a pointer (CoreMedia's API hands one out),
    // written once when made and only read after, which the compiler cannot see.
    package let format: MediaFormat
    /// The full description a buffer arrived with (an AAC or H.264 codec configuration).
    package let capsDetail: String?
    /// Core Media's extensions (``CMFormatDescriptionGetExtensions(_:)``): colour, range, bit
    /// depth and HDR metadata, by Apple's keys.
    package let extensions: [String: Any]
    /// CMAudioFormatDescriptionGetStreamBasicDescription returns a pointer: it lives as long as this.
    private let asbd: UnsafeMutablePointer<AudioStreamBasicDescription>?
    /// The same for CMAudioFormatDescriptionGetChannelLayout's layout.
    private let layout: UnsafeMutablePointer<AudioChannelLayout>?

    package init(format: MediaFormat, capsDetail: String? = nil, extensions: [String: Any] = [:]) {
        self.format = format
        self.capsDetail = capsDetail
        self.extensions = extensions
        if let d = Self.streamDescription(format) {
            asbd = .allocate(capacity: 1)
            asbd!.initialize(to: d)
        } else {
            asbd = nil
        }
        if let tag = asbd.flatMap({ Self.layoutTag(channels: $0.pointee.mChannelsPerFrame) }) {
            var l = AudioChannelLayout()
            l.mChannelLayoutTag = tag
            layout = .allocate(capacity: 1)
            layout!.initialize(to: l)
        } else {
            layout = nil
        }
    }

    deinit {
        asbd?.deallocate()
        layout?.deallocate()
    }

    /// Mono and stereo are known by their count; for more channels GraphKit does not know which
    /// speakers they are for, so a description has no layout (CoreMedia's NULL).
    static func layoutTag(channels: UInt32) -> AudioChannelLayoutTag? {
        switch channels {
        case 1: kAudioChannelLayoutTag_Mono
        case 2: kAudioChannelLayoutTag_Stereo
        default: nil
        }
    }

    fileprivate var channelLayout: UnsafePointer<AudioChannelLayout>? { layout.map { UnsafePointer($0) } }

    static func streamDescription(_ format: MediaFormat) -> AudioStreamBasicDescription? {
        switch format {
        case .pcm(let f):
            let bytes = UInt32(f.sampleFormat.bytesPerSample)
            let flags = f.sampleFormat == .f32le ? kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked
                                                 : kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked
            return AudioStreamBasicDescription(mSampleRate: Double(f.sampleRate), mFormatID: kAudioFormatLinearPCM, mFormatFlags: flags,
                                               mBytesPerPacket: bytes * UInt32(f.channels), mFramesPerPacket: 1,
                                               mBytesPerFrame: bytes * UInt32(f.channels), mChannelsPerFrame: UInt32(f.channels),
                                               mBitsPerChannel: bytes * 8, mReserved: 0)
        case .aac(let rate, let channels):
            return AudioStreamBasicDescription(mSampleRate: Double(rate ?? 0), mFormatID: kAudioFormatMPEG4AAC, mFormatFlags: 0,
                                               mBytesPerPacket: 0, mFramesPerPacket: 1024, mBytesPerFrame: 0,
                                               mChannelsPerFrame: UInt32(channels ?? 0), mBitsPerChannel: 0, mReserved: 0)
        case .audio(let coding, let rate, let channels):
            // Frames per packet as CoreAudio gives them: Opus's 20 ms at 48 kHz, ALAC's 4096;
            // FLAC's vary with the encoder (0: variable).
            let (id, frames): (AudioFormatID, UInt32) = switch coding {
            case .opus: (kAudioFormatOpus, 960)
            case .flac: (kAudioFormatFLAC, 0)
            case .alac: (kAudioFormatAppleLossless, 4096)
            }
            return AudioStreamBasicDescription(mSampleRate: Double(rate ?? 0), mFormatID: id, mFormatFlags: 0,
                                               mBytesPerPacket: 0, mFramesPerPacket: frames, mBytesPerFrame: 0,
                                               mChannelsPerFrame: UInt32(channels ?? 0), mBitsPerChannel: 0, mReserved: 0)
        default:
            return nil
        }
    }

    var mediaTypeCode: CMMediaType {
        switch format {
        case .pcm, .aac, .audio: kCMMediaType_Audio
        case .rawVideo, .h264, .video: kCMMediaType_Video
        default: 0
        }
    }

    var mediaSubTypeCode: FourCharCode {
        switch format {
        case .pcm: kAudioFormatLinearPCM
        case .aac: kAudioFormatMPEG4AAC
        case .rawVideo(let v): v.pixelFormat.cvPixelFormat
        case .h264: kCMVideoCodecType_H264
        case .video(.hevc, _, _): kCMVideoCodecType_HEVC
        case .video(.vp9, _, _): kCMVideoCodecType_VP9
        case .video(.av1, _, _): kCMVideoCodecType_AV1
        case .audio(.opus, _, _): kAudioFormatOpus
        case .audio(.flac, _, _): kAudioFormatFLAC
        case .audio(.alac, _, _): kAudioFormatAppleLossless
        default: 0
        }
    }

    fileprivate var streamBasicDescription: UnsafePointer<AudioStreamBasicDescription>? { asbd.map { UnsafePointer($0) } }
}

public func CMFormatDescriptionGetMediaType(_ desc: CMFormatDescription) -> CMMediaType { desc.mediaTypeCode }
/// The codec or pixel format: `'lpcm'`, `'aac '`, `'opus'`, `'flac'`, `'alac'`, `'avc1'`, `'hvc1'`, `'vp09'`, `'av01'`, or a CoreVideo pixel format code.
public func CMFormatDescriptionGetMediaSubType(_ desc: CMFormatDescription) -> FourCharCode { desc.mediaSubTypeCode }

/// The stream's description; nil for a video description. Valid as long as `desc` is.
public func CMAudioFormatDescriptionGetStreamBasicDescription(_ desc: CMAudioFormatDescription) -> UnsafePointer<AudioStreamBasicDescription>? {
    desc.streamBasicDescription
}

/// The channel layout of a mono or stereo description (`kAudioChannelLayoutTag_Mono`,
/// `kAudioChannelLayoutTag_Stereo`, no channel descriptions), with its size in `sizeOut`; nil
/// (and size 0) for video and for more channels, whose speakers GraphKit does not know. Valid as
/// long as `desc` is.
public func CMAudioFormatDescriptionGetChannelLayout(_ desc: CMAudioFormatDescription, sizeOut: UnsafeMutablePointer<Int>?) -> UnsafePointer<AudioChannelLayout>? {
    let layout = desc.channelLayout
    sizeOut?.pointee = layout == nil ? 0 : MemoryLayout<AudioChannelLayout>.size
    return layout
}

/// Width and height; zeros for a description that is not video (or compressed video whose size is unknown).
public func CMVideoFormatDescriptionGetDimensions(_ videoDesc: CMVideoFormatDescription) -> CMVideoDimensions {
    switch videoDesc.format {
    case .rawVideo(let v): CMVideoDimensions(width: Int32(v.width), height: Int32(v.height))
    case .h264(let w, let h), .video(_, let w, let h): CMVideoDimensions(width: Int32(w ?? 0), height: Int32(h ?? 0))
    default: CMVideoDimensions()
    }
}

public let kCMFormatDescriptionError_InvalidParameter: OSStatus = -12710
public let kCMFormatDescriptionError_ValueNotAvailable: OSStatus = -12718

/// An audio format description from a stream description: 16-bit signed or 32-bit float
/// interleaved little-endian PCM, or AAC (`kAudioFormatMPEG4AAC`). Anything else is
/// `kCMFormatDescriptionError_InvalidParameter`. An AAC description keeps its magic cookie (an
/// ES_Descriptor, as AudioConverter's `kAudioConverterCompressionMagicCookie` gives it, or a bare
/// AudioSpecificConfig), so packets made with it can be written through a passthrough writer input;
/// a cookie that holds no AudioSpecificConfig is `kCMFormatDescriptionError_InvalidParameter`.
/// Without one, samples appended with it as a writer input's hint must carry their own
/// configuration, as samples read from a file do. The layout and extensions are accepted and not read.
@discardableResult
public func CMAudioFormatDescriptionCreate(allocator: CFAllocator?, asbd: UnsafePointer<AudioStreamBasicDescription>, layoutSize: Int,
                                           layout: UnsafePointer<AudioChannelLayout>?, magicCookieSize: Int, magicCookie: UnsafeRawPointer?,
                                           extensions: CFDictionary?, formatDescriptionOut: UnsafeMutablePointer<CMAudioFormatDescription?>) -> OSStatus {
    formatDescriptionOut.pointee = nil
    guard let format = mediaFormat(asbd.pointee) else { return kCMFormatDescriptionError_InvalidParameter }
    if case .aac(let rate?, let channels?) = format, let magicCookie, magicCookieSize > 0 {
        let cookie = Array(UnsafeRawBufferPointer(start: magicCookie, count: magicCookieSize))
        guard let config = audioSpecificConfig(fromMagicCookie: cookie) else { return kCMFormatDescriptionError_InvalidParameter }
        formatDescriptionOut.pointee = CMFormatDescription(format: format, capsDetail: aacCapsDetail(audioSpecificConfig: config, sampleRate: rate,
                                                                                                   channels: channels))
        return OSStatus(noErr)
    }
    formatDescriptionOut.pointee = CMFormatDescription(format: format)
    return OSStatus(noErr)
}

/// A video format description of `codecType` and size: H.264, HEVC, VP9 or AV1 (compressed,
/// no parameter sets: samples appended with it carry theirs), or a pixel format GraphKit holds
/// (`kCVPixelFormatType_32BGRA`…). `extensions` are kept (``CMFormatDescriptionGetExtensions(_:)``).
/// A size outside 1…16384 or another code is `kCMFormatDescriptionError_InvalidParameter`.
@discardableResult
public func CMVideoFormatDescriptionCreate(allocator: CFAllocator?, codecType: CMVideoCodecType, width: Int32, height: Int32,
                                           extensions: CFDictionary?, formatDescriptionOut: UnsafeMutablePointer<CMVideoFormatDescription?>) -> OSStatus {
    formatDescriptionOut.pointee = nil
    guard (1...16384).contains(width), (1...16384).contains(height) else { return kCMFormatDescriptionError_InvalidParameter }
    let (w, h) = (Int(width), Int(height))
    let format: MediaFormat
    switch codecType {
    case kCMVideoCodecType_H264: format = .h264(width: w, height: h)
    case kCMVideoCodecType_HEVC: format = .video(.hevc, width: w, height: h)
    case kCMVideoCodecType_VP9: format = .video(.vp9, width: w, height: h)
    case kCMVideoCodecType_AV1: format = .video(.av1, width: w, height: h)
    default:
        guard case .success(let v) = cvVideoFormat(width: w, height: h, pixelFormatType: codecType) else { return kCMFormatDescriptionError_InvalidParameter }
        format = .rawVideo(v)
    }
    formatDescriptionOut.pointee = CMFormatDescription(format: format, extensions: extensions ?? [:])
    return OSStatus(noErr)
}

/// GraphKit's format for a stream description, when it holds one.
package func mediaFormat(_ d: AudioStreamBasicDescription) -> MediaFormat? {
    let rate = Int(d.mSampleRate), channels = Int(d.mChannelsPerFrame)
    guard d.mSampleRate > 0, Double(rate) == d.mSampleRate, channels > 0 else { return nil }
    switch d.mFormatID {
    case kAudioFormatMPEG4AAC:
        return .aac(sampleRate: rate, channels: channels)
    case kAudioFormatLinearPCM:
        guard d.mFormatFlags & (kAudioFormatFlagIsBigEndian | kAudioFormatFlagIsNonInterleaved) == 0 else { return nil }
        let float = d.mFormatFlags & kAudioFormatFlagIsFloat != 0
        switch (float, d.mBitsPerChannel) {
        case (true, 32): return .pcm(.init(sampleRate: rate, channels: channels, sampleFormat: .f32le))
        case (false, 16): return .pcm(.init(sampleRate: rate, channels: channels, sampleFormat: .s16le))
        default: return nil
        }
    default:
        return nil
    }
}

// MARK: The Swift overlay's names

extension CMFormatDescription {
    /// A media type, as the Swift overlay's `CMFormatDescription.MediaType`: a four-character code.
    public struct MediaType: RawRepresentable, Hashable, Sendable {
        public var rawValue: FourCharCode
        public init(rawValue: FourCharCode) { self.rawValue = rawValue }
        public static let audio = MediaType(rawValue: kCMMediaType_Audio)
        public static let video = MediaType(rawValue: kCMMediaType_Video)
        public static let muxed = MediaType(rawValue: 0x6D75_7878)          // 'muxx'
        public static let text = MediaType(rawValue: 0x7465_7874)           // 'text'
        public static let closedCaption = MediaType(rawValue: 0x636C_6370)  // 'clcp'
        public static let subtitle = MediaType(rawValue: 0x7362_746C)       // 'sbtl'
        public static let timeCode = MediaType(rawValue: 0x746D_6364)       // 'tmcd'
        public static let metadata = MediaType(rawValue: 0x6D65_7461)       // 'meta'
    }

    /// A media subtype (a codec or pixel format), as the Swift overlay's `MediaSubType`.
    public struct MediaSubType: RawRepresentable, Hashable, Sendable {
        public var rawValue: FourCharCode
        public init(rawValue: FourCharCode) { self.rawValue = rawValue }
        public static let linearPCM = MediaSubType(rawValue: kAudioFormatLinearPCM)
        public static let mpeg4AAC = MediaSubType(rawValue: kAudioFormatMPEG4AAC)
        public static let opus = MediaSubType(rawValue: kAudioFormatOpus)
        public static let flac = MediaSubType(rawValue: kAudioFormatFLAC)
        public static let appleLossless = MediaSubType(rawValue: kAudioFormatAppleLossless)
        public static let h264 = MediaSubType(rawValue: kCMVideoCodecType_H264)
        public static let hevc = MediaSubType(rawValue: kCMVideoCodecType_HEVC)
    }

    /// The media type (`CMFormatDescriptionGetMediaType`).
    public var mediaType: MediaType { MediaType(rawValue: mediaTypeCode) }
    /// The codec or pixel format (`CMFormatDescriptionGetMediaSubType`).
    public var mediaSubType: MediaSubType { MediaSubType(rawValue: mediaSubTypeCode) }
}

extension CMFormatDescription {
    /// The audio stream's description (`CMAudioFormatDescriptionGetStreamBasicDescription`); nil for video.
    public var audioStreamBasicDescription: AudioStreamBasicDescription? { asbd?.pointee }
    /// Width and height (`CMVideoFormatDescriptionGetDimensions`); zeros for audio.
    public var dimensions: CMVideoDimensions { CMVideoFormatDescriptionGetDimensions(self) }
}
