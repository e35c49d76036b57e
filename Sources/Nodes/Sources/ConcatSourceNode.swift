import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `source.concat`: files one after another, each from its `inpoint` to its `outpoint`, as one
/// video stream and one sound stream, as stored (compressed, as `demux` gives them): the graph
/// form of a join without re-encoding, `source.concat → sink.mp4`, as
/// `ffmpeg -f concat -i list.txt -c copy out.mp4` and GStreamer's `concat` element join files.
///
/// Why this shape. ffmpeg's concat demuxer is a *source* that reads a list of files, each with
/// an optional `inpoint` and `outpoint` (or `duration`), and gives their packets as one stream;
/// GStreamer's `splitmuxsrc` is a source too. So this is a source node, its list a parameter
/// (`pieces`, each `path` with `inpoint`, `outpoint` or `duration` in seconds, named as
/// ffmpeg's directives), its outputs the stored streams `demux` gives, so that what takes
/// `demux`'s outputs takes these (`sink.mp4`, `sink.mkv`, `encode`-free remuxes). Each piece is
/// read through the container library from its own index (MP4 and MOV files, opened once, by
/// descriptor, when the graph is built, as `source.file` opens its file), its packets pushed as
/// downstream wants them: no demuxer, no decoder, and no seek. Every file a piece names is one
/// the run reads, so a run that would write over one is refused before it starts.
///
/// Cuts, as ffmpeg's concat demuxer with `-c copy` makes them (its documentation: "you will
/// usually get extra packets before the actual In point"), but kept in step:
/// - a piece with video starts at the key frame at or before its `inpoint` (the frames before
///   a key frame cannot be decoded, and a stream has no edit list to hide the ones before the
///   `inpoint`: for a join cut to the frame, export a `Composition`, whose MP4 has one, or
///   decode the pieces); a warning names the piece and where it starts when that is earlier;
/// - it ends at its `outpoint` (or its file's end), with the frames decoded before the first
///   frame shown at or past it (a B-frame shown before it but decoded after is left out: up to
///   a few frames before the `outpoint` with B-frames);
/// - its sound covers the same time, whole AAC packets, each piece's first chosen so that the
///   sound stays within half a packet of the pictures across every join (the packet after a
///   join is heard as a 23 ms transition: an AAC decoder overlaps each packet with the one
///   before, here another file's, as after ffmpeg's concat with `-c copy`); the sound runs on
///   without a gap (its stamps are counted in samples);
/// - where a piece has less sound than pictures, silence fills it (``ConcatSilence``), said.
///
/// Every piece must hold what the connected outputs carry, with the same codec and parameters
/// (the MP4 sample descriptions: codec, size, rate, channels, `avcC`/`hvcC`/`esds`), since one
/// stream has one decoder configuration: H.264 or HEVC video, AAC sound.
///
/// Refused before the run plays, each naming the piece (`nodes.ID.params.pieces[N]`): a file
/// that cannot be read, or is not MP4 or MOV (66); an empty range, an `inpoint` at or past the
/// file's end, an `outpoint` past it, a file without the video or sound an output carries, a
/// codec other than these, and pieces that cannot follow one another as stored (65). Nothing
/// has been written then.
///
/// Example:
/// ```json
/// "join": { "type": "source.concat", "params": { "pieces": [{ "path": "a.mp4", "inpoint": 10, "outpoint": 20 }, { "path": "b.mp4" }] } }
/// ```
///
/// A graph of these and `sink.mp4` alone needs no GStreamer pipeline: it runs on the container
/// path (``RunPlan/containerPath``), the same samples read and written by the run's own thread.
public final class ConcatSourceNode: ElementNode, StoredSampleSource, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "source.concat",
        category: .source,
        summary: "Joins files one after another, each from an inpoint to an outpoint: their video and sound as stored, as one stream",
        outputs: [
            PortDescriptor("video", FormatSet([.h264, .video(.hevc)]), presence: .sometimes,
                           help: "the pieces' video, as stored: H.264 or HEVC, one configuration"),
            PortDescriptor("audio", FormatSet([.aac]), presence: .sometimes, help: "the pieces' sound, as stored: AAC, one configuration"),
        ],
        parameters: [pieces],
        example: #"{ "type": "source.concat", "params": { "pieces": [{ "path": "a.mp4", "inpoint": 10, "outpoint": 20 }, { "path": "b.mp4" }] } }"#
    )

    public static let path = RequiredParameter<String>("path", format: .path, help: "the file, relative to the current folder (MP4 or MOV)")
    public static let inpoint = OptionalParameter<Double>("inpoint", 0...31_536_000, help: "seconds into the file where the piece starts (default: its start)")
    public static let outpoint = OptionalParameter<Double>("outpoint", 0...31_536_000, help: "seconds into the file where the piece ends (default: its end)")
    public static let duration = OptionalParameter<Double>("duration", 0...31_536_000, help: "the piece's length in seconds, instead of outpoint")
    public static let pieces = RequiredParameter<ParameterRecords>(
        "pieces", fields: [path, inpoint, outpoint, duration],
        help: "the files in the order they play, each an object: path, and optionally inpoint and outpoint (or duration), in seconds")

    /// One piece as the graph asks for it.
    struct Piece: Sendable {
        var path: String
        var inpoint: Double
        /// The end asked (outpoint, or inpoint + duration); nil: the file's end.
        var outpoint: Double?
        var location: String
    }

    let context: NodeContext
    let asked: [Piece]
    /// What was read when the graph was built.
    private let planned = Guarded<ConcatPlan?>(nil)

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let records = try context.parameters.value(Self.pieces).items
        var asked: [Piece] = []
        for (i, record) in records.enumerated() {
            let at = context.location(parameter: "pieces[\(i)]")
            guard case .string(let path)? = record["path"] else {
                throw GraphError(.invalidGraph, at: "\(at).path", "piece \(i) has no path", node: context.id)
            }
            let number = { (name: String) -> Double? in
                switch record[name] {
                case .number(let d)?: d
                case .integer(let n)?: Double(n)
                default: nil
                }
            }
            let inpoint = number("inpoint") ?? 0
            if number("outpoint") != nil, number("duration") != nil {
                throw GraphError(.invalidGraph, at: "\(at).duration", "give outpoint or duration, not both", node: context.id)
            }
            let outpoint = number("outpoint") ?? number("duration").map { inpoint + $0 }
            if let outpoint, outpoint <= inpoint {
                throw GraphError(.invalidGraph, at: number("duration") != nil ? "\(at).duration" : "\(at).outpoint",
                                 "piece \(i) (\"\(path)\") is empty: it ends at \(outpoint) s, not after its inpoint at \(inpoint) s", node: context.id)
            }
            asked.append(Piece(path: path, inpoint: inpoint, outpoint: outpoint, location: at))
        }
        self.asked = asked
    }

    public var mediaDescription: String? {
        asked.count == 1 ? "\"\(asked[0].path)\"" : "\(asked.count) pieces (\"\(asked[0].path)\" first)"
    }

    /// The joined stream's length, once the files are read: what the progress line runs to.
    public var expectedDuration: MediaTime? { planned.withLock { $0 }.map { MediaTime(seconds: $0.duration) } }

    /// Reads every piece's index (each file opened once, by descriptor) and makes a source per
    /// connected output; a piece that cannot be joined fails the graph here, before it plays.
    public func build(in bin: BinBuilder) throws(GraphError) {
        let plan = try makePlan()
        for (n, stream) in plan.streams.enumerated() {
            let cursor = Guarded(0)
            let source = try bin.makeSampleSource(name: stream.kind, caps: stream.caps) {
                let next = cursor.withLock { c in
                    defer { c += 1 }
                    return c
                }
                return plan.sample(next, of: stream)
            }
            try bin.expose(output: stream.kind, source.element)
            if n == 0 { for warning in plan.warnings { source.element.postWarning(warning) } }
        }
    }
}

extension ConcatSourceNode {
    /// Reads every piece's index for the connected outputs, and keeps the plan (for the length
    /// the progress line runs to). Called once a run, by whichever of the two plans it has.
    private func makePlan() throws(GraphError) -> ConcatPlan {
        let kinds = Self.descriptor.outputs.map(\.name).filter { context.connectedOutputs.contains($0) }
        let plan = try ConcatPlan(asked, kinds: kinds, node: context.id)
        planned.withLock { $0 = plan }
        return plan
    }

    /// On the container path: the same samples, each with its sample entry (as `sink.mp4` makes
    /// it from the caps ``build(in:)`` gives).
    package func storedStreams() throws(GraphError) -> (streams: [String: StoredStream], warnings: [String]) {
        let plan = try makePlan()
        var streams: [String: StoredStream] = [:]
        for stream in plan.streams {
            guard let format = stream.description.flatMap(ConcatPlan.trackFormat) else {
                throw GraphError(.invalidGraph, at: "\(asked[0].location).path",
                                 "piece 0 (\"\(asked[0].path)\")'s \(stream.kind) does not say its size, rate or codec configuration", node: context.id)
            }
            streams[stream.kind] = StoredStream(format: format) { n in plan.sample(n, of: stream) }
        }
        return (streams, plan.warnings)
    }
}

/// What `source.concat` pushes: per output, every sample of every piece in order, with where
/// its bytes are and its times on the joined stream (see ``ConcatSourceNode`` for the cuts).
struct ConcatPlan: Sendable {
    /// One output's stream.
    struct Stream: Sendable {
        var kind: String
        /// The first piece's sample description, and the caps the pipeline's source gives (a
        /// stream planned for the container path alone, `demux`'s, has neither).
        var description: SampleDescription? = nil
        var caps = ""
        var samples: [Sample]
    }

    struct Sample: Sendable {
        /// Its file, in ``files``; ``silenceFile``: a silent frame (``silence``).
        var file: Int
        var offset: UInt64
        var size: Int
        /// Nanoseconds on the joined stream.
        var pts: UInt64
        var dts: UInt64
        var duration: UInt64
        var keyframe: Bool
    }

    /// The pieces' files, open, each once, in the order the pieces first name them.
    let files: [FileBytes]
    let names: [String]
    let streams: [Stream]
    /// The joined stream's length in seconds.
    let duration: Double
    /// Where a piece starts earlier than asked (at the key frame before its inpoint), and where
    /// silence fills the sound.
    let warnings: [String]
    /// The silent AAC frame where a piece has less sound than pictures (``AACSilence``).
    var silence: [UInt8] = []
    static let silenceFile = -1
    /// The most silence a join fills, in seconds: past it, a piece is refused (a file of a few
    /// bytes can claim hours of pictures and no sound, and each silent frame is a sample).
    static let mostSilence = 3600.0

    /// A plan made elsewhere (`demux`'s copy of one file, on the container path).
    init(files: [FileBytes], names: [String], streams: [Stream], duration: Double, warnings: [String]) {
        (self.files, self.names, self.streams, self.duration, self.warnings) = (files, names, streams, duration, warnings)
    }

    /// Reads every piece's index and plans the outputs `kinds` ("video", "audio"). Throws,
    /// naming the piece, for what ``ConcatSourceNode`` refuses.
    init(_ pieces: [ConcatSourceNode.Piece], kinds: [String], node: String) throws(GraphError) {
        struct Read {
            var movie: MP4Movie
            var tracks: [String: (plan: HLSSegmentPlan.Track, description: SampleDescription)]
            var end: Double
        }
        var files: [FileBytes] = [], names: [String] = [], read: [Read] = []
        // A file several pieces name is opened and read once: a list of a thousand cuts from one
        // recording holds one descriptor, not a thousand (a process may have 1,024).
        var opened: [String: (file: Int, piece: Int)] = [:]
        var fileOf: [Int] = []  // each piece's file, in `files`
        for (i, piece) in pieces.enumerated() {
            if let known = opened[piece.path] {
                fileOf.append(known.file)
                read.append(read[known.piece])
                continue
            }
            let at = "\(piece.location).path"
            let name = "piece \(i) (\"\(piece.path)\")"
            // Opened once, without blocking (a pipe with no writer would hold the graph's
            // building), and read through that descriptor only.
            let fd = open(piece.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            var info = stat()
            guard fd >= 0 else {
                let why = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
                throw GraphError(.inputUnreadable, at: at, "cannot read \"\(piece.path)\" (\(name)): \(why)", node: node)
            }
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw GraphError(.inputUnreadable, at: at, "cannot read \"\(piece.path)\" (\(name)): it is not a regular file", node: node)
            }
            let bytes = FileBytes(owning: fd)
            let movie: MP4Movie
            do throws(ContainerError) {
                guard let m = try MP4File(bytes).movie() else { throw ContainerError("it has no index (moov box)") }
                movie = m
            } catch {
                throw GraphError(.inputUnreadable, at: at, "\(name) is not an MP4 or QuickTime file source.concat can read: \(error.reason)", node: node)
            }
            var tracks: [String: (HLSSegmentPlan.Track, SampleDescription)] = [:]
            var end = 0.0
            for (kind, handler) in [("video", FourCC("vide")), ("audio", FourCC("soun"))] {
                guard let (index, track) = movie.tracks(handler: handler).first else { continue }
                do throws(ContainerError) {
                    let plan = try HLSSegmentPlan.Track(reading: track, index: index, movie: movie, fileSize: bytes.count)
                    guard let description = SampleDescription(track) else { throw ContainerError("its \(kind) track states no sample description") }
                    tracks[kind] = (plan, description)
                    if let last = plan.samples.map({ $0.presentationTime + Int64($0.duration) }).max() {
                        // Where the track's one media edit says it ends, when it says: an AAC
                        // track's last packet runs past the sound it holds (ffmpeg's 2 s tone
                        // has 88 packets, 2.02 s), and a join placed the next piece there.
                        var trackEnd = plan.seconds(last)
                        let media = (track.edits ?? []).filter { $0.mediaTime >= 0 }
                        if media.count == 1, media[0].duration > 0, movie.timescale > 0 {
                            trackEnd = min(trackEnd, plan.delay + Double(media[0].duration) / Double(movie.timescale))
                        }
                        end = max(end, trackEnd)
                    }
                } catch {
                    throw GraphError(.inputUnreadable, at: at, "\(name): its \(kind) track cannot be read: \(error.reason)", node: node)
                }
            }
            opened[piece.path] = (files.count, i)
            fileOf.append(files.count)
            files.append(bytes)
            names.append(piece.path)
            read.append(Read(movie: movie, tracks: tracks, end: end))
        }

        // What each piece holds and asks, checked against the first piece.
        for kind in kinds {
            for (i, (piece, r)) in zip(pieces, read).enumerated() {
                let name = "piece \(i) (\"\(piece.path)\")"
                guard let (_, description) = r.tracks[kind] else {
                    throw GraphError(.invalidGraph, at: "\(piece.location).path", "\(name) has no \(kind == "video" ? "video" : "sound") track, and the \(kind) output is connected", node: node)
                }
                let codecs: [FourCC] = kind == "video" ? ["avc1", "avc3", "hvc1", "hev1"] : ["mp4a"]
                guard codecs.contains(description.codec), description.configuration != nil else {
                    throw GraphError(.invalidGraph, at: "\(piece.location).path",
                                     "\(name)'s \(kind) is \(description.codec), which source.concat does not pass as stored (it passes \(kind == "video" ? "H.264 and HEVC" : "AAC")): decode and encode it instead", node: node)
                }
                if i > 0, let first = read[0].tracks[kind]?.description, let difference = description.difference(from: first) {
                    throw GraphError(.invalidGraph, at: "\(piece.location).path",
                                     "\(name) cannot follow piece 0 (\"\(pieces[0].path)\") as stored: \(difference); export them as a Composition with a preset that re-encodes", node: node)
                }
            }
        }
        for (i, (piece, r)) in zip(pieces, read).enumerated() {
            let name = "piece \(i) (\"\(piece.path)\")"
            if piece.inpoint >= r.end {
                throw GraphError(.invalidGraph, at: "\(piece.location).inpoint", "\(name) starts at \(piece.inpoint) s, at or past the file's end (\(r.end) s)", node: node)
            }
            // A millisecond's slack: a file's end is stated to the millisecond.
            if let out = piece.outpoint, out > r.end + 0.001 {
                throw GraphError(.invalidGraph, at: "\(piece.location).outpoint", "\(name) ends at \(out) s, past the file's end (\(r.end) s)", node: node)
            }
        }

        // The cuts: each piece from where it starts (the key frame at or before its inpoint, with
        // video) to its end, placed after the one before.
        var video: [Sample] = [], audio: [Sample] = []
        var warnings: [String] = []
        var time = 0.0  // where the piece starts on the joined stream, in seconds
        var lead = 0.0  // how much earlier than it shows the first frame is decoded
        var lastDTS: UInt64?
        var soundSamples: Int64 = 0  // the sound given so far, in its clock (every piece's is one rate: checked above)
        var silence = ConcatSilence(kinds.contains("audio") ? read[0].tracks["audio"] : nil)
        for (i, (piece, r)) in zip(pieces, read).enumerated() {
            let end = min(piece.outpoint ?? r.end, r.end)
            var start = piece.inpoint
            if kinds.contains("video"), let (track, _) = r.tracks["video"] {
                let samples = track.samples
                // The key frame shown at or before the inpoint (the last such in decode order).
                let key = samples.indices.last { samples[$0].isSync && track.seconds(samples[$0].presentationTime) <= piece.inpoint + 1e-6 }
                    ?? samples.indices.first { samples[$0].isSync }
                guard let key else {
                    throw GraphError(.invalidGraph, at: "\(piece.location).path", "piece \(i) (\"\(piece.path)\")'s video has no key frame", node: node)
                }
                let keyTime = samples[key].presentationTime
                start = track.seconds(keyTime)
                if start < piece.inpoint - 0.0005 {
                    warnings.append("piece \(i) (\"\(piece.path)\") starts at \(Self.seconds(start)) s, the key frame before its inpoint at \(Self.seconds(piece.inpoint)) s: a stream as stored cannot start between key frames")
                }
                if i == 0 { lead = max(0, start - track.seconds(Int64(samples[key].decodeTime))) }
                for s in samples[key...] {
                    let shown = track.seconds(s.presentationTime)
                    if shown >= end - 1e-6 { break }  // and what is decoded after it
                    if s.presentationTime < keyTime { continue }  // an open GOP's leading frames: they need the group before
                    var dts = Self.nanoseconds(track.seconds(Int64(s.decodeTime)) - start + time + lead)
                    if let last = lastDTS, dts <= last { dts = last + 1_000 }
                    lastDTS = dts
                    video.append(Sample(file: fileOf[i], offset: s.offset, size: Int(s.size), pts: Self.nanoseconds(shown - start + time + lead), dts: dts,
                                        duration: UInt64(s.duration) * 1_000_000_000 / UInt64(track.timescale), keyframe: s.isSync))
                }
            }
            if kinds.contains("audio"), let (track, _) = r.tracks["audio"] {
                // Whole packets, stamped by the samples given so far: from the packet that starts
                // nearest to where the sound given so far ends (on this piece's time line), to the
                // one that ends nearest to the piece's end. Behind the pictures' lead, as they are.
                let rate = Double(track.timescale), samples = track.samples
                // The piece before gave less sound than pictures: silence up to this one's start.
                if i > 0 {
                    try silence.fill(to: time, after: &soundSamples, lead: lead, into: &audio, warnings: &warnings,
                                     piece: "piece \(i - 1) (\"\(pieces[i - 1].path)\")", at: "\(pieces[i - 1].location).path", node: node)
                }
                let from = start + (Double(soundSamples) / rate - time)
                let first = samples.indices.min { abs(track.seconds(samples[$0].presentationTime) - from) < abs(track.seconds(samples[$1].presentationTime) - from) } ?? 0
                let stop = time + (end - start)
                // This piece's sound begins later than its pictures (none at all: at its end).
                let begins = samples.isEmpty ? end : min(end, track.seconds(samples[first].presentationTime))
                try silence.fill(to: time + (begins - start), after: &soundSamples, lead: lead, into: &audio, warnings: &warnings,
                                 piece: "piece \(i) (\"\(piece.path)\")", at: "\(piece.location).path", node: node)
                for s in samples[first...] {
                    let now = Double(soundSamples) / rate
                    if now + Double(s.duration) / rate / 2 > stop { break }
                    let pts = Self.nanoseconds(now + lead)
                    audio.append(Sample(file: fileOf[i], offset: s.offset, size: Int(s.size), pts: pts, dts: pts,
                                        duration: UInt64(s.duration) * 1_000_000_000 / UInt64(track.timescale), keyframe: true))
                    soundSamples += Int64(s.duration)
                }
            }
            time += end - start
        }
        var streams: [Stream] = []
        for kind in kinds {
            guard let (_, description) = read[0].tracks[kind] else { continue }
            streams.append(Stream(kind: kind, description: description, caps: Self.caps(description), samples: kind == "video" ? video : audio))
        }
        self.files = files
        self.names = names
        self.streams = streams
        duration = time
        self.warnings = warnings
        self.silence = silence.frame?.bytes ?? []
    }

    /// Sample `n` of `stream`, its bytes read from its piece's file; `.end` after the last.
    func sample(_ n: Int, of stream: Stream) -> SampleSource.Next {
        guard n < stream.samples.count else { return .end }
        return read(stream.samples[n])
    }

    /// Sample `s`, read from its file (or the silent frame), with its times and flags.
    func read(_ s: Sample) -> SampleSource.Next {
        var buffer = SampleBuffer(format: nil, byteCount: s.size)
        let read: Int
        do {
            read = try buffer.withUnsafeMutableBytes { (raw) throws(ContainerError) -> Int in
                if s.file == Self.silenceFile {
                    raw.copyBytes(from: silence.prefix(raw.count))
                    return min(raw.count, silence.count)
                }
                return try files[s.file].read(at: s.offset, into: raw)
            }
        } catch {
            return .failed("cannot read \"\(names[s.file])\": \(error.reason)")
        }
        guard read == s.size else {
            return .failed("\"\(names[s.file])\" ends at byte \(s.offset + UInt64(read)), inside its samples: it was cut while it was read")
        }
        buffer.presentationTime = MediaTime(value: Int64(s.pts), timescale: 1_000_000_000)
        buffer.decodeTime = MediaTime(value: Int64(s.dts), timescale: 1_000_000_000)
        buffer.duration = MediaTime(value: Int64(s.duration), timescale: 1_000_000_000)
        buffer.flags = s.keyframe ? [.keyframe] : []
        return .sample(buffer)
    }

    /// The caps of a stream of `description`'s samples (``MP4StoredTrack/caps(_:)``).
    static func caps(_ description: SampleDescription) -> String { MP4StoredTrack.caps(description) }

    /// The sample entry `sink.mp4` writes for a stream of `description`'s samples: what it makes
    /// of ``caps(_:)`` (H.264 and HEVC with their size and parameter sets, AAC with its
    /// AudioSpecificConfig); nil when the description does not say what that needs.
    static func trackFormat(_ description: SampleDescription) -> MP4TrackFormat? { MP4StoredTrack.format(description) }

    /// Seconds as nanoseconds, 0 below 0; a time past what 64 bits count saturates (the
    /// pieces' timing is bounded when read, HLSSegmentPlan.Track, so none is).
    static func nanoseconds(_ seconds: Double) -> UInt64 { UInt64(saturating: seconds * 1e9) }

    /// Seconds as a message says them: to the millisecond.
    static func seconds(_ s: Double) -> String { String(Double((s * 1000).rounded()) / 1000) }
}
