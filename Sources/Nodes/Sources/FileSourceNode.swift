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

    public init(context: NodeContext) throws {
        self.context = context
        path = try context.parameters.value(Self.path)
    }

    public var mediaDescription: String? { "\"\(path)\"" }

    public func prepare() throws {
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

    public func build(in bin: BinBuilder) throws {
        let src = try bin.make("filesrc", name: "filesrc", ["location": path, "blocksize": 65_536])
        try bin.expose(output: "out", src)
    }
}
