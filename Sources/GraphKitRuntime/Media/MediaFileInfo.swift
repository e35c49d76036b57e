import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers

/// What a media file holds, read without playing it (GStreamer's discoverer): its duration and
/// streams. ``Asset`` is built on it; `ffprobe -show_streams` is its command-line counterpart.
public struct MediaFileInfo: Sendable {
    public enum Kind: String, Sendable { case audio, video, subtitles, other }

    public struct Stream: Sendable {
        /// Its place among the file's streams, from 1.
        public var number: Int
        /// Its place among the file's streams of its kind, from 0 (decode's `track` for audio).
        public var indexInKind: Int
        public var kind: Kind
        /// The codec, in words (`MPEG-4 AAC`, `H.264 (High Profile)`).
        public var codec: String
        /// The stream as it decodes: rate and channels for audio, size and rate for video.
        public var sampleRate: Int?
        public var channels: Int?
        public var width: Int?
        public var height: Int?
        public var frameRate: FrameRate?
        /// The stream as stored (GStreamer caps, with the codec configuration).
        public var storedFormat: String
        /// A video stream's colour as the file states it; nil when it states none.
        public var color: VideoColor?

        public init(number: Int, indexInKind: Int, kind: Kind, codec: String, sampleRate: Int?, channels: Int?,
                    width: Int?, height: Int?, frameRate: FrameRate?, storedFormat: String, color: VideoColor? = nil) {
            (self.number, self.indexInKind, self.kind, self.codec) = (number, indexInKind, kind, codec)
            (self.sampleRate, self.channels, self.width, self.height) = (sampleRate, channels, width, height)
            (self.frameRate, self.storedFormat, self.color) = (frameRate, storedFormat, color)
        }
    }

    public var path: String
    public var duration: MediaTime
    public var streams: [Stream]
    /// Why the file's video is not among ``streams`` though its index holds some, as the end of
    /// a sentence about the file: every video track lasts under a fifth of the movie by its own
    /// clock, which GStreamer's demuxer leaves out as a preview (a clock rewritten to 2³²−1 Hz).
    /// Nil when a video stream is read, or the file holds none.
    public var videoLeftOut: String?

    /// Reads `path`. Throws `inputUnreadable` (66) for a missing, unreadable or damaged file,
    /// and `missingPlugin` (69) when no installed plugin reads its format, naming the file.
    public init(path: String, timeout seconds: Double = 20) throws(GraphError) {
        GStreamer.initialize()
        self.path = path
        var isDirectory = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw GraphError(.inputUnreadable, at: path, "cannot read \"\(path)\": no such file")
        }
        guard !isDirectory else { throw GraphError(.inputUnreadable, at: path, "cannot read \"\(path)\": it is a folder") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw GraphError(.inputUnreadable, at: path, "cannot read \"\(path)\": permission denied")
        }
        // An MP4/MOV's claims past what GraphKit reads (boxes nested deeper than qtdemux's stack
        // holds, sample tables larger than the file, a picture larger than GraphKit decodes):
        // refused before the discoverer's demuxer or decoder sees the file (probe, thumbnails
        // and an asset read through here).
        if let bytes = FileBytes(path: path), let why = ContainerLimits.problem(in: bytes) {
            throw GraphError(.inputUnreadable, at: path, "cannot read \"\(path)\": \(why)")
        }
        guard let uri = gst_filename_to_uri(path, nil) else {
            throw GraphError(.inputUnreadable, at: path, "cannot read \"\(path)\": not a path GStreamer can open")
        }
        defer { g_free(uri) }
        var durationNs: guint64 = 0
        var found = [GkStreamInfo](repeating: GkStreamInfo(), count: 64)
        var message = [CChar](repeating: 0, count: 512)
        let count = gk_discover(uri, guint64(seconds * 1e9), &durationNs, &found, Int32(found.count), &message, message.count)
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if count == -2 {
            throw GraphError(.missingPlugin, at: path, "cannot read \"\(path)\": \(text) is not installed")
        }
        if count < 0 {
            var why = text
            if let diagnosis = ContainerDiagnosis.diagnose(path: path) { why = diagnosis.problem }
            throw GraphError(.inputUnreadable, at: path, "cannot read \"\(path)\": \(why)")
        }
        duration = durationNs == GstClockTime.max ? .zero : MediaTime(nanoseconds: UInt64(durationNs))
        var perKind: [Kind: Int] = [:]
        streams = found.prefix(Int(count)).enumerated().map { i, s in
            let kind: Kind = switch s.kind { case 1: .audio; case 2: .video; case 3: .subtitles; default: .other }
            let index = perKind[kind, default: 0]
            perKind[kind] = index + 1
            var s = s
            func text<T>(_ field: inout T) -> String { withUnsafeBytes(of: &field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } }
            let codecText = text(&s.codec), capsText = text(&s.caps)
            let color = kind == .video ? VideoColor(colorimetry: text(&s.colorimetry), chromaFormat: text(&s.chroma), bitDepth: Int(s.bit_depth),
                                                    masteringDisplay: text(&s.mastering), contentLightLevel: text(&s.light)) : nil
            return Stream(number: i + 1, indexInKind: index, kind: kind, codec: codecText,
                          sampleRate: kind == .audio && s.rate > 0 ? Int(s.rate) : nil,
                          channels: kind == .audio && s.channels > 0 ? Int(s.channels) : nil,
                          width: kind == .video ? Int(s.width) : nil, height: kind == .video ? Int(s.height) : nil,
                          frameRate: kind == .video && s.fps_n > 0 && s.fps_d > 0 ? FrameRate(Int(s.fps_n), Int(s.fps_d)) : nil,
                          storedFormat: capsText, color: color.flatMap { $0.isEmpty ? nil : $0 })
        }
        if !streams.contains(where: { $0.kind == .video }) {
            videoLeftOut = FileBytes(path: path).flatMap { ContainerDiagnosis.videoTakenForAPreview($0) }?.problem
        }
    }
}
