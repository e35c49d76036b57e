import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Synchronization

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

    public static let path = RequiredParameter<String>("path", format: .path, help: "the file to read, relative to the current folder")

    let context: NodeContext
    let path: String
    /// The file, open for fdsrc when it is a WAV or AIFF file (see `build`); -1 otherwise.
    private let descriptor = Mutex<Int32>(-1)

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
        if Self.startsWith(path, Self.wave64) {
            // GStreamer 1.22 reads Wave64 only through libsndfile's sfdec, which misreads float
            // samples, pads the count to its block and can stall: refused, with the way out.
            throw GraphError(.missingPlugin, at: at,
                             "\"\(path)\" is a Sony Wave64 file, which no installed GStreamer plugin reads correctly; "
                             + "convert it to WAV or RF64 first (ffmpeg -i in.w64 -rf64 auto out.wav)", node: context.id)
        }
    }

    /// Wave64's first GUID (`riff` …) and its `wave` one's first bytes, at 0 and 24.
    static let wave64: [(offset: Int, bytes: [UInt8])] = [(0, Array("riff".utf8) + [0x2E, 0x91, 0xCF, 0x11]), (24, Array("wave".utf8))]

    /// Whether the file holds `marks` at their offsets.
    static func startsWith(_ path: String, _ marks: [(offset: Int, bytes: [UInt8])]) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return marks.allSatisfy { mark in
            var bytes = [UInt8](repeating: 0, count: mark.bytes.count)
            return bytes.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, mark.bytes.count, off_t(mark.offset)) }) == mark.bytes.count
                && bytes == mark.bytes
        }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        if Self.isWAV(path) || Self.isAIFF(path) {
            // WAV and AIFF files are read in push mode. wavparse (GStreamer 1.22) pulling a file
            // whose data chunk has an odd length and ends the file (8-bit or 24-bit mono with an
            // odd sample count) gives no sample and ends cleanly; aiffparse pulling starts
            // pushing before decodebin has linked it, and failed ("not-linked") or, without
            // GraphKit's kept errors, stalled in about 1 run in 40 under load. Pushed, both read
            // every sample. fdsrc only pushes (a queue after filesrc would force push mode too,
            // but stalled about once in 300 runs under load, in the queue's handling of a
            // start-up query). Other files are pulled: demuxers read in blocks and seek.
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw GraphError(.inputUnreadable, at: context.location(parameter: "path"),
                                 "cannot read \"\(path)\": \(String(cString: strerror(errno)))", node: context.id)
            }
            descriptor.withLock { $0 = fd }
            let src = try bin.make("fdsrc", name: "fdsrc", ["fd": fd, "blocksize": 65_536])
            try bin.expose(output: "out", src)
        } else {
            let src = try bin.make("filesrc", name: "filesrc", ["location": path])
            try bin.expose(output: "out", src)
        }
    }

    /// The pipeline has stopped: fdsrc reads no more.
    public func finish(_ outcome: RunStatus) throws(GraphError) { closeDescriptor() }

    deinit { closeDescriptor() }

    private func closeDescriptor() {
        descriptor.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    /// Whether the file starts as an AIFF or AIFF-C file does (FORM, then AIFF or AIFC).
    static func isAIFF(_ path: String) -> Bool {
        startsWith(path, [(0, Array("FORM".utf8))]) && (startsWith(path, [(8, Array("AIFF".utf8))]) || startsWith(path, [(8, Array("AIFC".utf8))]))
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
