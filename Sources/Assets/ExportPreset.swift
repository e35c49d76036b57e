import GraphKitCore

/// What an ``AssetExportSession`` makes of an asset, as AVFoundation's export presets (the raw
/// values are Apple's `AVAssetExportPreset…` strings).
///
/// - ``passthrough``: the first H.264 video track and the first AAC sound track as stored, never
///   re-encoded (a track in another codec is left out: `sink.mp4` writes these two); a time
///   range is cut at the video keyframe at or before its start.
/// - ``highestQuality``: H.264 at the source's size, AAC.
/// - ``uhd3840x2160``, ``hd1920x1080``, ``hd1280x720``, ``qhd960x540``, ``sd640x480``: H.264
///   scaled to fit in that box (the box turned for a portrait source), aspect ratio kept, never
///   enlarged; AAC.
/// - ``mediumQuality``, ``lowQuality``: H.264 at about as many pixels as 480×360 and 192×144
///   (the source's aspect ratio kept, sides multiples of 8, never enlarged), as Apple's give
///   568×320 and 224×128 for a 16:9 source; AAC at 96 and 64 kbit/s.
/// - ``hevcHighestQuality``, ``hevc1920x1080``, ``hevc3840x2160``: the same as their H.264
///   namesakes, in HEVC.
/// - ``appleM4A``: the sound alone as AAC, in an M4A file.
public enum ExportPreset: String, Sendable, CaseIterable {
    case passthrough = "AVAssetExportPresetPassthrough"
    case highestQuality = "AVAssetExportPresetHighestQuality"
    case mediumQuality = "AVAssetExportPresetMediumQuality"
    case lowQuality = "AVAssetExportPresetLowQuality"
    case uhd3840x2160 = "AVAssetExportPreset3840x2160"
    case hd1920x1080 = "AVAssetExportPreset1920x1080"
    case hd1280x720 = "AVAssetExportPreset1280x720"
    case qhd960x540 = "AVAssetExportPreset960x540"
    case sd640x480 = "AVAssetExportPreset640x480"
    case hevcHighestQuality = "AVAssetExportPresetHEVCHighestQuality"
    case hevc1920x1080 = "AVAssetExportPresetHEVC1920x1080"
    case hevc3840x2160 = "AVAssetExportPresetHEVC3840x2160"
    case appleM4A = "AVAssetExportPresetAppleM4A"

    /// The box a video preset fits the picture in (landscape); nil: the source's size, or no video.
    var box: (width: Int, height: Int)? {
        switch self {
        case .uhd3840x2160, .hevc3840x2160: (3840, 2160)
        case .hd1920x1080, .hevc1920x1080: (1920, 1080)
        case .hd1280x720: (1280, 720)
        case .qhd960x540: (960, 540)
        case .sd640x480: (640, 480)
        case .passthrough, .highestQuality, .mediumQuality, .lowQuality, .hevcHighestQuality, .appleM4A: nil
        }
    }

    /// The number of pixels a quality preset aims at; nil for the others.
    var area: Int? {
        switch self {
        case .mediumQuality: 480 * 360
        case .lowQuality: 192 * 144
        default: nil
        }
    }

    /// The video codec it encodes with.
    var videoCodec: VideoCodec {
        switch self {
        case .hevcHighestQuality, .hevc1920x1080, .hevc3840x2160: .hevc
        default: .h264
        }
    }

    /// AAC's bit rate.
    var audioBitRate: Int {
        switch self {
        case .mediumQuality: 96_000
        case .lowQuality: 64_000
        default: 128_000
        }
    }

    /// Whether it encodes video (and so needs a video track).
    var encodesVideo: Bool { self != .passthrough && self != .appleM4A }

    /// The file types it writes, as `supportedFileTypes`: an M4A holds sound only.
    public func supportedFileTypes(for asset: Asset) -> [FileType] {
        switch self {
        case .appleM4A: [.m4a]
        case .passthrough: asset.tracks(withMediaType: .video).isEmpty ? [.m4a, .mp4, .mov] : [.mp4, .mov]
        default: [.mp4, .mov]
        }
    }

    /// The presets that can export `asset` (`exportPresets(compatibleWith:)`): the video
    /// presets need a video track, ``appleM4A`` a sound track, ``passthrough`` a track stored
    /// as H.264 or AAC (what an MP4 written by GraphKit holds).
    public static func presets(compatibleWith asset: Asset) -> [ExportPreset] {
        allCases.filter { $0.incompatibility(with: asset) == nil }
    }

    /// The presets that can export `composition`: ``passthrough`` when every track's pieces
    /// can be joined as stored, ``appleM4A`` with a sound track, the others with a video track.
    public static func presets(compatibleWith composition: Composition) -> [ExportPreset] {
        allCases.filter { preset in
            guard composition.tracks.contains(where: { !$0.pieces.isEmpty }) else { return false }
            if preset == .passthrough { return composition.tracks.allSatisfy { (try? $0.checkPassthrough()) != nil } }
            return preset.incompatibility(with: composition) == nil && (try? composition.checkOneTrackPerType()) != nil
        }
    }

    /// Why the preset cannot export `asset`; nil when it can.
    func incompatibility(with asset: Asset) -> String? {
        let video = asset.tracks(withMediaType: .video), audio = asset.tracks(withMediaType: .audio)
        switch self {
        case .appleM4A:
            return audio.isEmpty ? "it has no sound track, and \(rawValue) exports sound" : nil
        case .passthrough:
            let first = Array(video.prefix(1) + audio.prefix(1))
            if first.isEmpty { return "it has no video or sound track to copy (it has \(asset.tracks.map(\.description).joined(separator: ", ")))" }
            // An MP4 or QuickTime file is copied by the container library, whatever its codecs
            // (``AssetExportSession/exportByIndex(_:)``); from another container, the graph
            // copies H.264 and AAC into MP4, and a track it cannot copy is not left out silently.
            if asset.containerFormat == .mp4 || asset.containerFormat == .mov { return nil }
            let left = first.filter { !$0.isCopyable }
            guard !left.isEmpty else { return nil }
            return "from \(asset.containerFormat?.name ?? "this file"), \(rawValue) copies H.264 video and AAC sound; \(left.map(\.description).joined(separator: " and ")) would be left out"
        default:
            return video.isEmpty ? "it has no video track, and \(rawValue) encodes video (use \(ExportPreset.appleM4A.rawValue) for sound)" : nil
        }
    }

    /// The file types it writes of `composition`: an M4A for ``appleM4A``, and for a
    /// ``passthrough`` of sound alone.
    public func supportedFileTypes(for composition: Composition) -> [FileType] {
        switch self {
        case .appleM4A: [.m4a]
        case .passthrough: composition.encodedTrack(.video) == nil ? [.m4a, .mp4, .mov] : [.mp4, .mov]
        default: [.mp4, .mov]
        }
    }

    /// Why the preset cannot export `composition` by re-encoding it; nil when it can. (A
    /// ``passthrough`` is checked piece by piece: ``CompositionTrack/checkPassthrough()``.)
    func incompatibility(with composition: Composition) -> String? {
        let video = composition.encodedTrack(.video), audio = composition.encodedTrack(.audio)
        switch self {
        case .appleM4A:
            return audio == nil ? "it has no sound track with a piece, and \(rawValue) exports sound" : nil
        case .passthrough:
            return nil
        default:
            return video == nil ? "it has no video track with a piece, and \(rawValue) encodes video (use \(ExportPreset.appleM4A.rawValue) for sound)" : nil
        }
    }

    /// `width` × `height` fitted in `box` (turned for a portrait picture), its shape kept, never
    /// enlarged, in even sizes: a preset's picture (``AVOutputSettingsAssistant``'s too).
    package static func fit(width: Int, height: Int, in box: (width: Int, height: Int)) -> (width: Int, height: Int) {
        guard width > 0, height > 0 else { return (max(2, box.width & ~1), max(2, box.height & ~1)) }
        let b = height > width ? (box.height, box.width) : box
        let scale = min(1, min(Double(b.0) / Double(width), Double(b.1) / Double(height)))
        return (max(2, Int((Double(width) * scale).rounded()) & ~1), max(2, Int((Double(height) * scale).rounded()) & ~1))
    }

    /// The encoders' settings for a source of `width` × `height` with `sampleRate` Hz and
    /// `channels`: the picture fitted in the preset's box, even sizes, never enlarged; AAC at
    /// the preset's bit rate (128 kbit/s but for the quality ones), stereo at most (as AVFoundation's presets).
    func settings(width: Int?, height: Int?, sampleRate: Int?, channels: Int?) -> (video: VideoSettings?, audio: AudioSettings?) {
        var video: VideoSettings?
        if encodesVideo, let width, let height, width > 0, height > 0 {
            var (w, h) = (width, height)
            if let box {
                (w, h) = Self.fit(width: width, height: height, in: box)
            } else if let area, width * height > area {
                let aspect = Double(width) / Double(height)
                let multipleOf8 = { (x: Double) in max(8, Int((x / 8).rounded()) * 8) }
                (w, h) = (min(width, multipleOf8((Double(area) * aspect).squareRoot())), min(height, multipleOf8((Double(area) / aspect).squareRoot())))
            }
            video = VideoSettings(codec: videoCodec, width: max(2, w & ~1), height: max(2, h & ~1))
        }
        var audio: AudioSettings?
        if self != .passthrough, let sampleRate, let channels {
            // AAC's rates up to 48 kHz (encode.aac's range); more is resampled to 48 kHz.
            audio = AudioSettings(sampleRate: min(sampleRate, 48_000), channels: min(channels, 2), bitRate: audioBitRate)
        }
        return (video, audio)
    }
}

extension AssetTrack {
    /// Whether `sink.mp4` takes the track as stored (H.264 video, AAC sound), so that a
    /// passthrough export copies it.
    var isCopyable: Bool {
        let caps = stream.storedFormat
        return switch mediaType {
        case .video: caps.hasPrefix("video/x-h264")
        case .audio: caps.hasPrefix("audio/mpeg") && (caps.contains("mpegversion=(int)4") || caps.contains("mpegversion=4"))
        }
    }
}
