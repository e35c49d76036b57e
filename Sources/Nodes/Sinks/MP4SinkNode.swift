import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `sink.mp4`: writes MP4, M4A or MOV, like `AVAssetWriter`.
///
/// Status runs unknown → writing → completed | failed | cancelled. Without fragments the file is
/// written beside the target under a temporary name and renamed when complete, so an existing
/// file is only ever replaced by a complete one and a failed run leaves nothing under the target
/// name. With `fragmentInterval` the file is written under its name from the start, so a crash
/// keeps every fragment written (`movieFragmentInterval`).
///
/// The file is written through a descriptor (`OutputFile`): `mp4mux ! fdsink`, never a
/// `filesink` given a name, and with `faststart` the muxer's media waits in a file with no name
/// in the output's folder (not `qtmux-*` in `$TMPDIR`): a full output disk shows as it fills,
/// and nothing is left behind whatever ends the run, `kill -9` included.
///
/// A finished file's index then gets what GStreamer's writer leaves out (`MP4Index`): an AAC
/// track's edit list from its measured encoder delay (gapless: decoders give back the input's
/// samples, aligned) and a video track's display matrix from its orientation tag; and the cover,
/// location and chapters the muxer does not write (`MP4ExtraTags`).
///
/// FLAC (MP4 and M4A; not MOV, which xiph's mapping leaves out and ffmpeg refuses; not
/// fragmented) is written as ffmpeg writes it: one frame a sample, the media clock at the
/// stream's rate, a `fLaC` sample entry whose `dfLa` holds the stream's metadata blocks,
/// STREAMINFO first, with its sample count and MD5 as the encoder rewrote them at the end, and an
/// edit list exact to the sample. No GStreamer MP4 muxer takes FLAC (1.22 to 1.26), and there
/// were two ways: write the whole file from the samples with GraphKit's container library, or
/// give the muxer the frames and put the sample entry right in the index, as for Opus's `dOps`.
/// The second is the one taken: the muxer treats an audio track's packets as opaque bytes with
/// times (its Opus path parses nothing, 1.22 to GStreamer's main branch), so `gkmp4flac` passes
/// the frames under Opus caps of the stream's rate and channels and keeps the header, and the
/// finished index gets the real entry (`MP4FLAC`). Everything else the muxer does stays one path
/// for every codec: interleaving with video, `faststart`, tags, `fileLengthLimit`; a writer of
/// its own would have had to redo each of them, and, with video, to copy the muxer's media into
/// a second file. The price is a dependence on the muxer not reading Opus packets, which the
/// tests check on 1.22 and 1.26 (bit-exact decode, exact sample count, with and without video).
///
/// Example:
/// ```json
/// "file": { "type": "sink.mp4", "params": { "path": "out/capture.m4a", "faststart": true } }
/// ```
public final class MP4SinkNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.mp4",
        category: .sink,
        summary: "MP4 / M4A / MOV writer",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac, .audio(.opus), .audio(.alac), .audio(.flac)]), presence: .optional,
                           help: "AAC, Opus, ALAC or FLAC audio track (FLAC in MP4 and M4A, not MOV)"),
            PortDescriptor("video", FormatSet([.h264, .video(.hevc), .video(.vp9), .video(.av1)]), presence: .optional,
                           help: "H.264, HEVC (hvc1), VP9 or AV1 video track"),
        ],
        parameters: [path, container, faststart, fragmentInterval, videoTransform, fileLengthLimit] + tags.map(\.parameter) + [cover, location, chapters],
        requiresAnInput: true,
        example: #"{ "type": "sink.mp4", "params": { "path": "out/capture.m4a", "faststart": true } }"#
    )

    public static let path = RequiredParameter<String>("path", format: .path, writesFile: true, help: "the file to write; missing folders are created")
    public enum Container: String, ParameterEnum { case auto, mp4, m4a, mov }
    public static let container = Parameter<Container>("container", default: .auto,
                                                help: "file type; auto takes it from the extension (.mov is QuickTime, anything else MP4)")
    public static let faststart = Parameter<Bool>("faststart", default: true, help: "index (moov) before the media data, for progressive playback")
    public static let fragmentInterval = Parameter<Double>("fragmentInterval", 0...3600, default: 0,
                                                    help: "seconds per fragment; 0 writes one unfragmented file")
    public static let fileLengthLimit = OptionalParameter<Int>(
        "fileLengthLimit", 4096...Int.max,
        help: "the most bytes the file may have (AVAssetExportSession.fileLengthLimit, ffmpeg's -fs): the file ends, complete, with the samples before the one that would pass it")
    /// What a file with a `fileLengthLimit` keeps for its boxes besides the samples and their
    /// index entries (ftyp, the movie and track headers, sample descriptions, tags): an upper
    /// bound, counted before the first sample.
    public static let boxReserve = 16 << 10

    public static let videoTransform = OptionalParameter<String>(
        "videoTransform", format: .pattern(#"^\s*[-+0-9.eE]+([ ,]+[-+0-9.eE]+){5}\s*$"#, "six numbers \"a b c d tx ty\", such as \"0 1 -1 0 0 0\""),
        help: "the video track's display matrix (AVAssetWriterInput.transform), \"a b c d tx ty\": \"0 1 -1 0 0 0\" shows it turned 90° clockwise; without it, the video's orientation tag, if any")

    public static let title = OptionalParameter<String>("title", help: "the file's title tag (©nam)")
    public static let artist = OptionalParameter<String>("artist", help: "the artist tag (©ART)")
    public static let album = OptionalParameter<String>("album", help: "the album tag (©alb)")
    public static let albumArtist = OptionalParameter<String>("albumArtist", help: "the album artist tag (aART)")
    public static let genre = OptionalParameter<String>("genre", help: "the genre tag (©gen)")
    public static let comment = OptionalParameter<String>("comment", help: "the comment tag (©cmt)")
    public static let encoder = OptionalParameter<String>("encoder", help: "the software that made the file (©too), as ffmpeg writes its own name")
    public static let date = OptionalParameter<String>(
        "date", format: .pattern(#"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[-+][0-9]{2}:?[0-9]{2})?)?)?)?$"#,
                                 "an ISO 8601 date, such as \"2024-05-01\" or \"2024-05-01T12:00:00Z\""),
        help: "the date tag (©day), ISO 8601, written as given")

    public static let cover = OptionalParameter<String>(
        "cover", format: .path, help: "a JPEG or PNG file: the cover picture (covr), as iTunes and AVFoundation write it")
    public static let location = OptionalParameter<String>(
        "location", format: .pattern(#"^[-+][0-9]{1,2}(\.[0-9]+)?[-+][0-9]{1,3}(\.[0-9]+)?([-+][0-9]+(\.[0-9]+)?)?/?$"#,
                                     "an ISO 6709 point, such as \"+48.8583+002.2945/\""),
        help: "where it was recorded (©xyz), ISO 6709: \"+48.8583+002.2945/\"")
    public static let chapters = OptionalParameter<String>(
        "chapters", format: .pattern(#"^\s*[0-9]+(\.[0-9]+)?[ \t]+[^\n]*(\n\s*[0-9]+(\.[0-9]+)?[ \t]+[^\n]*)*\s*$"#,
                                     "one chapter a line, its start in seconds and its title: \"0 Intro\\n62.5 Part two\""),
        help: "chapters (Nero chpl, as ffmpeg writes them), one a line: the start in seconds, a space, the title")

    /// The file's own tags (`moov/udta/meta/ilst`, as iTunes and AVFoundation write them): each
    /// parameter, named as `MediaMetadata`'s field, and the GStreamer tag the muxer takes it as.
    static let tags: [(parameter: OptionalParameter<String>, tag: String)] = [
        (title, "title"), (artist, "artist"), (album, "album"), (albumArtist, "album-artist"),
        (genre, "genre"), (comment, "comment"), (date, "date"), (encoder, "encoder"),
    ]

    let context: NodeContext
    let path: String
    let fragmentInterval: Double
    let file: OutputFile
    /// Set while the graph is built, then read and written from the run's threads.
    private struct State {
        var sink: Element?
        var mux: Element?
        /// The audio input's gkmp4flac: what it kept of a FLAC stream's header.
        var flac: Element?
        /// An input's codec the file cannot hold failed the run: nothing written stays, even in
        /// a fragmented file (written under its name), which keeps what it wrote otherwise.
        var refusedInput = false
        var faststart = false
        var status: OutputReport.Status = .unknown
        var indexEdits = MP4Index.Edits()
        /// The cover, place and chapters, written into the finished index.
        var extraTags = MP4ExtraTags()
    }
    private let state = Guarded(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        path = try context.parameters.value(Self.path)
        fragmentInterval = context.parameters[Self.fragmentInterval]
        if let text = context.parameters[Self.videoTransform] {
            guard let m = DisplayMatrix(text: text), m.isStorable else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "videoTransform"),
                                 "\"\(text)\" is not a display matrix a file holds: write six numbers \"a b c d tx ty\", each within ±32768",
                                 node: context.id)
            }
            guard fragmentInterval == 0 else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "videoTransform"),
                                 "a display matrix is written into the index once the file is finished, and a fragmented file (fragmentInterval) is written as it goes: leave out one of the two",
                                 node: context.id)
            }
            guard context.connectedInputs.contains("video") else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "videoTransform"),
                                 "a display matrix is for a video track, and the video input is not connected", node: context.id)
            }
            state.withLock { $0.indexEdits.videoMatrix = m }
        }
        file = OutputFile(path: path, location: context.location(parameter: "path"), node: context.id)
        let extra = try Self.extraTags(context)
        if !extra.isEmpty, fragmentInterval != 0 {
            throw GraphError(.invalidGraph, at: context.location(parameter: "fragmentInterval"),
                             "a cover, location or chapters are written into the index once the file is finished, and a fragmented file (fragmentInterval) is written as it goes: leave out one of the two",
                             node: context.id)
        }
        state.withLock { $0.extraTags = extra }
    }

    /// The most bytes a cover may have: 16 MB.
    static let largestCover = 16 << 20

    /// The `cover`, `location` and `chapters` parameters, read and checked: a cover that cannot
    /// be read (66), or is not a JPEG or PNG by its first bytes (65), is refused naming the
    /// parameter and the file.
    static func extraTags(_ context: NodeContext) throws(GraphError) -> MP4ExtraTags {
        var extra = MP4ExtraTags(location: context.parameters[location])
        if let text = context.parameters[chapters] {
            extra.chapters = text.split(separator: "\n").compactMap { line in
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                guard let gap = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" }), let start = Double(trimmed[..<gap]) else { return nil }
                return MP4ExtraTags.Chapter(start: start, title: String(trimmed[gap...].drop { $0 == " " || $0 == "\t" }))
            }
        }
        if let picture = context.parameters[cover] {
            let at = context.location(parameter: "cover")
            guard let bytes = FileBytes(path: picture) else {
                throw GraphError(.inputUnreadable, at: at, "cannot read the cover \"\(picture)\": it cannot be opened as a file", node: context.id)
            }
            guard bytes.count <= UInt64(largestCover) else {
                throw GraphError(.invalidGraph, at: at, "the cover \"\(picture)\" has \(bytes.count) bytes, more than a cover may (16 MB)", node: context.id)
            }
            do throws(ContainerError) { extra.artwork = try bytes.read(at: 0, count: Int(bytes.count)) } catch {
                throw GraphError(.inputUnreadable, at: at, "cannot read the cover \"\(picture)\": \(error.reason)", node: context.id)
            }
        }
        if let problem = extra.problem {
            let parameter = extra.artwork.map { MP4ExtraTags.pictureType($0) == nil } == true ? "cover" : "chapters"
            throw GraphError(.invalidGraph, at: context.location(parameter: parameter),
                             parameter == "cover" ? "\"\(context.parameters[cover] ?? "")\" cannot be the cover: \(problem)" : problem, node: context.id)
        }
        return extra
    }

    /// Adds a cover, a location or chapters (the export session's and writer's metadata) to
    /// what the finished index gets; call it before the run starts. Throws, naming the tag, for
    /// a cover that is not a JPEG or PNG picture (the run then writes nothing).
    package func addExtraTags(_ more: MP4ExtraTags) throws(GraphError) {
        if let problem = more.problem {
            let parameter = more.artwork.map { MP4ExtraTags.pictureType($0) == nil } == true ? "cover" : more.location != nil && more.chapters.isEmpty ? "location" : "chapters"
            throw GraphError(.usage, at: context.location(parameter: parameter), problem, node: context.id)
        }
        state.withLock { s in
            if let artwork = more.artwork { s.extraTags.artwork = artwork }
            if let location = more.location { s.extraTags.location = location }
            if !more.chapters.isEmpty { s.extraTags.chapters = more.chapters }
        }
    }

    var writesInPlace: Bool { fragmentInterval > 0 }

    public var output: OutputReport? {
        OutputReport(node: context.id, path: path, status: state.withLock { $0.status })
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let container = context.parameters[Self.container]
        let fileExtension = file.target.pathExtension.lowercased()
        let isMov = container == .mov || (container == .auto && fileExtension == "mov")
        if container == .m4a || (container == .auto && fileExtension == "m4a") {
            if context.connectedInputs.contains("video") {
                if container == .m4a {
                    throw GraphError(.invalidGraph, at: context.location(parameter: "container"),
                                     "an M4A file holds sound only, and the video input is connected: write an MP4 (container mp4) or leave the video out",
                                     node: context.id)
                }
            } else {
                state.withLock { $0.indexEdits.majorBrand = "M4A " }
            }
        }
        let mux = try bin.make(isMov ? "qtmux" : "mp4mux", name: "mux")
        if writesInPlace {
            try mux.set("fragment-duration", Int(fragmentInterval * 1000))
        } else {
            let faststart = context.parameters[Self.faststart]
            state.withLock { $0.faststart = faststart }
            try mux.set("faststart", faststart)
        }
        // The descriptor is set when the file is made (prepare), before the pipeline starts.
        for (parameter, tag) in Self.tags {
            guard var value = context.parameters[parameter], !value.isEmpty else { continue }
            if tag == "date" {
                // The muxer takes a day (a GDate) and writes it unpadded: it makes the item, and
                // the index edit writes the date as given.
                state.withLock { $0.indexEdits.dateTag = value }
                value = String((value.prefix(10) + "-01-01".suffix(max(0, 10 - min(value.count, 10)))).prefix(10))
            }
            try mux.setTag(tag, value)
        }
        let sink = try bin.make("fdsink", name: "fdsink")
        try bin.link(mux, sink)
        state.withLock { $0.mux = mux; $0.sink = sink }
        // A length limit: every input's samples count against one budget, each with what its
        // index entries may take (an upper bound: 32 bytes a sample, the tables' most), and the
        // index's fixed part and tags; the first sample that would pass it ends every input.
        let budget = context.parameters[Self.fileLengthLimit].map { ByteBudget(limit: Int64($0)) }
        for port in ["audio", "video"] where context.connectedInputs.contains(port) {
            // GStreamer's muxer writes samples out of time order into an index no player reads
            // right (1.22 and 1.26 alike); such a stream fails the run at gkrisingtimes instead
            // of making a file that looks complete.
            let rising = try bin.make("gkrisingtimes", ["input": port])
            if let budget { rising.passWhile { budget.admit($0) } }
            try bin.link(rising, pad: "src", to: mux, pad: "\(port)_%u")
            if port == "audio" {
                // FLAC reaches the muxer, which writes none, under a stand-in sample entry, and
                // its header stays in gkmp4flac for the real one (see below); the rest passes.
                let flac = try bin.make("gkmp4flac")
                try bin.link(flac, rising)
                try bin.expose(input: port, flac)
                state.withLock { $0.flac = flac }
                flac.onInputFormat { [self] format in
                    switch format {
                    case .audio(.flac, _, _):
                        if let problem = Self.refusal(ofFLACIn: isMov ? .mov : .mp4, fragmented: writesInPlace) {
                            state.withLock { $0.refusedInput = true }
                            flac.postError("\(problem) (\(path))")
                        }
                    case .audio(.opus, _, _):
                        // GStreamer 1.22's muxer writes Opus's header (dOps) little-endian: put
                        // right in the finished index (OpusHeaderRepair).
                        state.withLock { $0.indexEdits.repairsOpusHeader = true }
                    default:
                        break
                    }
                }
            } else {
                try bin.expose(input: port, rising)
            }
            bin.onStreamFacts(input: port) { [self] fact in
                state.withLock { state in
                    switch fact {
                    case .encoderDelay(let delay) where port == "audio": state.indexEdits.audioDelay = delay
                    case .orientation(let orientation) where port == "video": state.indexEdits.orientation = orientation
                    default: break
                    }
                }
            }
        }
    }

    public func prepare() throws(GraphError) {
        try file.prepare(inPlace: writesInPlace)
        let (sink, mux, faststart) = state.withLock { ($0.sink, $0.mux, $0.faststart) }
        do throws(GraphError) {
            try sink?.set("fd", file.descriptor)
            // mp4mux opens its faststart file by name, with fopen: the name given is one that
            // only this process can resolve, to the unnamed file.
            if faststart { try mux?.set("faststart-file", try file.scratchFile()) }
        } catch {
            file.discard()
            throw error
        }
        state.withLock { $0.status = .writing }
    }

    /// Ends the file's presentation at `end` from its start (`AVAssetWriter.endSession`): each
    /// track's edit list stops there. Call it before the run finishes. A fragmented file,
    /// written as it goes, is not cut.
    public func endPresentation(at end: MediaTime) {
        guard end.isFinite, end.value >= 0, end.timescale > 0 else { return }
        state.withLock { $0.indexEdits.presentationEnd = (UInt64(end.value), UInt64(end.timescale)) }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        try MuxedFile.end(writing: state.withLock { $0.status == .writing }, setting: { status in state.withLock { $0.status = status } }) { () throws(GraphError) in
            switch outcome {
            case .completed, .stopped:
                if !writesInPlace {
                    try completeIndex()
                    try file.commit()
                }
                return .completed
            case .failed:
                // A fragmented recording keeps what it wrote: surviving failure is its purpose
                // (but not a file refused for what it was given, nor an empty one: a source that
                // failed before its first sample, such as a camera that refused the password).
                if !writesInPlace { file.discard() } else if state.withLock({ $0.refusedInput }) || file.isEmpty { file.removeTarget() }
                return .failed
            case .cancelled:
                if writesInPlace { file.removeTarget() } else { file.discard() }
                return .cancelled
            }
        }
    }

    /// Why a FLAC stream cannot go into a file of `container` (`fragmented` or not): FLAC is
    /// written in MP4 and M4A files that are not fragmented; nil when it can.
    public static func refusal(ofFLACIn container: Container, fragmented: Bool) -> String? {
        if container == .mov {
            // xiph's mapping is ISO-BMFF's; QuickTime is out of its scope, and ffmpeg refuses it too.
            return "FLAC is written in MP4 and M4A files, not QuickTime (.mov): write .mp4 or .m4a, or put FLAC in sink.mkv"
        }
        if fragmented {
            return "FLAC's sample entry is written into the index once the file is finished, and a fragmented file (fragmentInterval) is written as it goes: leave out fragmentInterval for FLAC"
        }
        return nil
    }

    /// The FLAC stream's header gkmp4flac kept (GStreamer writes it as hex), when the audio was FLAC.
    private func flacHeader() throws(GraphError) -> FLACStreamHeader? {
        guard let text = state.withLock({ $0.flac })?.property("header"), !text.isEmpty, text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var digits = text.utf8.makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let h = Self.hexValue(high), let l = Self.hexValue(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        do { return try FLACStreamHeader(native: bytes) } catch {
            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.mp4)", "the FLAC stream's header cannot be read: \(error.reason)", node: context.id)
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Writes the edit list and display matrix into the finished temporary file.
    private func completeIndex() throws(GraphError) {
        let header: FLACStreamHeader?
        do throws(GraphError) { header = try flacHeader() } catch {
            file.discard()
            throw error
        }
        if let header { state.withLock { $0.indexEdits.flacHeader = header } }
        let (edits, extra) = state.withLock { ($0.indexEdits, $0.extraTags) }
        do {
            try MP4Index.apply(edits, toFileDescriptor: file.descriptor)
            try extra.apply(toFileDescriptor: file.descriptor)
        } catch {
            file.discard()
            throw GraphError(.outputUnwritable, at: file.location,
                             "cannot finish \"\(path)\": writing its index failed: \(error.reason)", node: context.id)
        }
    }
}

/// The bytes a file with a length limit may still take: its samples so far, an upper bound on
/// the index entries each adds (32 bytes: stsz, stts, ctts, stss and a chunk offset at most),
/// and the rest of the file's boxes (``MP4SinkNode/boxReserve``).
final class ByteBudget: Sendable {
    let limit: Int64
    /// Bytes counted, and whether a sample was refused (then every input ends: none goes on
    /// with smaller samples past the other's end).
    private let state = Guarded<(used: Int64, full: Bool)>((Int64(MP4SinkNode.boxReserve), false))
    init(limit: Int64) { self.limit = limit }

    /// Whether a sample of `size` bytes fits; if so, it is counted.
    func admit(_ size: Int) -> Bool {
        state.withLock { s in
            let next = s.used + Int64(size) + 32
            guard !s.full, next <= limit else {
                s.full = true
                return false
            }
            s.used = next
            return true
        }
    }
}
