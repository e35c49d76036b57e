import Foundation
import GraphKit
import GraphKitTesting

/// A media playlist checked against RFC 8216's rules for what GraphKit writes: every problem
/// found, as a sentence (none: the playlist keeps them). Its fMP4 segments are read too (by the
/// container library): each must continue its predecessor's media time unless a discontinuity
/// is marked (4.3.2.3). ``reloaded(from:)`` checks a live or event playlist against the one read
/// before it (6.2.1, 6.2.2); ``HLSMultivariantCheck`` checks a multivariant playlist.
public struct HLSPlaylistCheck {
    public struct Segment: Equatable {
        public var uri: String
        public var duration: Double
        /// Whether an EXT-X-DISCONTINUITY comes before it.
        public var discontinuity = false
    }

    public var targetDuration: Int?
    public var version: Int?
    public var mediaSequence = 0
    public var discontinuitySequence = 0
    public var playlistType: String?
    public var map: String?
    public var ended = false
    public var segments: [Segment] = []
    public var problems: [String] = []
    /// The folder its URIs are relative to.
    public var folder = ""

    /// Reads `playlist` (in `folder`, where its URIs must name files).
    public init(path playlist: String) throws {
        let text = try String(contentsOfFile: playlist, encoding: .utf8)
        self.init(text: text, folder: URL(fileURLWithPath: playlist).deletingLastPathComponent().path)
    }

    /// Reads a playlist's `text`, its URIs relative to `folder`.
    public init(text: String, folder: String) {
        self.folder = folder
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() } else { problems.append("the playlist does not end with a line break") }
        guard lines.first == "#EXTM3U" else {
            problems.append("the first line is not #EXTM3U (4.3.1.1)")
            return
        }
        var pending: Double?
        var discontinuity = false
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
            } else if let v = value("#EXT-X-DISCONTINUITY-SEQUENCE") {
                if !segments.isEmpty || pending != nil { problems.append("EXT-X-DISCONTINUITY-SEQUENCE comes after the first segment (4.3.3.3)") }
                discontinuitySequence = Int(v) ?? -1
                if Int(v) == nil { problems.append("EXT-X-DISCONTINUITY-SEQUENCE \(v) is not a decimal integer (4.3.3.3)") }
            } else if line == "#EXT-X-DISCONTINUITY" {
                discontinuity = true
            } else if let v = value("#EXT-X-PLAYLIST-TYPE") {
                playlistType = v
                if v != "VOD" && v != "EVENT" { problems.append("EXT-X-PLAYLIST-TYPE \(v) is neither EVENT nor VOD (4.3.3.5)") }
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
                segments.append(Segment(uri: line, duration: d, discontinuity: discontinuity))
                pending = nil
                discontinuity = false
                if ended { problems.append("a segment after EXT-X-ENDLIST") }
            }
        }
        for (tag, n) in counts where n > 1 && ["#EXT-X-VERSION", "#EXT-X-TARGETDURATION", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-DISCONTINUITY-SEQUENCE",
                                                "#EXT-X-PLAYLIST-TYPE", "#EXT-X-ENDLIST"].contains(tag) {
            problems.append("\(tag) appears \(n) times (4.3.3)")
        }
        if pending != nil { problems.append("the last EXTINF has no URI") }
        if discontinuity { problems.append("EXT-X-DISCONTINUITY with no segment after it (4.3.2.3)") }
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
        var missing = false
        for uri in segments.map(\.uri) + [map].compactMap({ $0 }) where !FileManager.default.fileExists(atPath: folder + "/" + uri) {
            problems.append("\(uri) is listed and missing")
            missing = true
        }
        if !missing, map != nil { problems += mediaTimeProblems() }
    }

    /// Each fMP4 segment's tracks, in media time: where each track's samples start (`tfdt`) and
    /// how long they last (`trun`), in its own ticks.
    public static func fragmentTimes(_ bytes: [UInt8]) -> [UInt32: (start: UInt64, duration: UInt64)]? {
        guard let boxes = try? MP4Box.parse(bytes[...]) else { return nil }
        var times: [UInt32: (UInt64, UInt64)] = [:]
        for moof in boxes where moof.type == "moof" {
            for traf in moof.all("traf") {
                guard let header = traf.first("tfhd")?.read(TrackFragmentHeader.self),
                      let start = traf.first("tfdt")?.read(TrackFragmentDecodeTime.self)?.baseMediaDecodeTime else { return nil }
                let duration = traf.all("trun").compactMap { $0.read(TrackRun.self) }.flatMap(\.samples)
                    .reduce(UInt64(0)) { $0 + UInt64($1.duration == 0 ? header.defaultSampleDuration ?? 0 : $1.duration) }
                let known = times[header.trackID]
                times[header.trackID] = (known?.0 ?? start, (known?.1 ?? 0) + duration)
            }
        }
        return times
    }

    /// Media time runs on from one segment to the next unless EXT-X-DISCONTINUITY says
    /// otherwise (4.3.2.3: a change in the timestamp sequence needs the tag): each track's
    /// first decode time is its predecessor's plus the predecessor's samples' durations.
    func mediaTimeProblems() -> [String] {
        var problems: [String] = []
        var previous: (uri: String, times: [UInt32: (start: UInt64, duration: UInt64)])?
        for s in segments {
            guard let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + s.uri))),
                  let times = Self.fragmentTimes(bytes), !times.isEmpty else {
                problems.append("\(s.uri) is not a fragmented-MP4 media segment (moof with tfhd, tfdt and trun)")
                previous = nil
                continue
            }
            if let p = previous, !s.discontinuity {
                for (track, t) in times.sorted(by: { $0.key < $1.key }) {
                    guard let before = p.times[track] else { continue }
                    if t.start != before.start + before.duration {
                        problems.append("\(s.uri)'s track \(track) starts at \(t.start), not where \(p.uri)'s ends (\(before.start + before.duration)), "
                                        + "and no EXT-X-DISCONTINUITY says so (4.3.2.3)")
                    }
                }
            }
            previous = (s.uri, times)
        }
        return problems
    }

    /// What a live or event playlist read after `before` (the same file, reloaded) breaks of
    /// RFC 8216 6.2.1 and 6.2.2: the target duration, type, version and initialization segment
    /// never change; segments leave only from the start, each taking its media sequence number
    /// (and its discontinuity, into the discontinuity sequence) with it; a segment keeps its URI,
    /// duration and discontinuity for as long as it is listed; an event playlist only grows; an
    /// ended playlist never changes; a live playlist that dropped a segment still lasts three
    /// target durations.
    public func reloaded(from before: HLSPlaylistCheck) -> [String] {
        var problems: [String] = []
        if before.ended, before.segments != segments || before.mediaSequence != mediaSequence || !ended {
            problems.append("the playlist changed after EXT-X-ENDLIST (6.2.1)")
        }
        if targetDuration != before.targetDuration {
            problems.append("EXT-X-TARGETDURATION changed from \(before.targetDuration.map(String.init) ?? "none") to \(targetDuration.map(String.init) ?? "none") (6.2.1)")
        }
        if playlistType != before.playlistType { problems.append("EXT-X-PLAYLIST-TYPE changed (6.2.1)") }
        if version != before.version { problems.append("EXT-X-VERSION changed (6.2.1)") }
        if map != before.map { problems.append("EXT-X-MAP changed (6.2.1)") }
        let removed = mediaSequence - before.mediaSequence
        guard removed >= 0 else {
            problems.append("EXT-X-MEDIA-SEQUENCE went back from \(before.mediaSequence) to \(mediaSequence) (6.2.1)")
            return problems
        }
        if playlistType == "EVENT", removed > 0 { problems.append("an EVENT playlist dropped \(removed) segments from its start (4.3.3.5)") }
        guard removed <= before.segments.count else {
            problems.append("EXT-X-MEDIA-SEQUENCE moved on by \(removed), past the \(before.segments.count) segments listed before (6.2.1)")
            return problems
        }
        let kept = Array(before.segments.dropFirst(removed))
        if segments.count < kept.count || Array(segments.prefix(kept.count)) != kept {
            problems.append("segments still listed changed, or segments left from elsewhere than the start (6.2.1)")
        }
        let gone = before.segments.prefix(removed).filter(\.discontinuity).count
        if discontinuitySequence != before.discontinuitySequence + gone {
            problems.append("EXT-X-DISCONTINUITY-SEQUENCE is \(discontinuitySequence), not \(before.discontinuitySequence) + the \(gone) "
                            + "discontinuities that left (6.2.2)")
        }
        if removed > 0, !ended, let target = targetDuration, segments.map(\.duration).reduce(0, +) < 3 * Double(target) - 1e-6 {
            problems.append("segments were dropped though what is left lasts less than three target durations (6.2.2)")
        }
        return problems
    }

    /// Whether each media segment, after the initialization segment, starts with a video key
    /// frame (ffprobe's first video packet of the two files joined has the K flag); an MPEG-TS
    /// segment is probed alone.
    public static func segmentsStartOnKeyFrames(_ playlist: String, _ check: HLSPlaylistCheck) throws -> [String] {
        let folder = URL(fileURLWithPath: playlist).deletingLastPathComponent()
        let initBytes = try check.map.map { try Data(contentsOf: folder.appendingPathComponent($0)) } ?? Data()
        var notKey: [String] = []
        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for s in check.segments {
            let joined = scratch.appendingPathComponent(s.uri.hasSuffix(".ts") ? "joined.ts" : "joined.mp4")
            try (initBytes + Data(contentsOf: folder.appendingPathComponent(s.uri))).write(to: joined)
            let first = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-read_intervals", "%+#1",
                                                          "-show_entries", "packet=flags", "-of", "csv=p=0", joined.path])
                .split(whereSeparator: \.isNewline).first
            if first.map({ !$0.hasPrefix("K") }) ?? true { notKey.append(s.uri) }
        }
        return notKey
    }

    /// The video frames GStreamer's HLS demuxer (hlsdemux) gives for a media playlist, decoded,
    /// counted at the sink (fMP4: through qtdemux; MPEG-TS: through tsdemux).
    public static func framesThroughHlsdemux(_ playlist: String, transportStream: Bool = false) throws -> Int {
        let demux = transportStream ? ["tsdemux", "name=d"] : ["qtdemux", "name=d"]
        let out = try TestMedia.runTool("gst-launch-1.0", ["-v", "filesrc", "location=\(playlist)", "!", "hlsdemux", "!"] + demux
                                        + ["d.video_0", "!", "queue", "!", "h264parse", "!", "avdec_h264", "!", "fakesink", "name=frames", "silent=false",
                                           "d.audio_0", "!", "queue", "!", "fakesink", "async=false"])
        return out.components(separatedBy: "frames: last-message = chain").count - 1
    }
}

/// The peak segment bit rate of segments (bytes, seconds) in a playlist of target duration
/// `target` (RFC 8216 4.1): the highest bit rate of any run of consecutive segments lasting 0.5
/// to 1.5 times the target; the busiest segment's when no run is that long.
public func hlsPeakBitRate(_ segments: [(bytes: Int, duration: Double)], target: Int) -> Double {
    var best: Double?
    for i in segments.indices {
        var bits = 0.0, seconds = 0.0
        for s in segments[i...] {
            bits += Double(s.bytes * 8)
            seconds += s.duration
            if seconds > 1.5 * Double(target) + 1e-9 { break }
            if seconds >= 0.5 * Double(target) - 1e-9 { best = max(best ?? 0, bits / seconds) }
        }
    }
    return best ?? segments.filter { $0.duration > 0 }.map { Double($0.bytes * 8) / $0.duration }.max() ?? 0
}

/// A multivariant playlist checked against RFC 8216 4.3.4 for what GraphKit writes: each
/// variant's BANDWIDTH at least its measured peak segment bit rate (its own plus its audio
/// group's) and, once every segment exists (ENDLIST), within 10% of it (Apple's authoring
/// specification); AVERAGE-BANDWIDTH likewise; CODECS naming what the initialization segments
/// hold (RFC 6381); RESOLUTION the video's size; every URI a valid media playlist; EXT-X-MEDIA
/// with its required attributes, each AUDIO= naming a group of them.
public struct HLSMultivariantCheck {
    public struct Variant {
        public var attributes: [String: String]
        public var uri: String
    }
    public var variants: [Variant] = []
    /// Each EXT-X-MEDIA's attributes.
    public var media: [[String: String]] = []
    public var problems: [String] = []

    public init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() } else { problems.append("the playlist does not end with a line break") }
        guard lines.first == "#EXTM3U" else {
            problems.append("the first line is not #EXTM3U (4.3.1.1)")
            return
        }
        var pending: [String: String]?
        for line in lines.dropFirst() {
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                if pending != nil { problems.append("an EXT-X-STREAM-INF without a URI after it (4.3.4.2)") }
                pending = Self.attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)), &problems)
            } else if line.hasPrefix("#EXT-X-MEDIA:") {
                media.append(Self.attributes(String(line.dropFirst("#EXT-X-MEDIA:".count)), &problems))
            } else if line.hasPrefix("#EXTINF") || line.hasPrefix("#EXT-X-TARGETDURATION") {
                problems.append("a media playlist tag in a multivariant playlist (4.1)")
            } else if !line.hasPrefix("#"), !line.isEmpty {
                guard let a = pending else {
                    problems.append("the URI \(line) has no EXT-X-STREAM-INF before it (4.3.4.2)")
                    continue
                }
                variants.append(Variant(attributes: a, uri: line))
                pending = nil
            }
        }
        if pending != nil { problems.append("an EXT-X-STREAM-INF without a URI after it (4.3.4.2)") }
        if variants.isEmpty { problems.append("no variant stream (4.3.4.2)") }

        // EXT-X-MEDIA: required attributes, URIs, defaults, unique names.
        var groups: [String: [[String: String]]] = [:]
        var renditionFacts: [String: (codecs: [String], peak: Double, average: Double?)] = [:]
        for m in media {
            for required in ["TYPE", "GROUP-ID", "NAME"] where m[required] == nil { problems.append("EXT-X-MEDIA without \(required) (4.3.4.1)") }
            guard let type = m["TYPE"], let group = m["GROUP-ID"] else { continue }
            if !["AUDIO", "VIDEO", "SUBTITLES", "CLOSED-CAPTIONS"].contains(type) { problems.append("EXT-X-MEDIA TYPE=\(type) is not a type (4.3.4.1)") }
            if m["DEFAULT"] == "YES", let auto = m["AUTOSELECT"], auto != "YES" { problems.append("EXT-X-MEDIA \(m["NAME"] ?? "") is DEFAULT=YES but not AUTOSELECT=YES (4.3.4.1)") }
            groups["\(type)/\(group)", default: []].append(m)
            if type == "AUDIO", m["CHANNELS"] == nil { problems.append("audio EXT-X-MEDIA \(m["NAME"] ?? "") without CHANNELS (4.3.4.1: SHOULD)") }
            if let uri = m["URI"] {
                guard let facts = Self.mediaFacts(uri, folder: folder, &problems) else { continue }
                renditionFacts[uri] = (facts.codecs, facts.peak, facts.average)
            }
        }
        for (group, members) in groups {
            let names = members.compactMap { $0["NAME"] }
            if Set(names).count != names.count { problems.append("two renditions of group \(group) have one NAME (4.3.4.1.1)") }
            if members.filter({ $0["DEFAULT"] == "YES" }).count > 1 { problems.append("group \(group) has more than one DEFAULT=YES (4.3.4.1.1)") }
        }

        for v in variants {
            let a = v.attributes
            guard let bandwidth = a["BANDWIDTH"].flatMap(Int.init) else {
                problems.append("\(v.uri): no decimal BANDWIDTH (4.3.4.2)")
                continue
            }
            guard let own = Self.mediaFacts(v.uri, folder: folder, &problems) else { continue }
            var codecs = own.codecs, peak = own.peak, average = own.average, complete = own.complete
            if let group = a["AUDIO"] {
                guard let members = groups["AUDIO/\(group)"] else {
                    problems.append("\(v.uri): AUDIO=\"\(group)\" names no EXT-X-MEDIA TYPE=AUDIO group (4.3.4.2.1)")
                    continue
                }
                // The busiest rendition of the group with the video (the largest sum that plays).
                let facts = members.compactMap { $0["URI"].flatMap { renditionFacts[$0] } }
                if let busiest = facts.max(by: { $0.peak < $1.peak }) {
                    peak += busiest.peak
                    average = average.flatMap { a in busiest.average.map { a + $0 } }
                    codecs += facts.flatMap(\.codecs)
                }
                complete = complete && members.count == facts.count
            }
            if Double(bandwidth) < peak.rounded(.down) {
                problems.append("\(v.uri): BANDWIDTH \(bandwidth) is below the peak segment bit rate measured, \(Int(peak)) (4.3.4.2)")
            } else if complete, Double(bandwidth) > peak * 1.1 {
                problems.append("\(v.uri): BANDWIDTH \(bandwidth) is more than 10% over the peak segment bit rate measured, \(Int(peak))")
            }
            if let avg = a["AVERAGE-BANDWIDTH"] {
                if let n = Int(avg), let measured = average {
                    if complete, abs(Double(n) - measured) > measured * 0.1 {
                        problems.append("\(v.uri): AVERAGE-BANDWIDTH \(n) is not within 10% of the average segment bit rate measured, \(Int(measured)) (4.3.4.2)")
                    }
                } else if Int(avg) == nil { problems.append("\(v.uri): AVERAGE-BANDWIDTH \(avg) is not a decimal integer (4.3.4.2)") }
            }
            if let stated = a["CODECS"] {
                let listed = Set(stated.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
                if listed != Set(codecs) { problems.append("\(v.uri): CODECS \"\(stated)\" is not what its segments hold, \(codecs.joined(separator: ",")) (4.3.4.2)") }
            } else {
                problems.append("\(v.uri): no CODECS (4.3.4.2: SHOULD)")
            }
            if let size = own.size {
                if a["RESOLUTION"] != "\(size.width)x\(size.height)" {
                    problems.append("\(v.uri): RESOLUTION \(a["RESOLUTION"] ?? "missing") is not its video's \(size.width)x\(size.height) (4.3.4.2)")
                }
            }
        }
    }

    /// A media playlist's codecs (RFC 6381, from its initialization segment), picture size, peak
    /// and average segment bit rates, and whether every segment is there (ENDLIST); its own
    /// problems added, named by its URI.
    static func mediaFacts(_ uri: String, folder: String, _ problems: inout [String])
        -> (codecs: [String], size: (width: Int, height: Int)?, peak: Double, average: Double?, complete: Bool)? {
        let path = folder + "/" + uri
        guard FileManager.default.fileExists(atPath: path), let check = try? HLSPlaylistCheck(path: path) else {
            problems.append("\(uri) is listed and missing")
            return nil
        }
        problems += check.problems.map { "\(uri): \($0)" }
        let dir = URL(fileURLWithPath: path).deletingLastPathComponent()
        var codecs: [String] = [], size: (width: Int, height: Int)?
        if let map = check.map, let bytes = try? [UInt8](Data(contentsOf: dir.appendingPathComponent(map))),
           let movie = try? MP4File(MemoryBytes(bytes)).movie() {
            for i in movie.trackIndices {
                guard let d = SampleDescription(movie.track(i)) else { continue }
                if let s = d.size { size = s }
                switch (d.codec, d.configuration) {
                case ("avc1", let c?) where c.body.count >= 4:
                    codecs.append("avc1." + c.body[1...3].map { String(format: "%02x", $0) }.joined())
                case ("mp4a", let c?) where c.body.count >= 2:
                    codecs.append("mp4a.\(String(format: "%02x", c.body[0])).\(c.body[1] >> 3)")
                default:
                    codecs.append(d.codec.description)
                }
            }
        } else if check.map != nil {
            problems.append("\(uri)'s initialization segment cannot be read")
        }
        let segments = check.segments.map { s in
            (bytes: ((try? FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(s.uri).path)[.size]) as? Int) ?? 0, duration: s.duration)
        }
        let total = segments.map(\.duration).reduce(0, +)
        return (codecs, size, hlsPeakBitRate(segments, target: check.targetDuration ?? 1),
                total > 0 ? Double(segments.map(\.bytes).reduce(0, +) * 8) / total : nil, check.ended)
    }

    /// An attribute list (RFC 8216 4.2): NAME=value pairs, commas between, quoted strings kept
    /// whole (their commas too) without their quotes.
    static func attributes(_ text: String, _ problems: inout [String]) -> [String: String] {
        var out: [String: String] = [:]
        var rest = Substring(text)
        while !rest.isEmpty {
            guard let eq = rest.firstIndex(of: "=") else {
                problems.append("attribute list \(text) has a name without a value (4.2)")
                break
            }
            let name = String(rest[..<eq])
            rest = rest[rest.index(after: eq)...]
            var value: String
            if rest.first == "\"" {
                let body = rest.dropFirst()
                guard let close = body.firstIndex(of: "\"") else {
                    problems.append("attribute \(name) has an unclosed quoted string (4.2)")
                    break
                }
                value = String(body[..<close])
                rest = body[body.index(after: close)...]
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = String(rest[..<end])
                rest = rest[end...]
            }
            if out[name] != nil { problems.append("attribute \(name) appears twice (4.2)") }
            if name.isEmpty || !name.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "-" }) { problems.append("\(name) is not an attribute name (4.2)") }
            out[name] = value
            if rest.first == "," { rest = rest.dropFirst() } else if !rest.isEmpty {
                problems.append("attribute list \(text): \(rest) follows a value without a comma (4.2)")
                break
            }
        }
        return out
    }
}
