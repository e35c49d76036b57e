import ArgumentParser
import Glibc
import GraphKit

/// `graphctl probe FILE`: what a media file holds, as `ffprobe -show_format -show_streams
/// -show_chapters` says it: its container, duration, streams, tags and chapters. The streams
/// come from GStreamer's discoverer (``MediaFileInfo``), durations of an MP4/MOV's tracks from
/// its index (``IndexedTrack``), the tags and chapters from the container library
/// (``MediaMetadata``). The file is
/// opened once, without blocking (a pipe with no writer does not hold it), and everything reads
/// that open file: the discoverer through `/proc/self/fd`, never the name again.
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a media file's container, duration, streams and tags (like ffprobe).",
        discussion: """
            JSON keys (--json): file, container (mp4, mov, mp3, flac, ogg, wav, aiff, matroska, or null), \
            duration (seconds), streams (each: index, kind, codec, and sampleRate and channels, or width, \
            height and frameRate, and color when the file states it: primaries, transfer, matrix, range \
            (tv or pc), bitDepth, chromaFormat, hdr (pq or hlg), masteringDisplay {red, green, blue, \
            whitePoint as [x, y], maxLuminance, minLuminance in cd/m2}, contentLightLevel {maxCLL, \
            maxFALL}, each only when stated, named as ffprobe names them; duration in seconds when the \
            index states it; dolbyVision {profile, level, compatibilityID, rpu, enhancementLayer, \
            baseLayer, compatibleWith (hlg, hdr10 or sdr)} when an MP4/MOV's sample entry has the \
            configuration), metadata (title, artist, \
            album, albumArtist, genre, comment, date, encoder, trackNumber, trackCount, discNumber, \
            discCount, location (ISO 6709), artwork {mimeType, size}, each only when the file has it; \
            items: every text tag as {key, value}), chapters (each: start and end in seconds, title; \
            as ffprobe -show_chapters: an end the file does not state is the next chapter's start, \
            the last's the file's end). \
            A HEIF photo (HEIC, AVIF) is described from its meta box instead: file, container (heif), \
            brand, compatibleBrands, images (each top-level image, the primary first: item, primary, \
            codec (hevc, av1), width, height (as stored, cropped to its clean aperture; codedWidth and \
            codedHeight when that differs), orientation (EXIF 1-8, from irot and imir), \
            bitDepth, alpha, color {primaries, transfer, matrix, range} or iccProfile {size}, grid \
            {tiles, rows, columns}, thumbnails and auxiliary (each: item, width, height; auxiliary's \
            type, its auxC URN), metadata (each: item, type, size, contentType), exif {make, model, \
            dateTimeOriginal, offsetTimeOriginal, gps {latitude, longitude, altitude} (degrees, south \
            and west negative; metres), contentIdentifier (a Live Photo's, from Apple's maker note)}, \
            gainMap {kind (apple or iso21496-1), item, width, height; apple's makerApple {33, 48}; \
            ISO's toneMapItem, baseHeadroom and alternateHeadroom (log2)}, each only when the file has it). \
            A Live Photo's still (a HEIC whose maker note has a content identifier) or movie (a MOV whose \
            com.apple.quicktime.content.identifier says one) adds livePhoto {contentIdentifier, pairedWith \
            (the other half beside it: the same name with .MOV/.mov or .HEIC/.heic), paired (whether its \
            identifier is the same), stillImageTime (seconds, from the movie's still-image-time track)}.
            """
    )

    @Argument(help: "The media file.")
    var file: String

    @Flag(help: "Print JSON for machines.")
    var json = false

    func run() throws {
        // Opened by the name's bytes (a name that is not UTF-8 too), and named as InputPath shows it.
        let input = InputPath(argument: file)
        let file = input.shown
        func unreadable(_ why: String) -> ExitCode {
            report(GraphError(.inputUnreadable, "cannot read \"\(file)\": \(why)"))
        }
        let fd = InputList.withCString(input.bytes) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        guard fd >= 0 else { throw unreadable(String(cString: strerror(errno)).lowercased()) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw unreadable(String(cString: strerror(errno)).lowercased()) }
        switch st.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw unreadable("it is a folder")
        default: throw unreadable("it is not a regular file")
        }
        let bytes = FileBytes(descriptor: fd)
        // A HEIF photo (HEIC, AVIF): its images, from its meta box (ProbePhoto.swift).
        if HEIFFile.isHEIF((try? bytes.read(at: 0, count: 64)) ?? []) {
            let photo: HEIFFile
            do throws(ContainerError) { photo = try HEIFFile.read(bytes) } catch { throw unreadable("a damaged HEIF file: \(error.reason)") }
            let described = Self.photo(photo, bytes: bytes)
            let live = Self.contentIdentifier(of: photo, bytes: bytes).map { Self.livePhoto(still: input.bytes, identifier: $0) }
            if json {
                guard case .object(let members) = described.json else { return }
                print(JSONValue.object([("file", .string(InputList.escaped(input.bytes)))] + members + (live.map { [("livePhoto", $0.json)] } ?? [])).description)
            } else {
                print("\(TerminalText.escaped(file)): \(described.text)", terminator: "")
                if let live { print("  \(live.text)") }
            }
            return
        }
        let container: MediaContainerFormat?
        let metadata: MediaMetadata
        do throws(ContainerError) {
            container = try MediaContainerFormat.detect(bytes)
            // Claims past what GraphKit reads (nesting, items, samples, frames) are refused
            // before anything reads the file's tags or GStreamer sees it.
            if let why = ContainerLimits.problem(in: bytes) { throw ContainerError(why) }
            metadata = try MediaMetadata.read(from: bytes)
        } catch {
            throw unreadable(error.reason)
        }
        let reopened = "/proc/self/fd/\(fd)"
        guard access(reopened, R_OK) == 0 else { throw unreadable("it cannot be reopened through /proc/self/fd (is /proc mounted?)") }
        let info: MediaFileInfo
        do {
            info = try MediaFileInfo(path: reopened)
        } catch {
            // Its messages name the file as the user did; a file in no format GraphKit knows
            // is said to be that, GStreamer's words the cause.
            var named = error
            if error.code == .inputUnreadable, container == nil {
                named = GraphError(.inputUnreadable, "cannot read \"\(file)\": it is not a media file (GStreamer does not recognise its format)",
                                   cause: error.message.replacing(reopened, with: file))
            } else {
                named.problems = error.problems.map { problem in
                    var p = problem
                    p.message = p.message.replacing(reopened, with: file)
                    if p.location == reopened { p.location = nil }
                    return p
                }
            }
            throw report(named)
        }
        let indexed = IndexedTrack.all(in: bytes)
        let streams = info.streams.map { stream in
            (stream, Self.indexedTrack(for: stream, in: indexed))
        }
        if let why = info.videoLeftOut { printError("warning: \"\(file)\" \(why)") }
        let live = LivePhotoMovie.read(bytes).map { Self.livePhoto(movie: input.bytes, $0) }
        if json {
            // JSON escapes control characters itself: the name as given (stray bytes as \xE9).
            var described = Self.json(file: InputList.escaped(input.bytes), container: container, info: info, streams: streams, metadata: metadata)
            if let live, case .object(let members) = described { described = .object(members + [("livePhoto", live.json)]) }
            print(described.description)
        } else {
            print(Self.text(file: file, container: container, info: info, streams: streams, metadata: metadata), terminator: "")
            if let live { print("  \(live.text)") }
        }
    }

    /// The index's track for a discovered stream: the same place among the tracks of its kind.
    static func indexedTrack(for stream: MediaFileInfo.Stream, in tracks: [IndexedTrack]) -> IndexedTrack? {
        let handler = switch stream.kind { case .audio: "soun"; case .video: "vide"; default: "" }
        return tracks.filter { $0.handler == handler }.dropFirst(stream.indexInKind).first
    }

    /// Seconds with millisecond precision.
    static func seconds(_ s: Double) -> JSONValue { .number((s * 1000).rounded() / 1000) }

    static func json(file: String, container: MediaContainerFormat?, info: MediaFileInfo,
                     streams: [(MediaFileInfo.Stream, IndexedTrack?)], metadata m: MediaMetadata) -> JSONValue {
        let streamValues: [JSONValue] = streams.map { s, track in
            var members: [(key: String, value: JSONValue)] = [
                ("index", .number(Double(s.number))), ("kind", .string(s.kind.rawValue)), ("codec", .string(s.codec)),
            ]
            if let v = s.sampleRate { members.append(("sampleRate", .number(Double(v)))) }
            if let v = s.channels { members.append(("channels", .number(Double(v)))) }
            if let v = s.width { members.append(("width", .number(Double(v)))) }
            if let v = s.height { members.append(("height", .number(Double(v)))) }
            if let v = s.frameRate { members.append(("frameRate", .number(v.framesPerSecond))) }
            if let color = s.color { members.append(("color", colorJSON(color))) }
            if let v = track?.seconds { members.append(("duration", seconds(v))) }
            if let dv = track?.dolbyVision { members.append(("dolbyVision", dolbyVisionJSON(dv))) }
            return .object(members)
        }
        var tags: [(key: String, value: JSONValue)] = []
        for (key, value) in textFields(m) { tags.append((key, .string(value))) }
        for (key, value) in [("trackNumber", m.trackNumber), ("trackCount", m.trackCount),
                             ("discNumber", m.discNumber), ("discCount", m.discCount)] {
            if let value { tags.append((key, .number(Double(value)))) }
        }
        if let art = m.artwork {
            tags.append(("artwork", ["mimeType": .string(art.mimeType), "size": .number(Double(art.data.count))]))
        }
        tags.append(("items", .array(m.items.map { ["key": .string($0.key), "value": .string($0.value)] })))
        let chapters: [JSONValue] = zip(m.chapters, m.chapterSpans(until: info.duration.seconds)).map { chapter, span in
            ["start": seconds(span.start), "end": seconds(span.end), "title": .string(chapter.title)]
        }
        return [
            "file": .string(file),
            "container": container.map { .string($0.rawValue) } ?? .null,
            "duration": seconds(info.duration.seconds),
            "streams": .array(streamValues),
            "metadata": .object(tags),
            "chapters": .array(chapters),
        ]
    }

    static func colorJSON(_ c: VideoColor) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        for (key, value) in [("primaries", c.primaries), ("transfer", c.transfer), ("matrix", c.matrix), ("range", c.range)] {
            if let value { members.append((key, .string(value))) }
        }
        if let v = c.bitDepth { members.append(("bitDepth", .number(Double(v)))) }
        if let v = c.chromaFormat { members.append(("chromaFormat", .string(v))) }
        if let v = c.hdr { members.append(("hdr", .string(v.rawValue))) }
        if let m = c.masteringDisplay {
            func point(_ p: VideoColor.Chromaticity) -> JSONValue { [.number((p.x * 100_000).rounded() / 100_000), .number((p.y * 100_000).rounded() / 100_000)] }
            members.append(("masteringDisplay", ["red": point(m.red), "green": point(m.green), "blue": point(m.blue), "whitePoint": point(m.whitePoint),
                                                 "maxLuminance": .number(m.maxLuminance), "minLuminance": .number((m.minLuminance * 10_000).rounded() / 10_000)]))
        }
        if let l = c.contentLightLevel { members.append(("contentLightLevel", ["maxCLL": .number(Double(l.maxCLL)), "maxFALL": .number(Double(l.maxFALL))])) }
        return .object(members)
    }

    /// The record's fields (ffprobe's `DOVI configuration record` side data: `dv_profile`,
    /// `dv_level`, `rpu_present_flag`…, under shorter names), and the base layer as players name it.
    static func dolbyVisionJSON(_ c: DolbyVisionConfiguration) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("profile", .number(Double(c.profile))), ("level", .number(Double(c.level))),
            ("compatibilityID", .number(Double(c.compatibilityID))),
            ("rpu", .bool(c.hasRPU)), ("enhancementLayer", .bool(c.hasEnhancementLayer)), ("baseLayer", .bool(c.hasBaseLayer)),
        ]
        if let base = c.baseLayer { members.append(("compatibleWith", .string(base))) }
        return .object(members)
    }

    /// "bt2020/arib-std-b67/bt2020nc tv, 10-bit 4:2:0, HDR (HLG)", with the mastering display's
    /// luminance and the content light level when stated.
    static func colorText(_ c: VideoColor) -> String {
        var parts: [String] = []
        if c.primaries != nil || c.transfer != nil || c.matrix != nil {
            parts.append([c.primaries, c.transfer, c.matrix].map { $0 ?? "?" }.joined(separator: "/") + (c.range.map { " \($0)" } ?? ""))
        }
        if c.bitDepth != nil || c.chromaFormat != nil {
            parts.append([c.bitDepth.map { "\($0)-bit" }, c.chromaFormat].compactMap { $0 }.joined(separator: " "))
        }
        if let hdr = c.hdr { parts.append("HDR (\(hdr == .pq ? "PQ" : "HLG"))") }
        if let m = c.masteringDisplay { parts.append("mastered \(fixed(m.minLuminance, 4))-\(fixed(m.maxLuminance, 0)) cd/m2") }
        if let l = c.contentLightLevel { parts.append("MaxCLL \(l.maxCLL), MaxFALL \(l.maxFALL)") }
        return parts.joined(separator: ", ")
    }

    /// The common text fields that are set, by their JSON keys.
    static func textFields(_ m: MediaMetadata) -> [(String, String)] {
        [("title", m.title), ("artist", m.artist), ("album", m.album), ("albumArtist", m.albumArtist),
         ("genre", m.genre), ("comment", m.comment), ("date", m.date), ("encoder", m.encoder),
         ("location", m.location)].compactMap { key, value in value.map { (key, $0) } }
    }

    /// The text output: every string from the file or the command line (the name, codecs, tag
    /// keys and values, chapter titles) with its control characters escaped (``TerminalText``):
    /// a tag holding ESC or BEL must not reach the terminal as one, nor a newline forge a line.
    static func text(file: String, container: MediaContainerFormat?, info: MediaFileInfo,
                     streams: [(MediaFileInfo.Stream, IndexedTrack?)], metadata m: MediaMetadata) -> String {
        let e = TerminalText.escaped
        var out = "\(e(file)): \(container?.rawValue ?? "unknown container"), \(fixed(info.duration.seconds, 3)) s\n"
        for (s, track) in streams {
            var parts = [s.kind.rawValue, e(s.codec)]
            if let rate = s.sampleRate { parts.append("\(rate) Hz") }
            if let channels = s.channels { parts.append(channels == 1 ? "1 channel" : "\(channels) channels") }
            if let w = s.width, let h = s.height { parts.append("\(w)x\(h)") }
            if let rate = s.frameRate { parts.append(rate.description) }
            if let seconds = track?.seconds { parts.append("\(fixed(seconds, 3)) s") }
            if let color = s.color { parts.append(colorText(color)) }
            if let dv = track?.dolbyVision { parts.append(dv.description) }
            out += "  stream \(s.number): \(parts.joined(separator: ", "))\n"
        }
        var tags = textFields(m)
        if let n = m.trackNumber { tags.append(("track", m.trackCount.map { "\(n)/\($0)" } ?? "\(n)")) }
        if let n = m.discNumber { tags.append(("disc", m.discCount.map { "\(n)/\($0)" } ?? "\(n)")) }
        if let art = m.artwork { tags.append(("artwork", "\(art.mimeType), \(art.data.count) bytes")) }
        for (key, value) in tags { out += "  \(key): \(e(value))\n" }
        for (n, (chapter, span)) in zip(m.chapters, m.chapterSpans(until: info.duration.seconds)).enumerated() {
            out += "  chapter \(n + 1): \(fixed(span.start, 3)) s to \(fixed(span.end, 3)) s: \(e(chapter.title))\n"
        }
        return out
    }
}
