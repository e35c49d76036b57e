import FoundationEssentials
import Glibc
import GraphKit

/// `source.file`: the bytes of a media file, for `decode`.
///
/// Example:
/// ```json
/// "src": { "type": "source.file", "params": { "path": "in.wav" } }
/// ```
public final class FileSourceNode: ElementNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "source.file",
        category: .source,
        summary: "Reads a media file",
        outputs: [PortDescriptor("out", .container, help: "the file's bytes, for decode")],
        parameters: [path],
        example: #"{ "type": "source.file", "params": { "path": "in.wav" } }"#
    )

    public static let path = RequiredParameter<String>("path", help: "the file to read, relative to the current folder")

    let context: NodeContext
    let path: String

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        path = try context.parameters.value(Self.path)
    }

    public var mediaDescription: String? { "\"\(path)\"" }

    public func prepare() throws(GraphError) {
        var isDirectory = false
        let at = context.location(parameter: "path")
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw GraphError(.inputUnreadable, at: at, "cannot read \"\(path)\": no such file", node: context.id)
        }
        guard !isDirectory else {
            throw GraphError(.inputUnreadable, at: at, "cannot read \"\(path)\": it is a folder", node: context.id)
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw GraphError(.inputUnreadable, at: at, "cannot read \"\(path)\": permission denied", node: context.id)
        }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let src = try bin.make("filesrc", name: "filesrc", ["location": path, "blocksize": 65_536])
        if Self.isWAV(path) {
            // A WAV file is read in push mode, through a queue: wavparse (GStreamer 1.22)
            // pulling a file whose data chunk has an odd length and ends the file (8-bit or
            // 24-bit mono with an odd sample count) gives no sample and ends cleanly; pushed,
            // it reads them all. Other files are pulled: demuxers read in blocks and seek.
            let queue = try bin.make("queue", name: "push", ["max-size-buffers": 8, "max-size-bytes": 0, "max-size-time": 0])
            try bin.link(src, queue)
            try bin.expose(output: "out", queue)
        } else {
            try bin.expose(output: "out", src)
        }
    }

    /// Whether the file starts as a WAV file does (RIFF, RF64 or BW64, then WAVE).
    static func isWAV(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return false }  // prepare() reports why
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 12)
        guard header.withUnsafeMutableBytes({ read(fd, $0.baseAddress, 12) }) == 12 else { return false }
        return ["RIFF", "RF64", "BW64"].contains { header[0..<4].elementsEqual($0.utf8) } && header[8..<12].elementsEqual("WAVE".utf8)
    }
}
