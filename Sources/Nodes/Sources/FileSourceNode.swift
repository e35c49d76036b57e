import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

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
public final class FileSourceNode: ElementNode, ReadsFile, StoredFileSource, Sendable {
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
    private let opened = Guarded<Opened?>(nil)
    private let problem = Guarded<String?>(nil)

    struct Opened {
        var fd: Int32
        /// A regular file, and what it was when opened (to see a change while it is read).
        var regular: Bool
        var size: Int64
        var modified: timespec
        /// The length its header states, when it states one exactly (a WAV file's data chunk).
        var statedDuration: MediaTime?
        /// A WAV file that ends before any data chunk.
        var endsBeforeData = false
        /// Read in push mode (fdsrc): a WAV or AIFF file, or a pipe.
        var pushed = false
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
        if let problem = problem.withLock({ $0 }) {
            throw GraphError(.inputUnreadable, at: at, "cannot read \"\(path)\": \(problem)", node: context.id)
        }
        if opened.withLock({ $0?.endsBeforeData }) == true {
            // GStreamer 1.22's wavparse ends such a stream empty and 1.26's fails it ("Could not
            // demultiplex stream"): said here, the same on both, as ffmpeg refuses it.
            throw GraphError(.runFailed, at: at, "\"\(path)\" is a WAV header with no data chunk: it holds no samples", node: context.id)
        }
        // An MP4/MOV's claims past what GraphKit reads (nesting deeper than qtdemux's stack
        // holds, sample tables larger than the file, a picture larger than GraphKit decodes):
        // refused before any GStreamer element reads the file.
        if let opened = opened.withLock({ $0 }), opened.regular, let why = ContainerLimits.problem(in: FileBytes(descriptor: opened.fd)) {
            throw GraphError(.runFailed, at: at, "cannot decode \"\(path)\": \(why)", node: context.id)
        }
        if let fd = opened.withLock({ $0?.fd }), WAVEHeader.isWave64(FileBytes(descriptor: fd)) {
            // GStreamer 1.22 reads Wave64 only through libsndfile's sfdec, which misreads float
            // samples, pads the count to its block and can stall: refused, with the way out.
            throw GraphError(.missingPlugin, at: at,
                             "\"\(path)\" is a Sony Wave64 file, which no installed GStreamer plugin reads correctly; "
                             + "convert it to WAV or RF64 first (ffmpeg -i in.w64 -rf64 auto out.wav)", node: context.id)
        }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        if let file = openOnce(), file.regular, !file.pushed {
            // Other files are pulled: demuxers read in blocks and seek. filesrc opens a name,
            // given one that leads to this very file.
            let reopen = "/proc/self/fd/\(file.fd)"
            let src = try bin.make("filesrc", name: "filesrc", ["location": access(reopen, R_OK) == 0 ? reopen : path])
            try bin.expose(output: "out", src)
            return
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

    /// On the container path (a remux by `demux`'s reading of the index): the file opened as
    /// ``build(in:)`` opens it, a regular file only; prepare() checks its claims as before a
    /// pipeline, and a change while it is read is seen the same way.
    package func openForStoredReading() throws(GraphError) -> (file: FileBytes, name: String) {
        let at = "node \"\(context.id)\" reading \"\(path)\""
        guard let file = openOnce() else { throw GraphError(.inputUnreadable, at: at, problem.withLock { $0 } ?? "it cannot be opened", node: context.id) }
        guard file.regular else { throw GraphError(.inputUnreadable, at: at, "it is not a regular file (a pipe is read as it comes)", node: context.id) }
        return (FileBytes(descriptor: file.fd), path)
    }

    /// The file, opened once, whichever plan reads it: without blocking (a named pipe with no
    /// writer yet would block open(2), and with it every signal's handling), and what it is
    /// noted. Nil when it cannot be read; the checks in prepare() say why.
    private func openOnce() -> Opened? {
        if let file = opened.withLock({ $0 }) { return file }
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let why = errno == ENOENT ? "no such file" : String(cString: strerror(errno)).lowercasedFirst
            problem.withLock { $0 = why }
            return nil
        }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else {
            problem.withLock { $0 = "it is a folder" }
            close(fd)
            return nil
        }
        let regular = info.st_mode & S_IFMT == S_IFREG
        // A pipe is read as it comes: reads wait (poll, which stopping interrupts) for data.
        if !regular { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) }
        // Its first bytes, read through the descriptor (a pipe's are not read here: they are
        // the stream's).
        let bytes = FileBytes(descriptor: fd)
        let wave = regular ? WAVEHeader(bytes) : nil
        let file = Opened(fd: fd, regular: regular, size: Int64(info.st_size), modified: info.st_mtim,
                          statedDuration: wave?.statedMicroseconds.map { MediaTime(value: $0, timescale: 1_000_000) },
                          endsBeforeData: wave?.endsBeforeData ?? false,
                          pushed: !regular || wave != nil || WAVEHeader.isAIFF(bytes))
        opened.withLock { $0 = file }
        return file
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

    /// The first video stream's colour, as GStreamer's discoverer reads the open file (its
    /// caps: the container's colour boxes and the bitstream's); nil for a pipe or a file that
    /// states none.
    public func videoColor() -> VideoColor? {
        guard let fd = opened.withLock({ $0?.regular == true ? $0?.fd : nil }) else { return nil }
        let reopened = "/proc/self/fd/\(fd)"
        guard access(reopened, R_OK) == 0, let info = try? MediaFileInfo(path: reopened) else { return nil }
        return info.streams.first { $0.kind == .video }?.color
    }
}
