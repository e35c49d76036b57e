import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// A media file and what it holds, like `AVURLAsset`: its duration and tracks, read when it is
/// made (without decoding), so a missing, unreadable or damaged file throws here.
public final class Asset: Sendable {
    public let path: String
    public let duration: MediaTime
    /// Every audio and video track, in the file's order.
    public let tracks: [AssetTrack]
    /// The file's tags (`AVAsset.metadata`): title, artist, album, date, location, cover art,
    /// and every text item as the file names it, from MP4/M4A/MOV (`ilst`, QuickTime `mdta`
    /// keys, `udta`), MP3 (ID3v2), FLAC and Ogg (Vorbis comments); empty for other files.
    public let metadata: MediaMetadata
    /// The container, as its first bytes say (nil when GraphKit's container library does not
    /// know it, though GStreamer reads it).
    public let containerFormat: MediaContainerFormat?
    /// The file's chapters, in order, each with when it plays and its title
    /// (`AVAsset.chapterMetadataGroups`): an MP4/M4A/MOV's QuickTime chapter track (as
    /// AVFoundation and ffmpeg write it) or Nero chapter list (`chpl`, as `sink.mp4` writes it),
    /// an MP3's ID3 `CHAP` frames (in its `CTOC` order), a FLAC or Ogg file's `CHAPTERxxx` Vorbis
    /// comments; empty for other files. A chapter lasts until the file says it ends, else until
    /// the next one starts, the last until the end of the file (as ffprobe's `-show_chapters`).
    public let chapters: [Chapter]
    /// The language of the chapter titles, ISO 639-2/T (`eng`), when the file states one (a
    /// QuickTime chapter track's); nil when undetermined.
    public let chapterLanguage: String?
    public struct Chapter: Sendable, Equatable {
        public var timeRange: MediaTimeRange
        public var title: String
        public var start: MediaTime { timeRange.start }
        public init(timeRange: MediaTimeRange, title: String) {
            self.timeRange = timeRange
            self.title = title
        }
    }
    /// What read the tracks: the file's own index, or GStreamer's discoverer.
    let prober: Prober
    enum Prober { case index, discoverer }

    /// Reads the file's tracks. Throws `inputUnreadable` (66) for a missing, unreadable or
    /// damaged file, and `missingPlugin` (69) when nothing installed reads its format.
    ///
    /// An MP4, MOV or M4A file of H.264 and AAC tracks is read from its own index (the `moov`
    /// box: a few reads, no pipeline); any other file, and one whose index this does not read
    /// as GStreamer would (fragmented, cut short, damaged, other codecs), by GStreamer's
    /// discoverer, which says what is wrong with a file it cannot read.
    public init(path: String) throws(GraphError) {
        self.path = path
        let bytes = FileBytes(path: path)
        let read = bytes.flatMap(Self.index)
        let index = read?.movie
        let streams: [AssetTrack.Stream]
        if let bytes, let read, read.whole, let facts = MP4StreamFacts(movie: read.movie, fileSize: bytes.count) {
            prober = .index
            duration = MediaTime(nanoseconds: facts.durationNanoseconds)
            var perKind: [FourCC: Int] = [:]
            streams = facts.streams.enumerated().map { i, s in
                let index = perKind[s.handler, default: 0]
                perKind[s.handler] = index + 1
                return AssetTrack.Stream(number: i + 1, indexInKind: index, kind: s.handler == "vide" ? .video : .audio, codec: s.codec,
                                         sampleRate: s.sampleRate, channels: s.channels, width: s.width, height: s.height,
                                         frameRate: s.frameRate.map { FrameRate($0.numerator, $0.denominator) }, storedFormat: s.caps,
                                         color: s.colour.map(VideoColor.init))
            }
        } else {
            let info = try MediaFileInfo(path: path)
            prober = .discoverer
            duration = info.duration
            streams = info.streams
        }
        // Tags are a file's extras: damage in them (or a read that fails now) leaves them out,
        // as a player would, rather than refuse a file GStreamer reads.
        containerFormat = bytes.flatMap { try? MediaContainerFormat.detect($0) }
        if let index, let bytes {
            // An MP4's tags are in the index just read: not read from the file a second time.
            var tags = MediaMetadata()
            tags.add(movie: index, in: bytes)
            metadata = tags
        } else {
            metadata = bytes.flatMap { try? MediaMetadata.read(from: $0) } ?? MediaMetadata()
        }
        let duration = self.duration
        chapters = zip(metadata.chapters, metadata.chapterSpans(until: duration.seconds)).map { chapter, span in
            func time(_ seconds: Double) -> MediaTime { MediaTime(seconds: seconds, preferredTimescale: 10_000_000) }
            return Chapter(timeRange: MediaTimeRange(start: time(span.start), end: time(span.end)), title: chapter.title)
        }
        chapterLanguage = metadata.chapterLanguage
        tracks = streams.compactMap { stream -> AssetTrack? in
            let type: MediaType
            switch stream.kind {
            case .audio: type = .audio
            case .video: type = .video
            case .subtitles, .other: return nil
            }
            let stored = index?.tracks(handler: type == .audio ? "soun" : "vide").dropFirst(stream.indexInKind).first?.track
            return AssetTrack(assetPath: path, trackID: stream.number, indexInType: stream.indexInKind, mediaType: type,
                              stream: stream, timeRange: MediaTimeRange(start: .zero, duration: duration), stored: stored)
        }
    }

    /// The index of an MP4/M4A/MOV file (what the stream facts above do not say: display
    /// matrices, sample sizes); nil for other files and for an index that cannot be read.
    /// `whole`: the file is one whole movie, unfragmented (``MP4File/isWholeMovie``).
    private static func index(_ bytes: FileBytes) -> (movie: MP4Movie, whole: Bool)? {
        guard let file = try? MP4File(bytes), let movie = try? file.movie() else { return nil }
        return (movie, file.isWholeMovie)
    }

    /// The tracks of one media type, in the file's order.
    public func tracks(withMediaType mediaType: MediaType) -> [AssetTrack] {
        tracks.filter { $0.mediaType == mediaType }
    }
}

/// One track of an ``Asset``, like `AVAssetTrack`.
public struct AssetTrack: Sendable, CustomStringConvertible {
    /// The file this track is in.
    public let assetPath: String
    /// The track's number in the file, from 1.
    public let trackID: Int
    /// Its place among the file's tracks of its media type, from 0.
    public let indexInType: Int
    public let mediaType: MediaType
    @_spi(Engine) public let stream: Stream
    /// When the track plays: from 0 for the file's duration.
    public let timeRange: MediaTimeRange
    /// How the track is meant to be shown (`AVAssetTrack.preferredTransform`): an MP4 or MOV
    /// video track's display matrix (a phone's portrait recording: a quarter turn); the
    /// identity for sound and for files that state none.
    public let preferredTransform: DisplayMatrix
    /// The bits a second its media takes, all samples over their duration
    /// (`AVAssetTrack.estimatedDataRate`), as an MP4 or MOV file's index gives it; nil for
    /// other files.
    public let estimatedDataRate: Double?
    /// The track's own clock, ticks a second (`AVAssetTrack.naturalTimeScale`), from an MP4 or
    /// MOV file's index; nil for other files.
    public let naturalTimeScale: Int?
    /// The bytes of all its samples, as stored (`AVAssetTrack.totalSampleDataLength`), from an
    /// MP4 or MOV file's index; nil for other files.
    public let totalSampleDataLength: Int64?
    /// The shortest sample duration (`AVAssetTrack.minFrameDuration`): a video frame's at its
    /// highest rate; from an MP4 or MOV file's index, nil for other files.
    public let minFrameDuration: MediaTime?
    /// The track's language, ISO 639-2/T (`eng`), as an MP4 or MOV file's index states it; nil
    /// when undetermined or for other files.
    public let languageCode: String?

    init(assetPath: String, trackID: Int, indexInType: Int, mediaType: MediaType, stream: Stream,
         timeRange: MediaTimeRange, stored: MP4Track?) {
        self.assetPath = assetPath
        self.trackID = trackID
        self.indexInType = indexInType
        self.mediaType = mediaType
        self.stream = stream
        self.timeRange = timeRange
        preferredTransform = mediaType == .video ? stored?.displayMatrix ?? .identity : .identity
        if let stored, let bytes = stored.sampleBytes, stored.mediaTimescale > 0, stored.sampleTableDuration > 0,
           stored.sampleTableDuration != .max {
            estimatedDataRate = Double(bytes) * 8 / (Double(stored.sampleTableDuration) / Double(stored.mediaTimescale))
        } else {
            estimatedDataRate = nil
        }
        let timescale = stored.map(\.mediaTimescale) ?? 0
        naturalTimeScale = timescale > 0 ? timescale : nil
        totalSampleDataLength = stored?.sampleBytes.flatMap { Int64(exactly: $0) }
        minFrameDuration = timescale > 0 && timescale <= Int(Int32.max)
            ? stored?.shortestSampleDelta.map { MediaTime(value: Int64($0), timescale: Int32(timescale)) } : nil
        languageCode = stored?.languageCode
    }

    /// What the track decodes to, as far as the file says: PCM at its rate and channel count, or
    /// BGRA frames at its size and rate. The PCM is given as 16-bit, what
    /// `.linearPCM(sampleFormat: .s16le)` asks a reader for; a reader output with nil settings
    /// gives the decoder's own sample format instead (16-bit or 32-bit float: float for AAC),
    /// which the file does not say; ask for the format you want.
    public var format: MediaFormat? {
        switch mediaType {
        case .audio:
            guard let rate = stream.sampleRate, let channels = stream.channels else { return nil }
            return .pcm(.init(sampleRate: rate, channels: channels, sampleFormat: .s16le))
        case .video:
            guard let w = stream.width, let h = stream.height else { return nil }
            return .rawVideo(.init(pixelFormat: .bgra, width: w, height: h, frameRate: stream.frameRate ?? FrameRate(0, 1)))
        }
    }

    /// The codec as stored, in words (`MPEG-4 AAC`, `H.264 (High Profile)`).
    public var codec: String { stream.codec }

    public var description: String { "track \(trackID) (\(mediaType.rawValue), \(codec))" }
}

extension AssetTrack {
    /// What the track's stream is, as a prober reports it (``MediaFileInfo/Stream``'s facts),
    /// from the file's index or from GStreamer's discoverer.
    @_spi(Engine) public typealias Stream = MediaFileInfo.Stream
}
