import Assets
import GraphKitCore
import MediaContainers

// AVFoundation's metadata: items with keys in key spaces, identifiers that name both, the
// common keys every format maps to, and the formats an asset's tags come in.

/// Where a metadata key belongs, as AVFoundation's.
public struct AVMetadataKeySpace: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let common = AVMetadataKeySpace("comn")
    public static let iTunes = AVMetadataKeySpace("itsk")
    public static let quickTimeMetadata = AVMetadataKeySpace("mdta")
    public static let quickTimeUserData = AVMetadataKeySpace("udta")
    public static let id3 = AVMetadataKeySpace("org.id3")
    public static let isoUserData = AVMetadataKeySpace("uiso")
    /// Not one of Apple's: the Vorbis comments of FLAC and Ogg files, which GraphKit reads.
    public static let vorbisComment = AVMetadataKeySpace("org.xiph.vorbis-comment")
}

/// A metadata key, as AVFoundation's: a common key, or a format's own (`©nam`, `TIT2`).
public struct AVMetadataKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let commonKeyTitle = AVMetadataKey("title")
    public static let commonKeyCreator = AVMetadataKey("creator")
    public static let commonKeySubject = AVMetadataKey("subject")
    public static let commonKeyDescription = AVMetadataKey("description")
    public static let commonKeyPublisher = AVMetadataKey("publisher")
    public static let commonKeyCreationDate = AVMetadataKey("creationDate")
    public static let commonKeyType = AVMetadataKey("type")
    public static let commonKeyLocation = AVMetadataKey("location")
    public static let commonKeyCopyrights = AVMetadataKey("copyrights")
    public static let commonKeyAlbumName = AVMetadataKey("albumName")
    public static let commonKeyArtist = AVMetadataKey("artist")
    public static let commonKeyArtwork = AVMetadataKey("artwork")
    public static let commonKeySoftware = AVMetadataKey("software")
    public static let commonKeyLanguage = AVMetadataKey("language")
    public static let commonKeyModel = AVMetadataKey("model")
    public static let commonKeyMake = AVMetadataKey("make")

    public static let iTunesMetadataKeySongName = AVMetadataKey("©nam")
    public static let iTunesMetadataKeyArtist = AVMetadataKey("©ART")
    public static let iTunesMetadataKeyAlbumArtist = AVMetadataKey("aART")
    public static let iTunesMetadataKeyAlbum = AVMetadataKey("©alb")
    public static let iTunesMetadataKeyUserGenre = AVMetadataKey("©gen")
    public static let iTunesMetadataKeyUserComment = AVMetadataKey("©cmt")
    public static let iTunesMetadataKeyReleaseDate = AVMetadataKey("©day")
    public static let iTunesMetadataKeyEncodingTool = AVMetadataKey("©too")
    public static let iTunesMetadataKeyTrackNumber = AVMetadataKey("trkn")
    public static let iTunesMetadataKeyDiscNumber = AVMetadataKey("disk")
    public static let iTunesMetadataKeyCoverArt = AVMetadataKey("covr")
    public static let iTunesMetadataKeyLyrics = AVMetadataKey("©lyr")

    public static let quickTimeMetadataKeyTitle = AVMetadataKey("com.apple.quicktime.title")
    public static let quickTimeMetadataKeyArtist = AVMetadataKey("com.apple.quicktime.artist")
    public static let quickTimeMetadataKeyCreationDate = AVMetadataKey("com.apple.quicktime.creationdate")
    public static let quickTimeMetadataKeyLocationISO6709 = AVMetadataKey("com.apple.quicktime.location.ISO6709")
    public static let quickTimeMetadataKeySoftware = AVMetadataKey("com.apple.quicktime.software")
    public static let quickTimeMetadataKeyMake = AVMetadataKey("com.apple.quicktime.make")
    public static let quickTimeMetadataKeyModel = AVMetadataKey("com.apple.quicktime.model")
    /// A Live Photo's movie names its still by this (the still's maker note tag 17 repeats it).
    public static let quickTimeMetadataKeyContentIdentifier = AVMetadataKey("com.apple.quicktime.content.identifier")

    public static let id3MetadataKeyTitleDescription = AVMetadataKey("TIT2")
    public static let id3MetadataKeyLeadPerformer = AVMetadataKey("TPE1")
    public static let id3MetadataKeyAlbumTitle = AVMetadataKey("TALB")
}

/// A key and its key space in one name, as AVFoundation's: `common/title`, `itsk/%A9nam`.
public struct AVMetadataIdentifier: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let commonIdentifierTitle = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyTitle, keySpace: .common)!
    public static let commonIdentifierArtist = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyArtist, keySpace: .common)!
    public static let commonIdentifierAlbumName = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyAlbumName, keySpace: .common)!
    public static let commonIdentifierCreationDate = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyCreationDate, keySpace: .common)!
    public static let commonIdentifierDescription = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyDescription, keySpace: .common)!
    public static let commonIdentifierType = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyType, keySpace: .common)!
    public static let commonIdentifierLocation = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyLocation, keySpace: .common)!
    public static let commonIdentifierArtwork = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyArtwork, keySpace: .common)!
    public static let commonIdentifierSoftware = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeySoftware, keySpace: .common)!
    public static let commonIdentifierMake = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyMake, keySpace: .common)!
    public static let commonIdentifierModel = AVMetadataItem.identifier(forKey: AVMetadataKey.commonKeyModel, keySpace: .common)!
    public static let iTunesMetadataSongName = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeySongName, keySpace: .iTunes)!
    public static let iTunesMetadataArtist = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeyArtist, keySpace: .iTunes)!
    public static let iTunesMetadataAlbum = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeyAlbum, keySpace: .iTunes)!
    public static let iTunesMetadataCoverArt = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeyCoverArt, keySpace: .iTunes)!
    public static let iTunesMetadataEncodingTool = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeyEncodingTool, keySpace: .iTunes)!
    public static let iTunesMetadataUserComment = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeyUserComment, keySpace: .iTunes)!
    public static let iTunesMetadataLyrics = AVMetadataItem.identifier(forKey: AVMetadataKey.iTunesMetadataKeyLyrics, keySpace: .iTunes)!
    public static let quickTimeMetadataTitle = AVMetadataItem.identifier(forKey: AVMetadataKey.quickTimeMetadataKeyTitle, keySpace: .quickTimeMetadata)!
    public static let quickTimeMetadataLocationISO6709 = AVMetadataItem.identifier(forKey: AVMetadataKey.quickTimeMetadataKeyLocationISO6709, keySpace: .quickTimeMetadata)!
    public static let quickTimeMetadataCreationDate = AVMetadataItem.identifier(forKey: AVMetadataKey.quickTimeMetadataKeyCreationDate, keySpace: .quickTimeMetadata)!
    public static let quickTimeMetadataMake = AVMetadataItem.identifier(forKey: AVMetadataKey.quickTimeMetadataKeyMake, keySpace: .quickTimeMetadata)!
    public static let quickTimeMetadataModel = AVMetadataItem.identifier(forKey: AVMetadataKey.quickTimeMetadataKeyModel, keySpace: .quickTimeMetadata)!
    public static let quickTimeMetadataContentIdentifier = AVMetadataItem.identifier(forKey: AVMetadataKey.quickTimeMetadataKeyContentIdentifier,
                                                                                     keySpace: .quickTimeMetadata)!
    public static let id3MetadataTitleDescription = AVMetadataItem.identifier(forKey: AVMetadataKey.id3MetadataKeyTitleDescription, keySpace: .id3)!
}

/// The formats an asset's metadata comes in, as AVFoundation's.
public struct AVMetadataFormat: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let iTunesMetadata = AVMetadataFormat("com.apple.itunes")
    public static let quickTimeMetadata = AVMetadataFormat("com.apple.quicktime.mdta")
    public static let quickTimeUserData = AVMetadataFormat("com.apple.quicktime.udta")
    public static let id3Metadata = AVMetadataFormat("org.id3")
    /// Not one of Apple's: Vorbis comments (FLAC, Ogg).
    public static let vorbisComment = AVMetadataFormat("org.xiph.vorbis-comment")

    init(_ space: AVMetadataKeySpace) {
        switch space {
        case .iTunes: self = .iTunesMetadata
        case .quickTimeMetadata: self = .quickTimeMetadata
        case .quickTimeUserData: self = .quickTimeUserData
        case .id3: self = .id3Metadata
        default: self = .vorbisComment
        }
    }
}

/// One metadata item, as AVFoundation's: a key in a key space and a value (text, a number, a
/// date or bytes), read from a file's tags or made to be written (``AVMutableMetadataItem``).
open class AVMetadataItem: AVAsynchronousKeyValueLoading, @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (AVMutableMetadataItem extends it), and the compiler
    // checks only final classes; its fields are in a Mutex (the mutable subclass sets them).
    struct Fields {
        var key: String?
        var keySpace: AVMetadataKeySpace?
        var identifier: AVMetadataIdentifier?
        var value: Value?
        var dataType: String?
        var extendedLanguageTag: String?
        var time: CMTime = .invalid
        var duration: CMTime = .invalid
    }
    let fields: Guarded<Fields>

    /// A value as it is kept (Foundation's objects are made when asked for).
    enum Value: Sendable, Equatable {
        case text(String), integer(Int), number(Double), bytes([UInt8]), date(Date)

        init?(_ object: Any?) {
            switch object {
            case let s as String: self = .text(s)
            case let s as NSString: self = .text(s as String)
            case let d as Date: self = .date(d)
            case let d as NSDate: self = .date(d as Date)
            case let d as Data: self = .bytes([UInt8](d))
            case let d as NSData: self = .bytes([UInt8](d as Data))
            case let n as Int: self = .integer(n)
            case let n as Double: self = .number(n)
            case let n as NSNumber: self = n.doubleValue == n.doubleValue.rounded() && abs(n.doubleValue) < 9e15 ? .integer(n.intValue) : .number(n.doubleValue)
            default: return nil
            }
        }

        var object: any NSCopying & NSObjectProtocol {
            switch self {
            case .text(let s): NSString(string: s)
            case .integer(let n): NSNumber(value: n)
            case .number(let n): NSNumber(value: n)
            case .bytes(let b): NSData(bytes: b, length: b.count)
            case .date(let d): NSDate(timeIntervalSince1970: d.timeIntervalSince1970)
            }
        }
    }

    init(_ fields: Fields) { self.fields = Guarded(fields) }

    public var identifier: AVMetadataIdentifier? {
        fields.withLock { f in f.identifier ?? f.key.flatMap { k in f.keySpace.flatMap { AVMetadataItem.identifier(forKey: AVMetadataKey(k), keySpace: $0) } } }
    }
    public var key: (any NSCopying & NSObjectProtocol)? { fields.withLock { $0.key.map { NSString(string: $0) } } }
    public var keySpace: AVMetadataKeySpace? { fields.withLock { $0.keySpace } }
    /// The common key this item's key maps to, as AVFoundation maps them (`©nam`, `TIT2` and
    /// QuickTime's title: `title`); nil for a key no common key names.
    public var commonKey: AVMetadataKey? {
        let (key, space) = fields.withLock { ($0.key, $0.keySpace) }
        guard let key else { return nil }
        if space == .common { return AVMetadataKey(key) }
        if let device = Self.deviceKeys[key] { return device }
        return Self.commonKeys[MediaMetadata.commonFieldName(key) ?? ""]
    }
    public var value: (any NSCopying & NSObjectProtocol)? { fields.withLock { $0.value }?.object }
    public var dataType: String? { fields.withLock { $0.dataType } }
    public var extendedLanguageTag: String? { fields.withLock { $0.extendedLanguageTag } }
    public var time: CMTime { fields.withLock { $0.time } }
    public var duration: CMTime { fields.withLock { $0.duration } }
    public var locale: Locale? { nil }
    public var extraAttributes: [AVMetadataExtraAttributeKey: Any]? { nil }

    var stored: Value? { fields.withLock { $0.value } }

    public var stringValue: String? {
        switch stored {
        case .text(let s)?: s
        case .integer(let n)?: String(n)
        case .number(let n)?: String(n)
        default: nil
        }
    }
    public var numberValue: NSNumber? {
        switch stored {
        case .integer(let n)?: NSNumber(value: n)
        case .number(let n)?: NSNumber(value: n)
        case .text(let s)?: Int(s.trimmingCharacters(in: .whitespaces)).map { NSNumber(value: $0) }
        default: nil
        }
    }
    /// The value as a date: a date, or text in ISO 8601 (`2024-05-01T12:00:00Z`, or a date
    /// alone, `2024-05-01`, read as midnight UTC).
    public var dateValue: Date? {
        if case .date(let d)? = stored { return d }
        guard let s = stringValue else { return nil }
        if let d = try? Date(s, strategy: .iso8601) { return d }
        return try? Date(s + "T00:00:00Z", strategy: .iso8601)
    }
    public var dataValue: Data? {
        if case .bytes(let b)? = stored { return Data(b) }
        return nil
    }

    /// `keySpace/key`, the key's characters outside letters, digits and `._-` as `%XX` (`©` is
    /// `%A9`, as AVFoundation writes it); nil for an empty key.
    public class func identifier(forKey key: Any, keySpace: AVMetadataKeySpace) -> AVMetadataIdentifier? {
        let text: String
        switch key {
        case let k as AVMetadataKey: text = k.rawValue
        case let k as String: text = k
        case let k as NSString: text = k as String
        default: return nil
        }
        guard !text.isEmpty else { return nil }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "._-".unicodeScalars.contains(scalar) {
                escaped.unicodeScalars.append(scalar)
            } else if scalar.value < 0x100 {
                escaped += "%" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 2)
            } else {
                for byte in String(scalar).utf8 { escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2) }
            }
        }
        return AVMetadataIdentifier("\(keySpace.rawValue == "comn" ? "common" : keySpace.rawValue)/\(escaped)")
    }

    /// An identifier's key with its `%XX` undone: UTF-8 where the bytes are, else one Latin-1
    /// character a byte (`%A9nam` is `©nam`, as iTunes' keys are spelled).
    static func unescaped(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            if text[i] == "%", let end = text.index(i, offsetBy: 3, limitedBy: text.endIndex), let byte = UInt8(text[text.index(after: i)..<end], radix: 16) {
                bytes.append(byte)
                i = end
            } else {
                bytes += Array(String(text[i]).utf8)
                i = text.index(after: i)
            }
        }
        if let utf8 = String(validating: bytes, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    public class func metadataItems(from metadataItems: [AVMetadataItem], filteredByIdentifier identifier: AVMetadataIdentifier) -> [AVMetadataItem] {
        metadataItems.filter { $0.identifier == identifier }
    }

    public class func metadataItems(from metadataItems: [AVMetadataItem], withKey key: Any?, keySpace: AVMetadataKeySpace?) -> [AVMetadataItem] {
        let wanted: String? = switch key {
        case let k as AVMetadataKey: k.rawValue
        case let k as String: k
        case let k as NSString: k as String
        default: nil
        }
        return metadataItems.filter { item in
            (wanted == nil || item.fields.withLock { $0.key } == wanted) && (keySpace == nil || item.keySpace == keySpace)
        }
    }

    /// The items as given: GraphKit reads one language per tag.
    public class func metadataItems(from metadataItems: [AVMetadataItem], filteredAndSortedAccordingToPreferredLanguages preferredLanguages: [String]) -> [AVMetadataItem] {
        metadataItems
    }

    /// The recording device's make and model, in QuickTime's and its user data's spellings: the
    /// common `make` and `model`.
    static let deviceKeys: [String: AVMetadataKey] = [
        "com.apple.quicktime.make": .commonKeyMake, "©mak": .commonKeyMake,
        "com.apple.quicktime.model": .commonKeyModel, "©mod": .commonKeyModel,
    ]

    static let commonKeys: [String: AVMetadataKey] = [
        "title": .commonKeyTitle, "artist": .commonKeyArtist, "album": .commonKeyAlbumName, "genre": .commonKeyType,
        "comment": .commonKeyDescription, "date": .commonKeyCreationDate, "encoder": .commonKeySoftware, "location": .commonKeyLocation,
    ]
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

public struct AVMetadataExtraAttributeKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// A metadata item to write (`AVAssetWriter.metadata`), its fields settable.
open class AVMutableMetadataItem: AVMetadataItem, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; its fields are the base's Mutex.
    public init() { super.init(Fields()) }

    public static func metadataItem() -> AVMutableMetadataItem { AVMutableMetadataItem() }

    open override var identifier: AVMetadataIdentifier? {
        get { super.identifier }
        set {
            fields.withLock { f in
                f.identifier = newValue
                // `space/key`: the key and its space follow from it.
                if let raw = newValue?.rawValue, let slash = raw.firstIndex(of: "/") {
                    let space = String(raw[..<slash])
                    f.keySpace = space == "common" ? .common : AVMetadataKeySpace(space)
                    f.key = AVMetadataItem.unescaped(raw[raw.index(after: slash)...])
                }
            }
        }
    }
    open override var key: (any NSCopying & NSObjectProtocol)? {
        get { super.key }
        set { fields.withLock { $0.key = (newValue as? NSString).map { $0 as String }; $0.identifier = nil } }
    }
    open override var keySpace: AVMetadataKeySpace? {
        get { super.keySpace }
        set { fields.withLock { $0.keySpace = newValue; $0.identifier = nil } }
    }
    open override var value: (any NSCopying & NSObjectProtocol)? {
        get { super.value }
        set {
            let kept = Value(newValue)
            fields.withLock { $0.value = kept }
        }
    }
    open override var dataType: String? {
        get { super.dataType }
        set { fields.withLock { $0.dataType = newValue } }
    }
    open override var extendedLanguageTag: String? {
        get { super.extendedLanguageTag }
        set { fields.withLock { $0.extendedLanguageTag = newValue } }
    }
    open override var time: CMTime {
        get { super.time }
        set { fields.withLock { $0.time = newValue } }
    }
    open override var duration: CMTime {
        get { super.duration }
        set { fields.withLock { $0.duration = newValue } }
    }
}

extension AVPartialAsyncProperty where Root: AVMetadataItem {
    public static var value: AVAsyncProperty<Root, (any NSCopying & NSObjectProtocol)?> { AVAsyncProperty("value") { $0.value } }
    public static var stringValue: AVAsyncProperty<Root, String?> { AVAsyncProperty("stringValue") { $0.stringValue } }
    public static var numberValue: AVAsyncProperty<Root, NSNumber?> { AVAsyncProperty("numberValue") { $0.numberValue } }
    public static var dateValue: AVAsyncProperty<Root, Date?> { AVAsyncProperty("dateValue") { $0.dateValue } }
    public static var dataValue: AVAsyncProperty<Root, Data?> { AVAsyncProperty("dataValue") { $0.dataValue } }
}

// MARK: An asset's metadata

extension AVMetadataItem {
    /// The common creation date as a date item (`dateValue` gives it).
    static func date(_ date: Date) -> AVMetadataItem {
        AVMetadataItem(Fields(key: AVMetadataKey.commonKeyCreationDate.rawValue, keySpace: .common, value: .date(date),
                              dataType: "com.apple.metadata.datatype.ISO-8601-date"))
    }

    /// The items of a file's tags: the common ones, and each as the file names it.
    static func items(of asset: Asset) -> (common: [AVMetadataItem], all: [AVMetadataItem]) {
        let m = asset.metadata
        func text(_ key: String, _ space: AVMetadataKeySpace, _ value: String) -> AVMetadataItem {
            AVMetadataItem(Fields(key: key, keySpace: space, value: .text(value), dataType: "com.apple.metadata.datatype.UTF-8"))
        }
        func picture(_ key: String, _ space: AVMetadataKeySpace, _ art: MediaMetadata.Artwork) -> AVMetadataItem {
            let type = art.mimeType == "image/png" ? "com.apple.metadata.datatype.PNG"
                : art.mimeType == "image/jpeg" ? "com.apple.metadata.datatype.JPEG" : "com.apple.metadata.datatype.raw-data"
            return AVMetadataItem(Fields(key: key, keySpace: space, value: .bytes(art.data), dataType: type))
        }
        var common: [AVMetadataItem] = []
        for (key, value) in [(AVMetadataKey.commonKeyTitle, m.title), (.commonKeyArtist, m.artist), (.commonKeyAlbumName, m.album),
                             (.commonKeyType, m.genre), (.commonKeyDescription, m.comment), (.commonKeyCreationDate, m.date),
                             (.commonKeySoftware, m.encoder), (.commonKeyLocation, m.location)] {
            if let value { common.append(text(key.rawValue, .common, value)) }
        }
        if let art = m.artwork { common.append(picture(AVMetadataKey.commonKeyArtwork.rawValue, .common, art)) }
        // The device that recorded it (a phone's movie says so in QuickTime's keys).
        for commonKey in [AVMetadataKey.commonKeyMake, .commonKeyModel] {
            if let item = m.items.first(where: { deviceKeys[$0.key] == commonKey }) { common.append(text(commonKey.rawValue, .common, item.value)) }
        }

        let space: (String) -> AVMetadataKeySpace = { key in
            switch asset.containerFormat {
            case .mp4?, .mov?: key.contains(".") ? .quickTimeMetadata : key == "©xyz" ? .quickTimeUserData : .iTunes
            case .mp3?: .id3
            default: .vorbisComment
            }
        }
        var all = m.items.map { text($0.key, space($0.key), $0.value) }
        if let art = m.artwork {
            let (key, keySpace): (String, AVMetadataKeySpace) = switch asset.containerFormat {
            case .mp4?, .mov?: ("covr", .iTunes)
            case .mp3?: ("APIC", .id3)
            default: ("METADATA_BLOCK_PICTURE", .vorbisComment)
            }
            all.append(picture(key, keySpace, art))
        }
        return (common, all)
    }
}

/// Which metadata items an export keeps, as AVFoundation's `AVMetadataItemFilter`.
/// ``forSharing()`` is Apple's one filter: it removes what may identify the person who recorded
/// (here: the location, as ISO 6709 text or any item keyed as a location, and the device's make
/// and model) and keeps what a shared copy wants (titles, artist, copyright, artwork, dates).
open class AVMetadataItemFilter: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; it holds nothing.
    init() {}

    open class func forSharing() -> AVMetadataItemFilter { AVMetadataItemFilter() }

    /// Keys of personal items, in the spellings QuickTime, iTunes and ID3 give them.
    static let personalKeys: Set<String> = ["©xyz", "com.apple.quicktime.location.ISO6709", "com.apple.quicktime.location.name",
                                            "com.apple.quicktime.location.body", "com.apple.quicktime.location.note",
                                            "com.apple.quicktime.location.role", "com.apple.quicktime.location.date",
                                            "com.apple.quicktime.make", "com.apple.quicktime.model", "©mak", "©mod",
                                            "loci", "location", "LOCATION"]

    /// `tags` without the personal items.
    func apply(to tags: MediaMetadata) -> MediaMetadata {
        var t = tags
        t.location = nil
        t.items.removeAll { Self.personalKeys.contains($0.key) || $0.key.lowercased().contains("location") }
        return t
    }
}
