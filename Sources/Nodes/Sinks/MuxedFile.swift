import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// One file written by a GStreamer muxer, by the engine's rule for outputs (``OutputFile``):
/// `mux ! fdsink` into a temporary file beside the target, made exclusively and written through
/// its descriptor (never a `filesink` given a name), flushed to the disk (`fsync`) and renamed
/// over the target only once the run completed, so the target name holds a complete file or
/// nothing of this run's. A failed or cancelled run removes the temporary file; a symbolic link,
/// a pipe or a folder at the target is refused (73) when the run is prepared.
///
/// What `sink.mkv`, `sink.webm` and `sink.ogg` share (``MuxedFileNode``): each declares its
/// ports (what its container holds) and names its muxer, and the file does the rest. The video input goes
/// through `gkrisingtimes`: a stream whose times go back fails the run there rather than making
/// a file whose index no player reads right. A codec the container cannot hold is refused at
/// the edge when the graph loads, or by `demux` when a file's track turns out to be one.
package final class MuxedFile: Sendable {
    let node: String
    let path: String
    let file: OutputFile
    let connected: Set<String>
    /// The files the graph reads upstream, whose tags a Matroska file keeps.
    let filesUpstream: [String]
    private struct State {
        var sink: Element?
        var muxer = ""
        var status: OutputReport.Status = .unknown
    }
    private let state = Guarded(State())

    /// The file a node's `path` parameter names (`path`, when the node has read it already).
    init(context: NodeContext, path: String) {
        node = context.id
        self.path = path
        connected = context.connectedInputs
        filesUpstream = context.filesUpstream
        file = OutputFile(path: path, location: context.location(parameter: "path"), node: context.id)
    }

    convenience init(context: NodeContext, parameter: RequiredParameter<String>) throws(GraphError) {
        self.init(context: context, path: try context.parameters.value(parameter))
    }

    /// The `path` parameter of a node that writes one file of a container.
    static let pathParameter = RequiredParameter<String>("path", format: .path, writesFile: true, help: "the file to write; missing folders are created")

    package var output: OutputReport { OutputReport(node: node, path: path, status: state.withLock { $0.status }) }

    /// Ends a writer's run (``OutputFile``'s rule): nothing when it is not `writing` (it never
    /// started, or ended already); else `body` does what `outcome` asks and gives the output's
    /// final status, which is set (failed when `body` throws).
    static func end(writing: Bool, setting set: (OutputReport.Status) -> Void,
                    _ body: () throws(GraphError) -> OutputReport.Status) throws(GraphError) {
        guard writing else { return }
        do throws(GraphError) { set(try body()) } catch {
            set(.failed)
            throw error
        }
    }

    /// Makes `muxer` and links it to the file, and each connected input of `inputs` (port
    /// descriptors) to one of the muxer's request pads of the port's name (`audio_%u`, `video_%u`),
    /// or, for a writer of one stream (`wavenc`, a bare FLAC stream), to its one `sink` pad.
    package func build(in bin: BinBuilder, muxer: String, inputs: [PortDescriptor], oneStream: Bool = false) throws(GraphError) {
        let mux = try bin.make(muxer, name: "mux")
        let sink = try bin.make("fdsink", name: "fdsink")
        try bin.link(mux, sink)
        state.withLock { ($0.sink, $0.muxer) = (sink, muxer) }
        if Self.matroskaMuxers.contains(muxer) { keepSourceTags(in: mux) }
        for port in inputs where connected.contains(port.name) {
            // Video passes gkrisingtimes; audio goes to the muxer as it is: FLAC's header buffers
            // (STREAMINFO, comments) come first in the stream, all at time 0, and gkrisingtimes
            // refuses a time that repeats (it would have to pass buffers flagged as headers).
            if oneStream {
                try bin.expose(input: port.name, mux)
            } else if port.name == "video" {
                let rising = try bin.make("gkrisingtimes", ["input": port.name])
                try bin.link(rising, pad: "src", to: mux, pad: "\(port.name)_%u")
                try bin.expose(input: port.name, rising)
            } else {
                try bin.expose(input: port.name, requesting: "\(port.name)_%u", from: mux)
            }
        }
    }

    /// The muxers whose files ``MatroskaTags`` mends.
    static let matroskaMuxers: Set<String> = ["matroskamux", "webmmux"]

    /// The text tags and chapters of the file read upstream, as ``MediaMetadata`` reads them
    /// (MP4, MP3, FLAC, Ogg), given to the muxer: the demuxers of FLAC and Ogg send none of their
    /// tags downstream, and none sends chapters. What a demuxer does send is merged in where these have no value (the
    /// muxer's default merge keeps the setter's). A source's value GStreamer cannot take (a
    /// date that is not ISO 8601) is left out.
    private func keepSourceTags(in mux: Element) {
        guard let source = MediaMetadata.ofFirstReadable(filesUpstream) else { return }
        // The fields matroskamux writes (1.22's list has no album artist; its date is a day).
        for (field, tag) in [("title", "title"), ("artist", "artist"), ("album", "album"), ("genre", "genre"), ("comment", "comment")] {
            if let value = source.textField(field), !value.isEmpty { try? mux.setTag(tag, value) }
        }
        if let date = source.textField("date"), date.utf8.count >= 10, case let day = String(date.prefix(10)),
           day.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}/) != nil {
            try? mux.setTag("date", day)
        }
        // Its chapters, when it is the one file read (not the pieces of a join), with rising
        // starts: each ends as chapterSpans says (where it says, else where the next begins);
        // the last with no end stated has none (the file's end).
        guard filesUpstream.count == 1 else { return }
        var chapters: [(start: Double, end: Double?, title: String)] = []
        for (c, span) in zip(source.chapters, source.chapterSpans(until: .infinity))
        where chapters.count < MP4Movie.mostChapters && c.start.isFinite && c.start >= 0 && c.start > (chapters.last?.start ?? -1) {
            chapters.append((c.start, span.end.isFinite && span.end > c.start ? span.end : nil, c.title))
        }
        if !chapters.isEmpty { mux.setChapters(chapters) }
    }

    /// Makes the temporary file and gives its descriptor to `fdsink` (73 when it cannot be made).
    package func prepare() throws(GraphError) {
        try file.prepare()
        do throws(GraphError) {
            try state.withLock { $0.sink }?.set("fd", file.descriptor)
        } catch {
            file.discard()
            throw error
        }
        state.withLock { $0.status = .writing }
    }

    /// A completed (or stopped, so finalized) run: the muxer has seen the end of every input and
    /// written its last bytes; they are flushed to the disk and the file renamed over the target.
    /// A failed or cancelled one: the temporary file is removed.
    package func finish(_ outcome: RunStatus) throws(GraphError) {
        try Self.end(writing: state.withLock { $0.status == .writing }, setting: { status in state.withLock { $0.status = status } }) { () throws(GraphError) in
            switch outcome {
            case .completed, .stopped:
                // Matroska's tags as given, not as GStreamer's muxer serializes them, and no
                // chapter end of "none" written as a time.
                if Self.matroskaMuxers.contains(state.withLock({ $0.muxer })) {
                    do throws(ContainerError) {
                        try MatroskaTags.mendMuxersWriting(descriptor: file.descriptor)
                    } catch {
                        file.discard()
                        throw GraphError(.outputUnwritable, at: file.location, "cannot write \"\(path)\": \(error.reason)", node: node)
                    }
                }
                // Renamed only once on the disk: after a crash, the target holds the old file or
                // the whole new one, never a name over blocks not yet written.
                if fsync(file.descriptor) != 0 {
                    let reason = String(cString: strerror(errno))
                    file.discard()
                    throw GraphError(.outputUnwritable, at: file.location, "cannot write \"\(path)\": \(reason)", node: node)
                }
                try file.commit()
                return .completed
            case .failed:
                file.discard()
                return .failed
            case .cancelled:
                file.discard()
                return .cancelled
            }
        }
    }
}

/// A node that is one file written by a GStreamer muxer (``MuxedFile``): it names its muxer and
/// declares its ports; its output, build, preparation and end are the file's.
package protocol MuxedFileNode: ElementNode {
    /// The GStreamer muxer (`oggmux`, `webmmux`, `matroskamux`), or the writer of a file of one
    /// stream (`wavenc`).
    static var muxer: String { get }
    /// Whether the file holds one stream, taken on the muxer's one `sink` pad (default false:
    /// request pads, a stream each).
    static var oneStream: Bool { get }
    var file: MuxedFile { get }
}

extension MuxedFileNode {
    package static var oneStream: Bool { false }
    public var output: OutputReport? { file.output }
    public func build(in bin: BinBuilder) throws(GraphError) {
        try file.build(in: bin, muxer: Self.muxer, inputs: Self.descriptor.inputs, oneStream: Self.oneStream)
    }
    public func prepare() throws(GraphError) { try file.prepare() }
    public func finish(_ outcome: RunStatus) throws(GraphError) { try file.finish(outcome) }
}
