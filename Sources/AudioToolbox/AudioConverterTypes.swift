@_exported import CoreMedia

// AudioToolbox's AudioConverter names (AudioConverter.h) and the CoreAudioTypes codes they
// return. The stream description, buffer lists and packet descriptions are CoreMedia's
// (Sources/CoreMedia/AudioTypes.swift, AudioBufferList.swift), re-exported here as Apple's
// AudioToolbox re-exports CoreAudioTypes.

/// A converter, as AudioToolbox hands it out: an opaque reference, valid until
/// ``AudioConverterDispose(_:)``. A reference that was disposed or never made is refused with
/// `kAudio_ParamError`, never followed.
public typealias AudioConverterRef = OpaquePointer
public typealias AudioConverterPropertyID = UInt32

/// Supplies input to ``AudioConverterFillComplexBuffer(_:_:_:_:_:_:)``: on entry
/// `ioNumberDataPackets` is the packets the converter would like; on return, the packets given
/// (`ioData` pointed at them, held unchanged until the next call), or 0 with `noErr` for the end
/// of the input. A non-zero status gives no packets: the fill returns what it has with that
/// status, and the next fill goes on from there (the way a streaming encoder says "no input yet").
/// Apple declares a C function pointer; a Swift closure here, so closures with or without
/// captures, and functions, are all accepted.
public typealias AudioConverterComplexInputDataProc = (
    AudioConverterRef, UnsafeMutablePointer<UInt32>, UnsafeMutablePointer<AudioBufferList>,
    UnsafeMutablePointer<UnsafeMutablePointer<AudioStreamPacketDescription>?>?, UnsafeMutableRawPointer?
) -> OSStatus

/// The frames an encoder adds before and after the signal (`kAudioConverterPrimeInfo`).
public struct AudioConverterPrimeInfo: Sendable, Hashable {
    public var leadingFrames: UInt32
    public var trailingFrames: UInt32
    public init() { leadingFrames = 0; trailingFrames = 0 }
    public init(leadingFrames: UInt32, trailingFrames: UInt32) {
        self.leadingFrames = leadingFrames
        self.trailingFrames = trailingFrames
    }
}

/// A range of bit rates or sample rates (`kAudioConverterApplicableEncodeBitRates`).
public struct AudioValueRange: Sendable, Hashable {
    public var mMinimum: Float64
    public var mMaximum: Float64
    public init() { mMinimum = 0; mMaximum = 0 }
    public init(mMinimum: Float64, mMaximum: Float64) { self.mMinimum = mMinimum; self.mMaximum = mMaximum }
}

/// Darwin's C `Boolean` (`AudioConverterGetPropertyInfo`'s `outWritable`).
public struct DarwinBoolean: Sendable, Hashable, ExpressibleByBooleanLiteral, CustomStringConvertible {
    private var value: UInt8
    public init(_ value: Bool) { self.value = value ? 1 : 0 }
    public init(booleanLiteral value: Bool) { self.init(value) }
    public var boolValue: Bool { value != 0 }
    public var description: String { boolValue.description }
}

// MARK: Properties (AudioConverter.h)

public let kAudioConverterPropertyMinimumInputBufferSize: AudioConverterPropertyID = 0x6D62_7566  // 'mbuf'
public let kAudioConverterPropertyMinimumOutputBufferSize: AudioConverterPropertyID = 0x6D6F_6275  // 'mobu'
public let kAudioConverterPropertyMaximumInputPacketSize: AudioConverterPropertyID = 0x7869_7073  // 'xips'
public let kAudioConverterPropertyMaximumOutputPacketSize: AudioConverterPropertyID = 0x786F_7073  // 'xops'
public let kAudioConverterCompressionMagicCookie: AudioConverterPropertyID = 0x6B6D_6763  // 'kmgc'
public let kAudioConverterDecompressionMagicCookie: AudioConverterPropertyID = 0x646D_6763  // 'dmgc'
public let kAudioConverterEncodeBitRate: AudioConverterPropertyID = 0x6272_6174  // 'brat'
public let kAudioConverterApplicableEncodeBitRates: AudioConverterPropertyID = 0x6165_6272  // 'aebr'
public let kAudioConverterCurrentInputStreamDescription: AudioConverterPropertyID = 0x6163_6964  // 'acid'
public let kAudioConverterCurrentOutputStreamDescription: AudioConverterPropertyID = 0x6163_6F64  // 'acod'
public let kAudioConverterPrimeInfo: AudioConverterPropertyID = 0x7072_696D  // 'prim'
public let kAudioConverterCodecQuality: AudioConverterPropertyID = 0x6364_7175  // 'cdqu'

// MARK: Status codes (AudioConverter.h, CoreAudioTypes)

public let kAudioConverterErr_FormatNotSupported: OSStatus = 0x666D_743F  // 'fmt?'
public let kAudioConverterErr_OperationNotSupported: OSStatus = 0x6F70_3F3F  // 'op??'
public let kAudioConverterErr_PropertyNotSupported: OSStatus = 0x7072_6F70  // 'prop'
public let kAudioConverterErr_InvalidInputSize: OSStatus = 0x696E_737A  // 'insz'
public let kAudioConverterErr_InvalidOutputSize: OSStatus = 0x6F74_737A  // 'otsz'
public let kAudioConverterErr_UnspecifiedError: OSStatus = 0x7768_6174  // 'what'
public let kAudioConverterErr_BadPropertySizeError: OSStatus = 0x2173_697A  // '!siz'
public let kAudioConverterErr_RequiresPacketDescriptionsError: OSStatus = 0x2170_6B64  // '!pkd'
public let kAudioConverterErr_InputSampleRateOutOfRange: OSStatus = 0x2169_7372  // '!isr'
public let kAudioConverterErr_OutputSampleRateOutOfRange: OSStatus = 0x216F_7372  // '!osr'
public let kAudio_UnimplementedError: OSStatus = -4
public let kAudio_ParamError: OSStatus = -50
public let kAudio_MemFullError: OSStatus = -108

// MARK: Codec quality (kAudioConverterCodecQuality: accepted, the encoder has one quality)

public let kAudioConverterQuality_Max: UInt32 = 0x7F
public let kAudioConverterQuality_High: UInt32 = 0x60
public let kAudioConverterQuality_Medium: UInt32 = 0x40
public let kAudioConverterQuality_Low: UInt32 = 0x20
public let kAudioConverterQuality_Min: UInt32 = 0

/// A codec by type, subtype and maker (`AudioConverterNewSpecific`'s choice of encoder).
public struct AudioClassDescription: Sendable, Hashable {
    public var mType: OSType
    public var mSubType: OSType
    public var mManufacturer: OSType
    public init() { mType = 0; mSubType = 0; mManufacturer = 0 }
    public init(mType: OSType, mSubType: OSType, mManufacturer: OSType) {
        self.mType = mType
        self.mSubType = mSubType
        self.mManufacturer = mManufacturer
    }
}

public let kAudioEncoderComponentType: OSType = 0x6165_6E63  // 'aenc'
public let kAudioDecoderComponentType: OSType = 0x6164_6563  // 'adec'
public let kAppleSoftwareAudioCodecManufacturer: OSType = 0x6170_706C  // 'appl'
public let kAppleHardwareAudioCodecManufacturer: OSType = 0x6170_6877  // 'aphw'
