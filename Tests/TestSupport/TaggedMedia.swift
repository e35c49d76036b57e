import Foundation
import GraphKitTesting

/// Sources with every kind of metadata a file carries (the tags, a cover, chapters, the place,
/// each track's language, the creation time), made by ffmpeg, and what ffprobe reads back of a
/// written file: for the tests that a transcode, a remux, a join or an export keeps them.
public enum TaggedMedia {
    public static let title = "Titre – été"
    public static let artist = "The Artist"
    public static let album = "The Album"
    public static let date = "2024-05-01"
    public static let location = "+48.8583+002.2945/"
    /// As ffprobe shows `creation_time`.
    public static let creationTime = "2024-05-01T10:00:00.000000Z"
    public static let chapters = [(start: 0.0, title: "Intro"), (start: 1.5, title: "Part two")]

    /// The common tags ffmpeg writes into every one of these.
    static func tagArguments() -> [String] {
        ["-metadata", "title=\(title)", "-metadata", "artist=\(artist)", "-metadata", "album=\(album)",
         "-metadata", "date=\(date)", "-metadata", "creation_time=2024-05-01T10:00:00Z"]
    }

    /// An ffmetadata file of ``chapters``, the last ending at 3 s.
    static func chapterFile(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("chapters.txt").path
        var text = ";FFMETADATA1\n"
        for (i, c) in chapters.enumerated() {
            let end = i + 1 < chapters.count ? chapters[i + 1].start : 3
            text += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(Int(c.start * 1000))\nEND=\(Int(end * 1000))\ntitle=\(c.title)\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A 64x64 JPEG cover.
    public static func cover(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("cover.jpg").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=64x64", "-frames:v", "1", path])
        return path
    }

    /// A 3 s M4A (AAC, language `fra`) with the tags, a cover (`covr`) and the chapters.
    public static func m4a(in folder: URL, name: String = "tagged.m4a") throws -> String {
        let path = folder.appendingPathComponent(name).path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3",
                                         "-i", try cover(in: folder), "-i", try chapterFile(in: folder),
                                         "-map", "0:a", "-map", "1:v", "-map_chapters", "2", "-c:a", "aac", "-b:a", "96k",
                                         "-c:v", "mjpeg", "-disposition:v", "attached_pic", "-metadata:s:a:0", "language=fra"]
                             + tagArguments() + [path])
        return path
    }

    /// A 3 s MP4 or MOV (by `name`'s extension) of H.264 (language `deu`, 25 fps, a key frame a
    /// second) and AAC (language `fra`) with the tags, the place and the chapters.
    public static func movie(in folder: URL, name: String = "tagged.mp4") throws -> String {
        let path = folder.appendingPathComponent(name).path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3",
                                         "-i", try chapterFile(in: folder), "-map", "0:v", "-map", "1:a", "-map_chapters", "2",
                                         "-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac",
                                         "-metadata:s:v:0", "language=deu", "-metadata:s:a:0", "language=fra",
                                         "-metadata", "location=\(location)"]
                             + tagArguments() + [path])
        return path
    }

    /// What ffprobe reads of a file's metadata.
    public struct Probe {
        /// The file's tags (`format_tags`), lower-cased keys.
        public var tags: [String: String]
        /// Each stream's type, its language and creation time, and whether it is a cover.
        public var streams: [(type: String, language: String?, creationTime: String?, cover: Bool)]
        public var chapters: [(start: Double, title: String)]

        public func language(of type: String) -> String? { streams.first { $0.type == type && !$0.cover }?.language }
        public var hasCover: Bool { streams.contains { $0.cover } }
    }

    /// ffprobe's reading of `path`.
    public static func probe(_ path: String) throws -> Probe {
        let json = try TestMedia.runTool("ffprobe", ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", "-show_chapters", path])
        let root = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
        let format = root["format"] as? [String: Any] ?? [:]
        var tags: [String: String] = [:]
        for (k, v) in format["tags"] as? [String: Any] ?? [:] { tags[k.lowercased()] = v as? String }
        let streams = (root["streams"] as? [[String: Any]] ?? []).map { s in
            let t = s["tags"] as? [String: Any] ?? [:]
            let cover = (s["disposition"] as? [String: Any])?["attached_pic"] as? Int == 1
            return (type: s["codec_type"] as? String ?? "", language: t["language"] as? String, creationTime: t["creation_time"] as? String, cover: cover)
        }
        let chapters = (root["chapters"] as? [[String: Any]] ?? []).map { c in
            (start: Double(c["start_time"] as? String ?? "") ?? -1, title: (c["tags"] as? [String: Any])?["title"] as? String ?? "")
        }
        return Probe(tags: tags, streams: streams, chapters: chapters)
    }
}
