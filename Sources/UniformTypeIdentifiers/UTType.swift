@_exported import Foundation

// UniformTypeIdentifiers as Apple declares it (UTType.h and the Swift overlay's UTType struct),
// for what media code does with it: name a file's type by identifier (`UTType.jpeg.identifier`,
// handed to ImageIO and AVFoundation as a CFString), find a type from a file name extension or a
// MIME type, and ask whether one conforms to another (`.conforms(to: .image)`). Linux has no type
// database: the types are the table below, Apple's identifiers, tags and conformances for the
// common media types; nothing is read from installed applications.

/// A uniform type identifier, as UniformTypeIdentifiers' `UTType`: its identifier, tags (file
/// name extensions and MIME types) and the types it conforms to.
///
/// Where it differs from Apple's: the declared types are a fixed table of the common media,
/// image and data types (``UTType/jpeg``, ``UTType/png``, ``UTType/mpeg4Movie``… listed in
/// `knownTypes`), not the system's database; a type found by an unknown extension or MIME type is
/// a dynamic type as on Apple's platforms (``isDynamic``), but its identifier is `dyn.` followed
/// by the tag (Apple encodes the tag), so it is equal to another dynamic type of the same tag.
public struct UTType: Hashable, Sendable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The type's identifier: `public.jpeg`.
    public let identifier: String
    /// File name extensions and MIME types, preferred first.
    public let tags: [UTTagClass: [String]]
    /// Whether the table declares this type (false for a dynamic or an undeclared one).
    public let isDeclared: Bool
    /// Whether it was made from a tag the table does not know (``init(filenameExtension:conformingTo:)``).
    public let isDynamic: Bool
    /// What it directly conforms to, by identifier.
    private let parents: [String]
    /// English description, as Apple's `localizedDescription` in an English locale.
    public let localizedDescription: String?

    private init(_ declaration: Declaration) {
        identifier = declaration.identifier
        tags = [.filenameExtension: declaration.extensions, .mimeType: declaration.mimeTypes].filter { !$0.value.isEmpty }
        isDeclared = true
        isDynamic = false
        parents = declaration.conformsTo
        localizedDescription = declaration.description
    }

    private init(identifier: String, tags: [UTTagClass: [String]], dynamic: Bool, parents: [String]) {
        self.identifier = identifier
        self.tags = tags
        isDeclared = false
        isDynamic = dynamic
        self.parents = parents
        localizedDescription = nil
    }

    /// The declared type of `identifier` (compared without regard to case, as Apple's); nil when
    /// the table does not declare it, as Apple's returns nil for a type the system does not know.
    public init?(_ identifier: String) {
        guard let declaration = Self.byIdentifier[identifier.lowercased()] else { return nil }
        self.init(declaration)
    }

    /// A type the program uses without declaring it: the declared type when the table has it,
    /// else an undeclared type of that identifier conforming to nothing but itself.
    public init(importedAs identifier: String) {
        if let declaration = Self.byIdentifier[identifier.lowercased()] {
            self.init(declaration)
        } else {
            self.init(identifier: identifier, tags: [:], dynamic: false, parents: [])
        }
    }

    /// A type the program declares: as ``init(importedAs:)`` (Linux has no Info.plist to read
    /// its conformances from).
    public init(exportedAs identifier: String) {
        self.init(importedAs: identifier)
    }

    /// The type of a file name extension (`"jpg"`, `"MP4"`: without the dot, any case) that
    /// conforms to `supertype`: the declared one when the table has one, else a dynamic type of
    /// that extension conforming to `supertype`. Nil for an empty extension or one with a dot or
    /// a slash in it.
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) {
        self.init(tag: filenameExtension, tagClass: .filenameExtension, conformingTo: supertype)
    }

    /// The type of a MIME type (`"image/jpeg"`, any case) that conforms to `supertype`, found
    /// as ``init(filenameExtension:conformingTo:)`` finds one. Nil for text that is not of the
    /// form `type/subtype`.
    public init?(mimeType: String, conformingTo supertype: UTType = .data) {
        self.init(tag: mimeType, tagClass: .mimeType, conformingTo: supertype)
    }

    /// The type of a tag of a class (``UTTagClass/filenameExtension``, ``UTTagClass/mimeType``)
    /// conforming to `supertype`: the first declared one, else a dynamic one.
    public init?(tag: String, tagClass: UTTagClass, conformingTo supertype: UTType?) {
        let tag = tag.lowercased()
        switch tagClass {
        case .filenameExtension:
            guard !tag.isEmpty, !tag.contains("."), !tag.contains("/") else { return nil }
        case .mimeType:
            let parts = tag.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, !tag.contains(" ") else { return nil }
        default:
            guard !tag.isEmpty else { return nil }
        }
        for declaration in Self.knownTypes where (tagClass == .filenameExtension ? declaration.extensions : declaration.mimeTypes).contains(tag) {
            let type = UTType(declaration)
            if supertype.map(type.conforms(to:)) ?? true {
                self = type
                return
            }
        }
        let escaped = tag.map { $0.isLetter || $0.isNumber || $0 == "-" ? String($0) : "_" }.joined()
        self.init(identifier: "dyn.\(tagClass == .mimeType ? "mime" : "ext").\(escaped)", tags: [tagClass: [tag]], dynamic: true,
                  parents: [(supertype ?? .data).identifier])
    }

    /// The first file name extension of the type, without the dot (`"jpeg"`).
    public var preferredFilenameExtension: String? { tags[.filenameExtension]?.first }
    /// The first MIME type of the type (`"image/jpeg"`).
    public var preferredMIMEType: String? { tags[.mimeType]?.first }
    /// Whether the identifier is in Apple's `public.` domain.
    public var isPublic: Bool { identifier.lowercased().hasPrefix("public.") }

    /// Every type this one conforms to, directly or not, itself excepted.
    public var supertypes: Set<UTType> {
        var seen: Set<String> = []
        var result: Set<UTType> = []
        var next = parents
        while let id = next.popLast() {
            guard seen.insert(id.lowercased()).inserted, let type = UTType(id) else { continue }
            result.insert(type)
            next += type.parents
        }
        return result
    }

    /// Whether this type is `type` or conforms to it, directly or through its supertypes
    /// (`UTType.jpeg.conforms(to: .image)`, `.mpeg4Movie.conforms(to: .audiovisualContent)`).
    public func conforms(to type: UTType) -> Bool {
        self == type || supertypes.contains(type)
    }

    public func isSubtype(of type: UTType) -> Bool { self != type && conforms(to: type) }
    public func isSupertype(of type: UTType) -> Bool { type.isSubtype(of: self) }

    public var description: String { identifier }
    public var debugDescription: String { "<UTType \(identifier)>" }

    // Equal when the identifiers are, whatever their case.
    public static func == (a: UTType, b: UTType) -> Bool { a.identifier.lowercased() == b.identifier.lowercased() }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier.lowercased()) }

    // Encoded as its identifier, as Apple's.
    public init(from decoder: any Decoder) throws {
        let identifier = try decoder.singleValueContainer().decode(String.self)
        self.init(importedAs: identifier)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(identifier)
    }
}

/// A class of tags, as UniformTypeIdentifiers' `UTTagClass`.
public struct UTTagClass: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let filenameExtension = UTTagClass(rawValue: "public.filename-extension")
    public static let mimeType = UTTagClass(rawValue: "public.mime-type")
}

// MARK: The declared types

extension UTType {
    struct Declaration: Sendable {
        let identifier: String
        let conformsTo: [String]
        let extensions: [String]
        let mimeTypes: [String]
        let description: String
    }

    /// Apple's declarations of the common types (identifier, conformances, tags, preferred
    /// first), in the order a tag is looked up: where two declare one tag (`m4a`), the first
    /// found wins, as the system's preferred one does.
    static let knownTypes: [Declaration] = [
        Declaration(identifier: "public.item", conformsTo: [], extensions: [], mimeTypes: [], description: "item"),
        Declaration(identifier: "public.content", conformsTo: [], extensions: [], mimeTypes: [], description: "content"),
        Declaration(identifier: "public.data", conformsTo: ["public.item"], extensions: [], mimeTypes: [], description: "data"),
        Declaration(identifier: "public.image", conformsTo: ["public.data", "public.content"], extensions: [], mimeTypes: [], description: "image"),
        Declaration(identifier: "public.jpeg", conformsTo: ["public.image"], extensions: ["jpeg", "jpg", "jpe"],
                    mimeTypes: ["image/jpeg", "image/jpg"], description: "JPEG image"),
        Declaration(identifier: "public.png", conformsTo: ["public.image"], extensions: ["png"], mimeTypes: ["image/png"], description: "PNG image"),
        Declaration(identifier: "public.heif", conformsTo: ["public.image"], extensions: ["heif"], mimeTypes: ["image/heif"], description: "HEIF image"),
        Declaration(identifier: "public.heic", conformsTo: ["public.heif"], extensions: ["heic"], mimeTypes: ["image/heic"], description: "HEIC image"),
        Declaration(identifier: "public.avif", conformsTo: ["public.image"], extensions: ["avif"], mimeTypes: ["image/avif"], description: "AVIF image"),
        Declaration(identifier: "com.compuserve.gif", conformsTo: ["public.image"], extensions: ["gif"], mimeTypes: ["image/gif"], description: "GIF image"),
        Declaration(identifier: "public.tiff", conformsTo: ["public.image"], extensions: ["tiff", "tif"], mimeTypes: ["image/tiff"], description: "TIFF image"),
        Declaration(identifier: "com.microsoft.bmp", conformsTo: ["public.image"], extensions: ["bmp", "dib"], mimeTypes: ["image/bmp", "image/x-bmp"],
                    description: "Windows bitmap image"),
        Declaration(identifier: "org.webmproject.webp", conformsTo: ["public.image"], extensions: ["webp"], mimeTypes: ["image/webp"], description: "WebP image"),
        Declaration(identifier: "public.audiovisual-content", conformsTo: ["public.data", "public.content"], extensions: [], mimeTypes: [],
                    description: "audiovisual content"),
        Declaration(identifier: "public.movie", conformsTo: ["public.audiovisual-content"], extensions: [], mimeTypes: [], description: "movie"),
        Declaration(identifier: "public.video", conformsTo: ["public.movie"], extensions: [], mimeTypes: [], description: "video"),
        Declaration(identifier: "public.audio", conformsTo: ["public.audiovisual-content"], extensions: [], mimeTypes: [], description: "audio"),
        Declaration(identifier: "public.mpeg-4", conformsTo: ["public.movie"], extensions: ["mp4", "mpeg4"], mimeTypes: ["video/mp4", "video/mp4v"],
                    description: "MPEG-4 movie"),
        Declaration(identifier: "com.apple.quicktime-movie", conformsTo: ["public.movie"], extensions: ["mov", "qt"], mimeTypes: ["video/quicktime"],
                    description: "QuickTime movie"),
        Declaration(identifier: "com.apple.m4v-video", conformsTo: ["public.mpeg-4"], extensions: ["m4v"], mimeTypes: ["video/x-m4v"],
                    description: "MPEG-4 video"),
        Declaration(identifier: "public.3gpp", conformsTo: ["public.movie"], extensions: ["3gp", "3gpp"], mimeTypes: ["video/3gpp", "audio/3gpp"],
                    description: "3GPP multimedia"),
        Declaration(identifier: "public.mpeg-2-transport-stream", conformsTo: ["public.movie"], extensions: ["ts"], mimeTypes: ["video/mp2t"],
                    description: "MPEG-2 transport stream"),
        Declaration(identifier: "com.apple.m4a-audio", conformsTo: ["public.mpeg-4-audio"], extensions: ["m4a"], mimeTypes: ["audio/x-m4a"],
                    description: "Apple MPEG-4 audio"),
        Declaration(identifier: "public.mpeg-4-audio", conformsTo: ["public.mpeg-4", "public.audio"], extensions: ["m4a", "m4b"],
                    mimeTypes: ["audio/mp4", "audio/mpeg4"], description: "MPEG-4 audio"),
        Declaration(identifier: "public.mp3", conformsTo: ["public.audio"], extensions: ["mp3"], mimeTypes: ["audio/mpeg", "audio/mp3"],
                    description: "MP3 audio"),
        Declaration(identifier: "com.microsoft.waveform-audio", conformsTo: ["public.audio"], extensions: ["wav", "wave"],
                    mimeTypes: ["audio/vnd.wave", "audio/wav", "audio/wave", "audio/x-wav"], description: "Waveform audio"),
        Declaration(identifier: "public.aifc-audio", conformsTo: ["public.audio"], extensions: ["aifc", "aiffc"], mimeTypes: ["audio/x-aifc"],
                    description: "AIFF-C audio"),
        Declaration(identifier: "public.aiff-audio", conformsTo: ["public.aifc-audio"], extensions: ["aiff", "aif"], mimeTypes: ["audio/aiff", "audio/x-aiff"],
                    description: "AIFF audio"),
        Declaration(identifier: "com.apple.coreaudio-format", conformsTo: ["public.audio"], extensions: ["caf"], mimeTypes: ["audio/x-caf"],
                    description: "Apple Core Audio format"),
        Declaration(identifier: "org.xiph.flac", conformsTo: ["public.audio"], extensions: ["flac"], mimeTypes: ["audio/flac"], description: "FLAC audio"),
        Declaration(identifier: "public.text", conformsTo: ["public.data", "public.content"], extensions: [], mimeTypes: [], description: "text"),
        Declaration(identifier: "public.plain-text", conformsTo: ["public.text"], extensions: ["txt", "text"], mimeTypes: ["text/plain"],
                    description: "plain text"),
        Declaration(identifier: "public.json", conformsTo: ["public.text"], extensions: ["json"], mimeTypes: ["application/json"], description: "JSON"),
        Declaration(identifier: "public.m3u-playlist", conformsTo: ["public.text"], extensions: ["m3u8", "m3u"],
                    mimeTypes: ["application/vnd.apple.mpegurl", "audio/mpegurl", "audio/x-mpegurl"], description: "M3U playlist"),
    ]

    static let byIdentifier: [String: Declaration] = Dictionary(knownTypes.map { ($0.identifier.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })

    fileprivate static func declared(_ identifier: String) -> UTType {
        guard let declaration = byIdentifier[identifier] else { preconditionFailure("\(identifier) is not in UTType.knownTypes") }
        return UTType(declaration)
    }

    public static let item = declared("public.item")
    public static let content = declared("public.content")
    public static let data = declared("public.data")
    public static let image = declared("public.image")
    public static let jpeg = declared("public.jpeg")
    public static let png = declared("public.png")
    public static let heif = declared("public.heif")
    public static let heic = declared("public.heic")
    public static let avif = declared("public.avif")
    public static let gif = declared("com.compuserve.gif")
    public static let tiff = declared("public.tiff")
    public static let bmp = declared("com.microsoft.bmp")
    public static let webP = declared("org.webmproject.webp")
    public static let audiovisualContent = declared("public.audiovisual-content")
    public static let movie = declared("public.movie")
    public static let video = declared("public.video")
    public static let audio = declared("public.audio")
    public static let mpeg4Movie = declared("public.mpeg-4")
    public static let quickTimeMovie = declared("com.apple.quicktime-movie")
    public static let appleProtectedMPEG4Video = UTType(importedAs: "com.apple.protected-mpeg-4-video")
    public static let mpeg2TransportStream = declared("public.mpeg-2-transport-stream")
    public static let mpeg4Audio = declared("public.mpeg-4-audio")
    public static let mp3 = declared("public.mp3")
    public static let wav = declared("com.microsoft.waveform-audio")
    public static let aiff = declared("public.aiff-audio")
    public static let text = declared("public.text")
    public static let plainText = declared("public.plain-text")
    public static let json = declared("public.json")
    public static let m3uPlaylist = declared("public.m3u-playlist")
}

// MARK: CoreServices' identifiers

// The identifiers as CoreServices' (LaunchServices' UTCoreTypes.h) older constants name them,
// deprecated on Apple's platforms for UTType but still common in ImageIO code
// (`CGImageDestinationCreateWithURL(url, kUTTypeJPEG, 1, nil)`). CFString is String here, so they
// are Strings, and `kUTTypeJPEG as String` and `as CFString` both compile.
public let kUTTypeItem = "public.item"
public let kUTTypeContent = "public.content"
public let kUTTypeData = "public.data"
public let kUTTypeImage = "public.image"
public let kUTTypeJPEG = "public.jpeg"
public let kUTTypePNG = "public.png"
public let kUTTypeGIF = "com.compuserve.gif"
public let kUTTypeTIFF = "public.tiff"
public let kUTTypeBMP = "com.microsoft.bmp"
public let kUTTypeAudiovisualContent = "public.audiovisual-content"
public let kUTTypeMovie = "public.movie"
public let kUTTypeVideo = "public.video"
public let kUTTypeAudio = "public.audio"
public let kUTTypeMPEG4 = "public.mpeg-4"
public let kUTTypeQuickTimeMovie = "com.apple.quicktime-movie"
public let kUTTypeMPEG4Audio = "public.mpeg-4-audio"
public let kUTTypeMP3 = "public.mp3"
public let kUTTypeWaveformAudio = "com.microsoft.waveform-audio"
public let kUTTypeAudioInterchangeFileFormat = "public.aiff-audio"
public let kUTTypeText = "public.text"
public let kUTTypePlainText = "public.plain-text"
public let kUTTypeJSON = "public.json"
