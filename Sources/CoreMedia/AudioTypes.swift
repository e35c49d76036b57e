// The CoreAudioTypes names AVFoundation code uses: a stream's description and format codes.

public typealias AudioFormatID = UInt32
public typealias AudioFormatFlags = UInt32
public typealias AudioChannelLayoutTag = UInt32

public let kAudioFormatLinearPCM: AudioFormatID = 0x6C70_636D  // 'lpcm'
public let kAudioFormatMPEG4AAC: AudioFormatID = 0x6161_6320  // 'aac '
public let kAudioFormatOpus: AudioFormatID = 0x6F70_7573  // 'opus'
public let kAudioFormatFLAC: AudioFormatID = 0x666C_6163  // 'flac'
public let kAudioFormatAppleLossless: AudioFormatID = 0x616C_6163  // 'alac'

public let kAudioFormatFlagIsFloat: AudioFormatFlags = 1 << 0
public let kAudioFormatFlagIsBigEndian: AudioFormatFlags = 1 << 1
public let kAudioFormatFlagIsSignedInteger: AudioFormatFlags = 1 << 2
public let kAudioFormatFlagIsPacked: AudioFormatFlags = 1 << 3
public let kAudioFormatFlagIsAlignedHigh: AudioFormatFlags = 1 << 4
public let kAudioFormatFlagIsNonInterleaved: AudioFormatFlags = 1 << 5
public let kAudioFormatFlagIsNonMixable: AudioFormatFlags = 1 << 6
/// Little-endian here, as on every machine Swift on Linux runs on.
public let kAudioFormatFlagsNativeEndian: AudioFormatFlags = 0
public let kAudioFormatFlagsNativeFloatPacked: AudioFormatFlags = kAudioFormatFlagIsFloat | kAudioFormatFlagIsPacked
public let kLinearPCMFormatFlagIsFloat = kAudioFormatFlagIsFloat
public let kLinearPCMFormatFlagIsBigEndian = kAudioFormatFlagIsBigEndian
public let kLinearPCMFormatFlagIsSignedInteger = kAudioFormatFlagIsSignedInteger
public let kLinearPCMFormatFlagIsPacked = kAudioFormatFlagIsPacked
public let kLinearPCMFormatFlagIsNonInterleaved = kAudioFormatFlagIsNonInterleaved

public let kAudioChannelLayoutTag_Mono: AudioChannelLayoutTag = (100 << 16) | 1
public let kAudioChannelLayoutTag_Stereo: AudioChannelLayoutTag = (101 << 16) | 2
/// The low 16 bits of a layout tag are its channel count.
public func AudioChannelLayoutTag_GetNumberOfChannels(_ layoutTag: AudioChannelLayoutTag) -> UInt32 { layoutTag & 0xFFFF }

/// How an audio stream's packets are laid out, as CoreAudioTypes declares it.
public struct AudioStreamBasicDescription: Sendable, Hashable {
    public var mSampleRate: Float64
    public var mFormatID: AudioFormatID
    public var mFormatFlags: AudioFormatFlags
    public var mBytesPerPacket: UInt32
    public var mFramesPerPacket: UInt32
    public var mBytesPerFrame: UInt32
    public var mChannelsPerFrame: UInt32
    public var mBitsPerChannel: UInt32
    public var mReserved: UInt32

    public init() {
        self.init(mSampleRate: 0, mFormatID: 0, mFormatFlags: 0, mBytesPerPacket: 0, mFramesPerPacket: 0,
                  mBytesPerFrame: 0, mChannelsPerFrame: 0, mBitsPerChannel: 0, mReserved: 0)
    }

    public init(mSampleRate: Float64, mFormatID: AudioFormatID, mFormatFlags: AudioFormatFlags, mBytesPerPacket: UInt32,
                mFramesPerPacket: UInt32, mBytesPerFrame: UInt32, mChannelsPerFrame: UInt32, mBitsPerChannel: UInt32, mReserved: UInt32) {
        self.mSampleRate = mSampleRate
        self.mFormatID = mFormatID
        self.mFormatFlags = mFormatFlags
        self.mBytesPerPacket = mBytesPerPacket
        self.mFramesPerPacket = mFramesPerPacket
        self.mBytesPerFrame = mBytesPerFrame
        self.mChannelsPerFrame = mChannelsPerFrame
        self.mBitsPerChannel = mBitsPerChannel
        self.mReserved = mReserved
    }
}

/// One channel of a layout described by its speaker (``AudioChannelLabel``) or its coordinates.
public struct AudioChannelDescription: Sendable, Hashable {
    public var mChannelLabel: AudioChannelLabel
    public var mChannelFlags: AudioChannelFlags
    public var mCoordinates: (Float32, Float32, Float32)
    public init() { mChannelLabel = 0; mChannelFlags = []; mCoordinates = (0, 0, 0) }
    public init(mChannelLabel: AudioChannelLabel, mChannelFlags: AudioChannelFlags, mCoordinates: (Float32, Float32, Float32)) {
        self.mChannelLabel = mChannelLabel
        self.mChannelFlags = mChannelFlags
        self.mCoordinates = mCoordinates
    }
    public static func == (a: Self, b: Self) -> Bool {
        a.mChannelLabel == b.mChannelLabel && a.mChannelFlags == b.mChannelFlags && a.mCoordinates == b.mCoordinates
    }
    public func hash(into h: inout Hasher) { h.combine(mChannelLabel); h.combine(mChannelFlags) }
}

/// A channel layout, as CoreAudioTypes declares it (its C layout too: tag, bitmap, count, then
/// the descriptions), so `Data(bytes: &layout, count: MemoryLayout<AudioChannelLayout>.size)`
/// makes the bytes `AVChannelLayoutKey` takes. GraphKit reads its channel count
/// (``AudioChannelLayout/channelCount``).
public struct AudioChannelLayout: Sendable, Hashable {
    public var mChannelLayoutTag: AudioChannelLayoutTag
    public var mChannelBitmap: AudioChannelBitmap
    public var mNumberChannelDescriptions: UInt32
    public var mChannelDescriptions: AudioChannelDescription
    public init() { mChannelLayoutTag = 0; mChannelBitmap = []; mNumberChannelDescriptions = 0; mChannelDescriptions = .init() }
    public init(mChannelLayoutTag: AudioChannelLayoutTag, mChannelBitmap: AudioChannelBitmap,
                mNumberChannelDescriptions: UInt32, mChannelDescriptions: (AudioChannelDescription)) {
        self.mChannelLayoutTag = mChannelLayoutTag
        self.mChannelBitmap = mChannelBitmap
        self.mNumberChannelDescriptions = mNumberChannelDescriptions
        self.mChannelDescriptions = mChannelDescriptions
    }
}
