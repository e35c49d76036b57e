/// A Live Photo's movie as its MOV says: the content identifier it shares with its still
/// (QuickTime's `mdta` key `com.apple.quicktime.content.identifier`, which the still's Apple maker
/// note repeats as tag 17), and the time of the still within it (the sample of the timed-metadata
/// track whose `mebx` keys include `com.apple.quicktime.still-image-time`).
public struct LivePhotoMovie: Sendable, Equatable {
    public static let contentIdentifierKey = "com.apple.quicktime.content.identifier"
    public static let stillImageTimeKey = "com.apple.quicktime.still-image-time"

    public let contentIdentifier: String
    /// Seconds from the movie's start; nil when the movie has no such track.
    public let stillImageTime: Double?

    /// The movie `source` holds, when it is an MP4 or MOV with a content identifier; nil for
    /// anything else (including an index that cannot be read).
    public static func read(_ source: some ByteSource) -> LivePhotoMovie? {
        guard let tags = try? MediaMetadata.read(from: source),
              let id = tags.items.first(where: { $0.key == contentIdentifierKey })?.value, !id.isEmpty,
              let file = try? MP4File(source), let movie = try? file.movie() else { return nil }
        let still = movie.tracks(handler: "meta").lazy.compactMap { stillTime(of: $0.track, movieScale: movie.timescale) }.first
        return LivePhotoMovie(contentIdentifier: id, stillImageTime: still)
    }

    /// The keys a timed-metadata track's `mebx` sample entry declares: after the sample entry's 8
    /// bytes, a `keys` box of boxes each named by its local key ID and holding a `keyd` box (a
    /// namespace, then the key). Read as plain boxes: this `keys` has no version and count, unlike
    /// the movie's `meta/keys`.
    static func keys(of track: MP4Track) -> [String] {
        guard let entry = track.box.find(["mdia", "minf", "stbl", "stsd"])?.children.first, entry.type == "mebx" else { return [] }
        let body = entry.body
        guard body.count > 8, let keys = boxes(body[8...]).first(where: { $0.type == "keys" }) else { return [] }
        return boxes(keys.body).prefix(256).compactMap { local in
            guard let keyd = boxes(local.body).first(where: { $0.type == "keyd" }), keyd.body.count > 4 else { return nil }
            return String(decoding: keyd.body.dropFirst(4), as: UTF8.self)
        }
    }

    /// The boxes `bytes` holds one after another (``BoxWalker``), up to the first that does not
    /// fit, at most 1,024.
    static func boxes(_ bytes: ArraySlice<UInt8>) -> [(type: FourCC, body: ArraySlice<UInt8>)] {
        var walker = BoxWalker(MemoryBytes(bytes))
        var out: [(type: FourCC, body: ArraySlice<UInt8>)] = []
        while out.count < 1024, case .box(let box)? = try? walker.next(), box.end <= UInt64(bytes.count) {
            out.append((box.type, bytes[(bytes.startIndex + Int(box.bodyOffset))..<(bytes.startIndex + Int(box.end))]))
        }
        return out
    }

    /// When a still-image-time track's first sample shows, in seconds: its composition offset,
    /// placed by the track's edits (the empty ones first, then the first that shows media).
    static func stillTime(of track: MP4Track, movieScale: Int) -> Double? {
        guard keys(of: track).contains(stillImageTimeKey), track.mediaTimescale > 0, movieScale > 0 else { return nil }
        var offset = 0.0
        if let ctts = track.box.find(["mdia", "minf", "stbl", "ctts"])?.body, ctts.count >= 16 {
            let raw = UInt32(ctts[12]) << 24 | UInt32(ctts[13]) << 16 | UInt32(ctts[14]) << 8 | UInt32(ctts[15])
            offset = Double(ctts[0] == 1 ? Int64(Int32(bitPattern: raw)) : Int64(raw))
        }
        var delay = 0.0
        var mediaStart = 0.0
        for edit in track.edits ?? [] {
            if edit.mediaTime < 0 { delay += Double(edit.duration) / Double(movieScale); continue }
            mediaStart = Double(edit.mediaTime)
            break
        }
        let seconds = delay + (offset - mediaStart) / Double(track.mediaTimescale)
        // A time no movie has (past a day) is a damaged or hostile index, not a still's.
        return seconds.isFinite && seconds <= 86_400 ? max(0, seconds) : nil
    }
}
