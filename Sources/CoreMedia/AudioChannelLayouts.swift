import Foundation

// CoreAudioTypes' channel layout tags and bitmap, as audio settings name a layout
// (`AVChannelLayoutKey`: the bytes of an AudioChannelLayout). A tag's low 16 bits are its channel
// count; two tags say the count is elsewhere: in the bitmap or in the descriptions.

/// The layout is in `mChannelDescriptions` (`mNumberChannelDescriptions` of them).
public let kAudioChannelLayoutTag_UseChannelDescriptions: AudioChannelLayoutTag = (0 << 16) | 0
/// The layout is `mChannelBitmap`: one channel per bit set.
public let kAudioChannelLayoutTag_UseChannelBitmap: AudioChannelLayoutTag = (1 << 16) | 0

// MPEG's layouts, their speakers in the order the comment gives (Apple's values).
public let kAudioChannelLayoutTag_MPEG_1_0: AudioChannelLayoutTag = kAudioChannelLayoutTag_Mono       // C
public let kAudioChannelLayoutTag_MPEG_2_0: AudioChannelLayoutTag = kAudioChannelLayoutTag_Stereo     // L R
public let kAudioChannelLayoutTag_Quadraphonic: AudioChannelLayoutTag = (108 << 16) | 4              // L R Ls Rs
public let kAudioChannelLayoutTag_MPEG_3_0_A: AudioChannelLayoutTag = (113 << 16) | 3                // L R C
public let kAudioChannelLayoutTag_MPEG_3_0_B: AudioChannelLayoutTag = (114 << 16) | 3                // C L R
public let kAudioChannelLayoutTag_MPEG_4_0_A: AudioChannelLayoutTag = (115 << 16) | 4                // L R C Cs
public let kAudioChannelLayoutTag_MPEG_4_0_B: AudioChannelLayoutTag = (116 << 16) | 4                // C L R Cs
public let kAudioChannelLayoutTag_MPEG_5_0_A: AudioChannelLayoutTag = (117 << 16) | 5                // L R C Ls Rs
public let kAudioChannelLayoutTag_MPEG_5_0_B: AudioChannelLayoutTag = (118 << 16) | 5                // L R Ls Rs C
public let kAudioChannelLayoutTag_MPEG_5_0_C: AudioChannelLayoutTag = (119 << 16) | 5                // L C R Ls Rs
public let kAudioChannelLayoutTag_MPEG_5_0_D: AudioChannelLayoutTag = (120 << 16) | 5                // C L R Ls Rs
public let kAudioChannelLayoutTag_MPEG_5_1_A: AudioChannelLayoutTag = (121 << 16) | 6                // L R C LFE Ls Rs
public let kAudioChannelLayoutTag_MPEG_5_1_B: AudioChannelLayoutTag = (122 << 16) | 6                // L R Ls Rs C LFE
public let kAudioChannelLayoutTag_MPEG_5_1_C: AudioChannelLayoutTag = (123 << 16) | 6                // L C R Ls Rs LFE
public let kAudioChannelLayoutTag_MPEG_5_1_D: AudioChannelLayoutTag = (124 << 16) | 6                // C L R Ls Rs LFE
public let kAudioChannelLayoutTag_MPEG_6_1_A: AudioChannelLayoutTag = (125 << 16) | 7                // L R C LFE Ls Rs Cs
public let kAudioChannelLayoutTag_MPEG_7_1_A: AudioChannelLayoutTag = (126 << 16) | 8                // L R C LFE Ls Rs Lc Rc
public let kAudioChannelLayoutTag_MPEG_7_1_B: AudioChannelLayoutTag = (127 << 16) | 8                // C Lc Rc L R Ls Rs LFE
public let kAudioChannelLayoutTag_MPEG_7_1_C: AudioChannelLayoutTag = (128 << 16) | 8                // L R C LFE Ls Rs Rls Rrs
// AAC's names for the same: AAC's own channel order.
public let kAudioChannelLayoutTag_AAC_3_0: AudioChannelLayoutTag = kAudioChannelLayoutTag_MPEG_3_0_B
public let kAudioChannelLayoutTag_AAC_Quadraphonic: AudioChannelLayoutTag = kAudioChannelLayoutTag_Quadraphonic
public let kAudioChannelLayoutTag_AAC_4_0: AudioChannelLayoutTag = kAudioChannelLayoutTag_MPEG_4_0_B
public let kAudioChannelLayoutTag_AAC_5_0: AudioChannelLayoutTag = kAudioChannelLayoutTag_MPEG_5_0_D
public let kAudioChannelLayoutTag_AAC_5_1: AudioChannelLayoutTag = kAudioChannelLayoutTag_MPEG_5_1_D
public let kAudioChannelLayoutTag_AAC_7_1: AudioChannelLayoutTag = kAudioChannelLayoutTag_MPEG_7_1_B

/// Channels in the order given, none a speaker (the count in the low 16 bits).
public let kAudioChannelLayoutTag_DiscreteInOrder: AudioChannelLayoutTag = (147 << 16) | 0

/// Which speaker a channel is for (``AudioChannelDescription/mChannelLabel``).
public typealias AudioChannelLabel = UInt32
public let kAudioChannelLabel_Unknown: AudioChannelLabel = 0xFFFF_FFFF
public let kAudioChannelLabel_Unused: AudioChannelLabel = 0
public let kAudioChannelLabel_UseCoordinates: AudioChannelLabel = 100
public let kAudioChannelLabel_Left: AudioChannelLabel = 1
public let kAudioChannelLabel_Right: AudioChannelLabel = 2
public let kAudioChannelLabel_Center: AudioChannelLabel = 3
public let kAudioChannelLabel_LFEScreen: AudioChannelLabel = 4
public let kAudioChannelLabel_LeftSurround: AudioChannelLabel = 5
public let kAudioChannelLabel_RightSurround: AudioChannelLabel = 6
public let kAudioChannelLabel_LeftCenter: AudioChannelLabel = 7
public let kAudioChannelLabel_RightCenter: AudioChannelLabel = 8
public let kAudioChannelLabel_CenterSurround: AudioChannelLabel = 9
public let kAudioChannelLabel_LeftSurroundDirect: AudioChannelLabel = 10
public let kAudioChannelLabel_RightSurroundDirect: AudioChannelLabel = 11
public let kAudioChannelLabel_Mono: AudioChannelLabel = 42

/// How a channel description's coordinates are given.
public struct AudioChannelFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let allOff: AudioChannelFlags = []
    public static let rectangularCoordinates = AudioChannelFlags(rawValue: 1 << 0)
    public static let sphericalCoordinates = AudioChannelFlags(rawValue: 1 << 1)
    public static let meters = AudioChannelFlags(rawValue: 1 << 2)
}

/// MPEG-1/2 Layer 3 ('.mp3'), and the AAC variants Apple's encoders make (low delay 'aacl',
/// HE v2 'aacp', enhanced low delay 'aace'): named so settings compile; the writer refuses them
/// by name (it encodes AAC-LC, Opus, FLAC and ALAC).
public let kAudioFormatMPEGLayer3: AudioFormatID = 0x2E6D_7033
public let kAudioFormatMPEG4AAC_LD: AudioFormatID = 0x6161_636C
public let kAudioFormatMPEG4AAC_HE_V2: AudioFormatID = 0x6161_6370
public let kAudioFormatMPEG4AAC_ELD: AudioFormatID = 0x6161_6365

/// Apple's Positional Audio Codec ('apac'), named so settings that ask for it compile; GraphKit's
/// writer refuses it by name (it encodes AAC, Opus, FLAC and ALAC).
public let kAudioFormatAPAC: AudioFormatID = 0x6170_6163  // 'apac'
/// MPEG-4 High Efficiency AAC ('aach'), named for the same reason; the writer refuses it by name.
public let kAudioFormatMPEG4AAC_HE: AudioFormatID = 0x6161_6368  // 'aach'

/// Which speakers a layout has, one bit each, as CoreAudioTypes declares it
/// (`kAudioChannelLayoutTag_UseChannelBitmap` layouts).
public struct AudioChannelBitmap: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let bit_Left = AudioChannelBitmap(rawValue: 1 << 0)
    public static let bit_Right = AudioChannelBitmap(rawValue: 1 << 1)
    public static let bit_Center = AudioChannelBitmap(rawValue: 1 << 2)
    public static let bit_LFEScreen = AudioChannelBitmap(rawValue: 1 << 3)
    public static let bit_LeftSurround = AudioChannelBitmap(rawValue: 1 << 4)
    public static let bit_RightSurround = AudioChannelBitmap(rawValue: 1 << 5)
    public static let bit_LeftCenter = AudioChannelBitmap(rawValue: 1 << 6)
    public static let bit_RightCenter = AudioChannelBitmap(rawValue: 1 << 7)
    public static let bit_CenterSurround = AudioChannelBitmap(rawValue: 1 << 8)
    public static let bit_LeftSurroundDirect = AudioChannelBitmap(rawValue: 1 << 9)
    public static let bit_RightSurroundDirect = AudioChannelBitmap(rawValue: 1 << 10)
    public static let bit_TopCenterSurround = AudioChannelBitmap(rawValue: 1 << 11)
    public static let bit_VerticalHeightLeft = AudioChannelBitmap(rawValue: 1 << 12)
    public static let bit_VerticalHeightCenter = AudioChannelBitmap(rawValue: 1 << 13)
    public static let bit_VerticalHeightRight = AudioChannelBitmap(rawValue: 1 << 14)
    public static let bit_TopBackLeft = AudioChannelBitmap(rawValue: 1 << 15)
    public static let bit_TopBackCenter = AudioChannelBitmap(rawValue: 1 << 16)
    public static let bit_TopBackRight = AudioChannelBitmap(rawValue: 1 << 17)
}

extension AudioChannelLayout {
    /// How many channels the layout has: the tag's count, else the bitmap's bits
    /// (`…UseChannelBitmap`) or the number of descriptions (`…UseChannelDescriptions`); 0 when
    /// it does not say.
    public var channelCount: Int {
        switch mChannelLayoutTag {
        case kAudioChannelLayoutTag_UseChannelBitmap: mChannelBitmap.rawValue.nonzeroBitCount
        case kAudioChannelLayoutTag_UseChannelDescriptions: Int(mNumberChannelDescriptions)
        default: Int(AudioChannelLayoutTag_GetNumberOfChannels(mChannelLayoutTag))
        }
    }

    /// A layout read from its C bytes (`AVChannelLayoutKey`'s Data): the tag, then the bitmap and
    /// the description count where the bytes reach them (code that names a layout by its tag
    /// often gives only the tag's 4 bytes); nil when even the tag is missing.
    package init?(bytes: Data) {
        guard bytes.count >= 4 else { return nil }
        self.init()
        bytes.withUnsafeBytes { raw in
            mChannelLayoutTag = raw.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
            if raw.count >= 8 { mChannelBitmap = AudioChannelBitmap(rawValue: raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }
            if raw.count >= 12 { mNumberChannelDescriptions = raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self) }
        }
    }
}
