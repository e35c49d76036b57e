import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Synchronization

/// `source.file`: the bytes of a media file, for `decode`.
///
/// The file is opened once, without blocking (a named pipe waits for its writer in poll(2),
/// which stopping the run interrupts), and read through that descriptor. When the run ends, the
/// engine compares what was decoded with the length the file states (``statedDuration``) and
/// looks for a change to the file while it was read (``changeSinceOpened()``): either is a
/// warning naming both figures, as a short output would otherwise pass unnoticed.
///
/// Example:
/// ```json
/// "src": { "type": "source.file", "params": { "path": "in.wav" } }
/// ```
public final class FileSourceNode: ElementNode, ReadsFile, @unchecked Sendable {
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
    /// The file, opened once when the node is built and read through this descriptor (fdsrc,
    /// or filesrc given `/proc/self/fd/N`), never reopened by name; nil before, or when it
    /// could not be opened (`problem` says why, and prepare() throws it).
    private let opened = Mutex<Opened?>(nil)
    private var problem: String?

    struct Opened {
        var fd: Int32
        /// A regular file, and what it was when opened (to see a change while it is read).
        var regular: Bool
        var size: Int64
        var modified: timespec
        /// The length its header states, when it states one exactly (a WAV file's data chunk).
        var statedDuration: MediaTime?
    }

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        path = try context.parameters.value(Self.path)
    }

    public var mediaDescription: String? { "\"\(path)\"" }

    public var statedDuration: MediaTime? { opened.withLock { $0?.statedDuration } }

    /// The length the file states is also what this source will produce: the progress line's total.
    public var expectedDuration: MediaTime? { statedDuration }

    public func prepare() throws(GraphError) {
        let at = context.location(parameter: "path")
        if let problem {
            throw GraphError(.inputUnreadable, at: at, "cannot read \"\(path)\": \(problem)", node: context.id)
        }
        if let fd = opened.withLock({ $0?.fd }), Self.startsWith(fd, Self.wave64) {
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
    static func startsWith(_ fd: Int32, _ marks: [(offset: Int, bytes: [UInt8])]) -> Bool {
        marks.allSatisfy { mark in
            read(fd, mark.bytes.count, at: mark.offset) == mark.bytes
        }
    }

    static func read(_ fd: Int32, _ count: Int, at offset: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return n == count ? bytes : nil
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        // Opened without blocking (a named pipe with no writer yet would block open(2), and with
        // it every signal's handling); the checks wait for prepare().
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        var info = stat()
        if fd < 0 {
            problem = errno == ENOENT ? "no such file" : Self.lowercasedFirst(String(cString: strerror(errno)))
        } else if fstat(fd, &info) != 0 || info.st_mode & S_IFMT == S_IFDIR {
            problem = "it is a folder"
            close(fd)
        } else {
            let regular = info.st_mode & S_IFMT == S_IFREG
            // A pipe is read as it comes: reads wait (poll, which stopping interrupts) for data.
            if !regular { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) }
            opened.withLock {
                $0 = Opened(fd: fd, regular: regular, size: Int64(info.st_size), modified: info.st_mtim,
                            statedDuration: regular ? Self.waveDuration(fd) : nil)
            }
            if regular && !Self.isWAV(fd) && !Self.isAIFF(fd) {
                // Other files are pulled: demuxers read in blocks and seek. filesrc opens a
                // name, given one that leads to this very file.
                let reopen = "/proc/self/fd/\(fd)"
                let src = try bin.make("filesrc", name: "filesrc", ["location": access(reopen, R_OK) == 0 ? reopen : path])
                try bin.expose(output: "out", src)
                return
            }
        }
        // WAV and AIFF files are read in push mode. wavparse (GStreamer 1.22) pulling a file
        // whose data chunk has an odd length and ends the file (8-bit or 24-bit mono with an
        // odd sample count) gives no sample and ends cleanly; aiffparse pulling starts
        // pushing before decodebin has linked it, and failed ("not-linked") or, without
        // GraphKit's kept errors, stalled in about 1 run in 40 under load. Pushed, both read
        // every sample. fdsrc only pushes (a queue after filesrc would force push mode too,
        // but stalled about once in 300 runs under load, in the queue's handling of a
        // start-up query). A pipe is pushed too, as it comes.
        let src = try bin.make("fdsrc", name: "fdsrc", ["blocksize": 65_536])
        if let fd = opened.withLock({ $0?.fd }) { try src.set("fd", fd) }
        try bin.expose(output: "out", src)
    }

    /// The pipeline has stopped: fdsrc reads no more.
    public func finish(_ outcome: RunStatus) throws(GraphError) { closeDescriptor() }

    deinit { closeDescriptor() }

    private func closeDescriptor() {
        opened.withLock { o in
            if let fd = o?.fd { close(fd) }
            o = nil
        }
    }

    /// How the file changed since it was opened ("was 176,444 bytes when the run started, is
    /// 40,000 now"), or nil: a file cut or rewritten in place while it was read.
    public func changeSinceOpened() -> String? {
        opened.withLock { o in
            guard let o, o.regular else { return nil }
            var now = stat()
            guard fstat(o.fd, &now) == 0 else { return nil }
            if Int64(now.st_size) < o.size { return "it was \(o.size) bytes when the run started and is \(now.st_size) bytes now" }
            if now.st_mtim.tv_sec != o.modified.tv_sec || now.st_mtim.tv_nsec != o.modified.tv_nsec {
                return "it was written to while the run read it"
            }
            return nil
        }
    }

    /// Whether the file starts as an AIFF or AIFF-C file does (FORM, then AIFF or AIFC).
    static func isAIFF(_ fd: Int32) -> Bool {
        startsWith(fd, [(0, Array("FORM".utf8))]) && (startsWith(fd, [(8, Array("AIFF".utf8))]) || startsWith(fd, [(8, Array("AIFC".utf8))]))
    }

    /// Whether the file starts as a WAV file does (RIFF, RF64 or BW64, then WAVE).
    static func isWAV(_ fd: Int32) -> Bool {
        guard let header = read(fd, 12, at: 0) else { return false }
        return ["RIFF", "RF64", "BW64"].contains { header[0..<4].elementsEqual($0.utf8) } && header[8..<12].elementsEqual("WAVE".utf8)
    }

    /// The length a WAV file's header states: its data chunk's size (RF64's ds64 for a large
    /// one) over the format's bytes per second. Nil for another file, or a size left unknown (a
    /// stream written as it came: 0 or 0xFFFFFFFF with no ds64).
    static func waveDuration(_ fd: Int32) -> MediaTime? {
        guard isWAV(fd) else { return nil }
        var offset = 12
        var bytesPerSecond: UInt32?, largeDataSize: UInt64?
        for _ in 0..<64 {
            guard let chunk = read(fd, 8, at: offset) else { return nil }
            let size = UInt32(chunk[4]) | UInt32(chunk[5]) << 8 | UInt32(chunk[6]) << 16 | UInt32(chunk[7]) << 24
            let id = String(decoding: chunk[0..<4], as: UTF8.self)
            switch id {
            case "fmt ":
                guard let body = read(fd, 12, at: offset + 8) else { return nil }
                bytesPerSecond = UInt32(body[8]) | UInt32(body[9]) << 8 | UInt32(body[10]) << 16 | UInt32(body[11]) << 24
            case "ds64":
                guard let body = read(fd, 16, at: offset + 8) else { return nil }
                largeDataSize = (8..<16).reduce(UInt64(0)) { $0 | UInt64(body[$1]) << (8 * UInt64($1 - 8)) }
            case "data":
                let dataSize = size == 0xFFFF_FFFF ? largeDataSize : size == 0 ? nil : UInt64(size)
                guard let dataSize, let rate = bytesPerSecond, rate > 0, dataSize < UInt64(Int64.max / 1_000_000) else { return nil }
                return MediaTime(value: Int64(dataSize) * 1_000_000 / Int64(rate), timescale: 1_000_000)
            default: break
            }
            offset += 8 + Int(size) + Int(size & 1)
        }
        return nil
    }

    static func lowercasedFirst(_ s: String) -> String { s.prefix(1).lowercased() + s.dropFirst() }
}
