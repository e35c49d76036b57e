import Glibc
import GraphKitCore
import MediaContainers
import Nodes
import Synchronization

/// Packages an MP4 (H.264 or HEVC video, AAC or other audio, as the file has them) for HTTP Live
/// Streaming without re-encoding: an initialization segment, fragmented-MP4 media segments each
/// starting on a key frame, and a VOD media playlist (RFC 8216), all in one folder. The samples
/// are copied as they are (`ffmpeg -c copy -f hls -hls_segment_type fmp4` does the same job).
///
/// ```swift
/// let packager = HLSPackager(source: "talk.mp4", folder: "hls", segmentDuration: 6)
/// let report = try packager.package()   // hls/playlist.m3u8, hls/playlist.3f9a0c61d2e4/init.mp4, …/segment0.m4s, …
/// ```
///
/// Files are written by the engine's rule for outputs (``OutputFile``): each under a temporary
/// name, renamed when complete. The segments go into a new generation folder beside the playlist
/// (``HLSGeneration``: `playlist.3f9a0c61d2e4/init.mp4`, `…/segment0.m4s`), and the playlist is
/// renamed over the earlier one last, in one step: a reader sees the earlier package or this
/// one, whole, and the earlier one's generation is removed only after the switch. A failure or
/// ``cancel()`` removes this packaging's generation and leaves the earlier package as it was.
/// The source is opened once and read through its descriptor.
public final class HLSPackager: Sendable {
    public let source: String
    public let folder: String
    /// The duration each segment aims at, in seconds (``HLSSinkNode/segmentDurations``: 0.5 to
    /// 60): a segment ends at the first key frame at or after each multiple of it. The video's
    /// key frames must be at most this far apart (the stretch after the last one too): the
    /// packets are copied, so no key frame can be added, and a source whose key frames are
    /// farther apart is refused before anything is written.
    public let segmentDuration: Double
    public let playlistName: String
    public let initializationName: String
    /// The media segments' names: `segmentPrefix` + number (from 0) + `.m4s`.
    public let segmentPrefix: String

    /// What was written.
    public struct Report: Sendable, Equatable {
        public var playlist: String
        public var initializationSegment: String
        /// Each media segment's file name and duration (seconds).
        public var segments: [Segment]
        public var targetDuration: Int

        public struct Segment: Sendable, Equatable {
            public var name: String
            public var duration: Double
        }
    }

    private let cancelled = Atomic(false)

    public init(source: String, folder: String, segmentDuration: Double = 6, playlistName: String = "playlist.m3u8",
                initializationName: String = "init.mp4", segmentPrefix: String = "segment") {
        self.source = source
        self.folder = folder
        self.segmentDuration = segmentDuration
        self.playlistName = playlistName
        self.initializationName = initializationName
        self.segmentPrefix = segmentPrefix
    }

    /// Stops ``package()`` (from any thread) within a sample of its reading of the source's
    /// timing or before its next segment: it removes what it wrote and throws
    /// ``GraphError/Code/cancelled``.
    public func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Writes the playlist and its segments. Throws 64 for a segment duration outside
    /// ``HLSSinkNode/segmentDurations`` or shorter than the video's key frames are apart, or a
    /// file name that is not one, 66 when the source cannot be read or is not an MP4 with video
    /// or audio samples (a damaged index or timing: the track and what is wrong named), 65 when
    /// the playlist would be the source, 73 when a file cannot be written (or another packaging
    /// of the same playlist is under way), 130 when cancelled.
    public func package() throws(GraphError) -> Report {
        let durations = HLSSinkNode.segmentDurations
        guard durations.contains(segmentDuration) else {
            throw GraphError(.usage, at: "segmentDuration",
                             "the segment duration must be from \(durations.lowerBound) to \(durations.upperBound) seconds, not \(segmentDuration)")
        }
        for (what, name) in [("playlistName", playlistName), ("initializationName", initializationName), ("segmentPrefix", segmentPrefix + "0.m4s")] {
            // Written into the playlist as a line of text: a control character (a newline)
            // would forge one (StringFormat.fileName, sink.hls's rule).
            guard !name.isEmpty, !name.contains("/"), name != ".", name != "..", !name.hasPrefix("."),
                  !StringFormat.hasControlCharacter(name) else {
                throw GraphError(.usage, at: what, "\(JSONValue.quote(name)) is not a file name (no folders, not hidden, no control characters)")
            }
        }
        let fd = open(source, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw unreadable(String(cString: strerror(errno)).lowercased()) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw unreadable(String(cString: strerror(errno)).lowercased()) }
        guard st.st_mode & S_IFMT == S_IFREG else { throw unreadable(st.st_mode & S_IFMT == S_IFDIR ? "it is a folder" : "it is not a regular file") }
        // Never write what is read: a playlist named like the source (`--playlist talk.mp4` in
        // the source's folder) would replace it (65, before anything is written). Everything else
        // goes into a generation folder made new.
        var roles = FileRoles()
        roles.reads(source, as: "the source", file: FileIdentity(st))
        roles.writes(WrittenFile.path(playlistName, in: folder), as: "playlistName")
        try roles.check()
        let bytes = FileBytes(descriptor: fd)
        let movie: MP4Movie, plan: HLSSegmentPlan
        do throws(ContainerError) {
            let format = try MediaContainerFormat.detect(bytes)
            guard format == .mp4 || format == .mov else {
                throw ContainerError(format.map { "it is not an MP4 file (it is \($0.name))" } ?? "it is not an MP4 file")
            }
            guard let found = try MP4File(bytes).movie() else { throw ContainerError("it has no index (moov box): it is not a whole MP4 file") }
            movie = found
            plan = try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: segmentDuration) {
                self.cancelled.load(ordering: .relaxed)
            }
        } catch {
            if cancelled.load(ordering: .relaxed) { throw GraphError(.cancelled, "the packaging of \"\(source)\" was cancelled") }
            throw unreadable(error.reason)
        }
        // Segments start on key frames: a stretch without one longer than the target would be
        // a segment longer than asked. Refused before anything is written (docs/GRAPH-FORMAT.md,
        // sink.hls, says why this is an error and not ffmpeg's longer segments).
        if let gap = plan.longestKeyFrameDistance, gap.seconds > segmentDuration + max(1e-3, plan.longestFrame / 2) {
            throw GraphError(.usage, at: "segmentDuration", "cannot package \"\(source)\" in segments of \(segmentDuration) s: its video's "
                             + HLSSegmenter.sparseKeyFrames(from: gap.from, to: gap.to, what: gap.atEnd ? "the end" : "the next one",
                                                            target: segmentDuration, setting: "the segment duration"))
        }

        // The playlist's file first: it holds the playlist's name for this packaging (a second
        // packaging of the same playlist at once is refused, 73) and is renamed last.
        let playlistFile = OutputFile(path: WrittenFile.path(playlistName, in: folder), location: "playlistName", node: "HLSPackager")
        try playlistFile.prepare()
        let generation = HLSGeneration(folder: folder, playlist: playlistName)
        let sparing: Set<FileIdentity> = [FileIdentity(st)]
        func write(_ name: String, _ content: [UInt8]) throws(GraphError) {
            let path = generation.path(name)
            let file = OutputFile(path: path, location: path, node: "HLSPackager")
            try file.prepare()
            generation.hold()  // made with the first file: no other packaging removes it now
            try HLSSinkNode.writeDurably(content, to: file)
            try file.commit()
        }
        do throws(GraphError) {
            try write(initializationName, Self.keepingTags(of: movie, in: CMAF.initializationSegment(of: movie, trackIndices: plan.tracks.map(\.index))))
            var playlist = HLSMediaPlaylist(initializationSegment: generation.uri(initializationName))
            var nextFragment: UInt32 = 1  // the fragments' sequence numbers, rising through the segments
            for (k, segment) in plan.segments.enumerated() {
                if cancelled.load(ordering: .relaxed) { throw GraphError(.cancelled, "the packaging of \"\(source)\" was cancelled") }
                var runs: [FragmentRun] = []
                for (t, range) in segment.samples.enumerated() where !range.isEmpty {
                    let track = plan.tracks[t]
                    let samples = Array(track.samples[range])
                    runs.append(FragmentRun(trackID: track.trackID, timescale: UInt32(clamping: track.timescale), baseDecodeTime: samples[0].decodeTime,
                                            samples: samples, data: try read(samples, from: bytes)))
                }
                let name = "\(segmentPrefix)\(k).m4s"
                let written = CMAF.mediaSegment(firstSequenceNumber: nextFragment, runs: runs)
                nextFragment &+= written.fragmentCount
                try write(name, written.bytes)
                playlist.segments.append((generation.uri(name), segment.duration))
            }
            if cancelled.load(ordering: .relaxed) { throw GraphError(.cancelled, "the packaging of \"\(source)\" was cancelled") }
            try HLSSinkNode.writeDurably(Array(playlist.text.utf8), to: playlistFile)
            // The switch: the new playlist in place of the old one, in one step; the old
            // package's generation goes only now.
            let replaced = try playlistFile.commitReplacing()
            generation.retire(replaced: replaced, sparing: sparing)
            generation.release()
            return Report(playlist: playlistName, initializationSegment: generation.uri(initializationName),
                          segments: playlist.segments.map { Report.Segment(name: $0.uri, duration: $0.duration) },
                          targetDuration: playlist.targetDuration)
        } catch {
            playlistFile.discard()
            generation.discard(sparing: sparing)
            throw error
        }
    }

    /// `segment` (an initialization segment: `ftyp`, then `moov`) with the source `movie`'s
    /// user data (`udta`: its tags, cover and place), as ffmpeg's HLS muxer keeps them in
    /// init.mp4; not its Nero chapters (`chpl`), which a playlist does not show. The tracks'
    /// languages and the creation time are in the headers the segment copies already.
    static func keepingTags(of movie: MP4Movie, in segment: [UInt8]) -> [UInt8] {
        guard var udta = movie.moov.first("udta"), segment.count >= 8 else { return segment }
        udta.children.removeAll { $0.type == "chpl" }
        let ftypSize = segment[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard !udta.children.isEmpty, ftypSize >= 8, ftypSize < segment.count,
              var moov = try? MP4Box(parsing: segment[ftypSize...]), moov.type == "moov" else { return segment }
        // What the segment has already (the sound's gapless tag, iTunSMPB) is kept beside them.
        for made in moov.first("udta")?.children ?? [] {
            guard made.type == "meta", var meta = udta.first("meta") else {
                if udta.first(made.type) == nil { udta.children.append(made) }
                continue
            }
            var ilst = meta.first("ilst") ?? MP4Box(type: "ilst", children: [])
            ilst.children += made.first("ilst")?.children ?? []
            meta.replaceOrInsert(ilst, after: ["hdlr", "keys"])
            udta.replaceOrInsert(meta)
        }
        moov.replaceOrInsert(udta, after: ["mvhd", "trak", "mvex"])
        return Array(segment[..<ftypSize]) + moov.bytes
    }

    /// The bytes of `samples`, read a contiguous stretch at a time (a chunk's samples lie one
    /// after another) straight into the run's buffer, never more than they hold.
    private func read(_ samples: [MP4Sample], from bytes: FileBytes) throws(GraphError) -> [UInt8] {
        let total = samples.reduce(0) { $0 + Int($1.size) }
        var failure: ContainerError?
        var short: UInt64?
        let data = [UInt8](unsafeUninitializedCapacity: total) { buffer, count in
            var start = samples[0].offset, end = start
            func flush() -> Bool {
                guard end > start else { return true }
                let want = Int(end - start)
                let into = UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[count..<(count + want)])
                do throws(ContainerError) {
                    let got = try bytes.read(at: start, into: into)
                    count += got
                    guard got == want else {
                        short = start + UInt64(got)
                        return false
                    }
                } catch {
                    failure = error
                    return false
                }
                return true
            }
            for s in samples {
                if s.offset != end {
                    guard flush() else { return }
                    start = s.offset
                    end = s.offset
                }
                end += UInt64(s.size)
            }
            _ = flush()
        }
        if let failure { throw unreadable(failure.reason) }
        if let short { throw unreadable("it ends at byte \(short), inside its samples") }
        return data
    }

    private func unreadable(_ why: String) -> GraphError {
        GraphError(.inputUnreadable, "cannot package \"\(source)\" for HLS: \(why)")
    }
}

extension MediaContainerFormat {
    /// "a WAV file", for messages.
    var name: String {
        switch self {
        case .mp4: "an MP4 file"
        case .mov: "a QuickTime file"
        case .mp3: "an MP3 file"
        case .wav: "a WAV file"
        case .flac: "a FLAC file"
        case .ogg: "an Ogg file"
        case .aiff: "an AIFF file"
        case .matroska: "a Matroska or WebM file"
        }
    }
}
