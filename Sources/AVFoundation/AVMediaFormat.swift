@_exported import CoreMedia
@_exported import AudioToolbox
@_exported import CoreVideo
@_exported import Foundation
@_exported import Dispatch
import Assets
import GraphKitCore

/// A kind of media, as AVFoundation's (the four-character codes of CoreMedia, as strings).
public struct AVMediaType: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let audio = AVMediaType("soun")
    public static let video = AVMediaType("vide")
    /// Not written or read by GraphKit: an input or output of these types cannot be added.
    public static let text = AVMediaType("text")
    public static let closedCaption = AVMediaType("clcp")
    public static let subtitle = AVMediaType("sbtl")
    public static let timecode = AVMediaType("tmcd")
    public static let metadata = AVMediaType("meta")
    public static let muxed = AVMediaType("muxx")

    /// GraphKit's media type, for audio and video.
    var assets: Assets.MediaType? {
        switch self {
        case .audio: .audio
        case .video: .video
        default: nil
        }
    }

    init(_ type: Assets.MediaType) { self = type == .audio ? .audio : .video }
}

/// What a track's media is for, as AVFoundation's (its string values are Apple's).
public struct AVMediaCharacteristic: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let audible = AVMediaCharacteristic("AVMediaCharacteristicAudible")
    public static let visual = AVMediaCharacteristic("AVMediaCharacteristicVisual")
    public static let legible = AVMediaCharacteristic("AVMediaCharacteristicLegible")
    public static let frameBased = AVMediaCharacteristic("AVMediaCharacteristicFrameBased")
    /// Video in high dynamic range: a PQ (HDR10) or HLG transfer function, as the file states it.
    public static let containsHDRVideo = AVMediaCharacteristic("AVMediaCharacteristicContainsHDRVideo")
}

/// A kind of file, as AVFoundation's (uniform type identifiers).
public struct AVFileType: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let mp4 = AVFileType("public.mpeg-4")
    public static let mov = AVFileType("com.apple.quicktime-movie")
    public static let m4a = AVFileType("com.apple.m4a-audio")
    /// Not written by GraphKit: a writer of these types cannot be made.
    public static let m4v = AVFileType("com.apple.m4v-video")
    public static let wav = AVFileType("com.microsoft.waveform-audio")
    public static let caf = AVFileType("com.apple.coreaudio-format")
    public static let aiff = AVFileType("public.aiff-audio")
    // Not written by GraphKit either (Apple's writer makes none of the first four): a writer of
    // these types cannot be made; the reader reads MP3.
    public static let mp3 = AVFileType("public.mp3")
    public static let amr = AVFileType("org.3gpp.adaptive-multi-rate-audio")
    public static let mobile3GPP = AVFileType("public.3gpp")
    public static let mobile3GPP2 = AVFileType("public.3gpp2")
    public static let SCC = AVFileType("com.scenarist.closed-caption")

    var assets: FileType? {
        switch self {
        case .mp4: .mp4
        case .mov: .mov
        case .m4a: .m4a
        default: nil
        }
    }
}

// MARK: Errors, as AVFoundation reports them

/// The domain of the errors AVFoundation's objects report in `error`.
public let AVFoundationErrorDomain = "AVFoundationErrorDomain"

/// AVFoundation's error codes that GraphKit reports.
public enum AVErrorCode: Int, Sendable {
    case unknown = -11800
    case outOfMemory = -11801
    case diskFull = -11807
    case fileAlreadyExists = -11823
    case invalidSourceMedia = -11822
    case fileFormatNotRecognized = -11828
    case fileFailedToParse = -11829
    case operationNotAllowed = -11862
    case noDataCaptured = -11805
    case encoderNotFound = -11833
    case fileTypeDoesNotSupportSampleReferences = -11835
    case invalidOutputURLPathExtension = -11843
}

/// An error in AVFoundation's domain: `localizedDescription` says what happened (GraphKit's
/// message, naming the input, file and cause); `NSUnderlyingErrorKey` holds the `GraphError`.
func avError(_ code: AVErrorCode, _ message: String, underlying: (any Error)? = nil) -> NSError {
    var info: [String: Any] = [NSLocalizedDescriptionKey: message]
    if let underlying { info[NSUnderlyingErrorKey] = underlying }
    return NSError(domain: AVFoundationErrorDomain, code: code.rawValue, userInfo: info)
}

/// Why a file cannot be written at `url` because of its folder, as AVFoundation's writer and
/// export session fail there (`AVError.unknown`, the POSIX cause underneath), or nil. GraphKit's
/// own graphs make an output's missing folders; Apple's objects do not, and code that relies on
/// the failure (to report a bad path) gets it.
func outputFolderProblem(_ url: URL) -> NSError? {
    let folder = url.deletingLastPathComponent().path
    var info = stat()
    let cause: Int32
    if stat(folder, &info) != 0 {
        cause = errno
    } else if info.st_mode & S_IFMT != S_IFDIR {
        cause = ENOTDIR
    } else {
        return nil
    }
    let reason = cause == ENOENT ? "does not exist" : cause == ENOTDIR ? "is not a folder" : String(cString: strerror(cause))
    return avError(.unknown, "cannot write \(url.path): its folder \(folder) \(reason) (AVFoundation creates no folders); create it first",
                   underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(cause)))
}

/// A GraphKit error as AVFoundation reports one.
func avError(_ error: any Error) -> NSError {
    if let e = error as NSError?, e.domain == AVFoundationErrorDomain { return e }
    if let g = error as? GraphError {
        let code: AVErrorCode = switch g.code {
        case .inputUnreadable: .fileFailedToParse
        case .missingPlugin: .encoderNotFound
        case .usage: .operationNotAllowed
        default: .unknown
        }
        return avError(code, g.description, underlying: g)
    }
    return avError(.unknown, "\(error)", underlying: error)
}
