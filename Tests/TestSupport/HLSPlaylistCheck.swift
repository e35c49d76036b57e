import Foundation
import GraphKitTesting

/// A media playlist checked against RFC 8216's rules for what GraphKit writes: every problem
/// found, as a sentence (none: the playlist keeps them).
public struct HLSPlaylistCheck {
    public struct Segment: Equatable {
        public var uri: String
        public var duration: Double
    }

    public var targetDuration: Int?
    public var version: Int?
    public var mediaSequence = 0
    public var playlistType: String?
    public var map: String?
    public var ended = false
    public var segments: [Segment] = []
    public var problems: [String] = []

    /// Reads `playlist` (in `folder`, where its URIs must name files).
    public init(path playlist: String) throws {
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        let folder = URL(fileURLWithPath: playlist).deletingLastPathComponent().path
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() } else { problems.append("the playlist does not end with a line break") }
        guard lines.first == "#EXTM3U" else {
            problems.append("the first line is not #EXTM3U (4.3.1.1)")
            return
        }
        var pending: Double?
        var counts: [String: Int] = [:]
        for line in lines.dropFirst() {
            func value(_ tag: String) -> String? { line.hasPrefix(tag + ":") ? String(line.dropFirst(tag.count + 1)) : nil }
            if line.hasPrefix("#EXT") { counts[String(line.prefix { $0 != ":" }), default: 0] += 1 }
            if let v = value("#EXT-X-VERSION") {
                version = Int(v)
            } else if let v = value("#EXT-X-TARGETDURATION") {
                targetDuration = Int(v)
                if targetDuration == nil { problems.append("EXT-X-TARGETDURATION \(v) is not a decimal integer (4.3.3.1)") }
            } else if let v = value("#EXT-X-MEDIA-SEQUENCE") {
                if !segments.isEmpty { problems.append("EXT-X-MEDIA-SEQUENCE comes after the first segment (4.3.3.2)") }
                mediaSequence = Int(v) ?? -1
            } else if let v = value("#EXT-X-PLAYLIST-TYPE") {
                playlistType = v
            } else if let v = value("#EXT-X-MAP") {
                if !segments.isEmpty, map == nil { problems.append("EXT-X-MAP comes after a segment that needs it (4.3.2.5)") }
                map = v.hasPrefix("URI=\"") && v.hasSuffix("\"") ? String(v.dropFirst(5).dropLast()) : nil
                if map == nil { problems.append("EXT-X-MAP has no quoted URI (4.3.2.5)") }
            } else if let v = value("#EXTINF") {
                guard v.hasSuffix(","), let d = Double(v.dropLast()), d >= 0 else {
                    problems.append("EXTINF \(v) is not a duration followed by a comma (4.3.2.1)")
                    continue
                }
                if pending != nil { problems.append("two EXTINF tags without a URI between them") }
                pending = d
            } else if line == "#EXT-X-ENDLIST" {
                ended = true
            } else if line.hasPrefix("#") {
                continue
            } else if line.isEmpty {
                problems.append("an empty line")
            } else {
                guard let d = pending else {
                    problems.append("the URI \(line) has no EXTINF before it (4.3.2.1)")
                    continue
                }
                segments.append(Segment(uri: line, duration: d))
                pending = nil
                if ended { problems.append("a segment after EXT-X-ENDLIST") }
            }
        }
        for (tag, n) in counts where n > 1 && ["#EXT-X-VERSION", "#EXT-X-TARGETDURATION", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-PLAYLIST-TYPE", "#EXT-X-ENDLIST"].contains(tag) {
            problems.append("\(tag) appears \(n) times (4.3.3)")
        }
        if pending != nil { problems.append("the last EXTINF has no URI") }
        guard let target = targetDuration else {
            problems.append("no EXT-X-TARGETDURATION (4.3.3.1)")
            return
        }
        for s in segments where Int(s.duration.rounded()) > target {
            problems.append("\(s.uri) lasts \(s.duration) s, which rounds past the target duration \(target) (4.3.3.1)")
        }
        if map == nil, segments.contains(where: { !$0.uri.hasSuffix(".ts") }) {
            problems.append("no EXT-X-MAP: fragmented-MP4 segments need their initialization segment (3.3)")
        }
        if map != nil, segments.contains(where: { $0.uri.hasSuffix(".ts") }) { problems.append("EXT-X-MAP before MPEG-TS segments, which carry their own tables") }
        if (version ?? 1) < 6, map != nil { problems.append("EXT-X-MAP outside an I-frame playlist needs version 6 or more (7)") }
        if playlistType == "VOD", !ended { problems.append("a VOD playlist without EXT-X-ENDLIST (4.3.3.5)") }
        for uri in segments.map(\.uri) + [map].compactMap({ $0 }) where !FileManager.default.fileExists(atPath: folder + "/" + uri) {
            problems.append("\(uri) is listed and missing")
        }
    }

    /// Whether each media segment, after the initialization segment, starts with a video key
    /// frame (ffprobe's first video packet of the two files joined has the K flag).
    public static func segmentsStartOnKeyFrames(_ playlist: String, _ check: HLSPlaylistCheck) throws -> [String] {
        let folder = URL(fileURLWithPath: playlist).deletingLastPathComponent()
        guard let map = check.map else { return ["no initialization segment"] }
        let initBytes = try Data(contentsOf: folder.appendingPathComponent(map))
        var notKey: [String] = []
        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for s in check.segments {
            let joined = scratch.appendingPathComponent("joined.mp4")
            try (initBytes + Data(contentsOf: folder.appendingPathComponent(s.uri))).write(to: joined)
            let first = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-read_intervals", "%+#1",
                                                          "-show_entries", "packet=flags", "-of", "csv=p=0", joined.path])
                .split(whereSeparator: \.isNewline).first
            if let first, !first.hasPrefix("K") { notKey.append(s.uri) }
        }
        return notKey
    }
}
