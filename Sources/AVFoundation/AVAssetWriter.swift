import Assets
import MediaContainers
@_spi(Engine) import GraphKitCore

/// Writes media into an MP4, MOV or M4A file, as AVFoundation's: over GraphKit's `AssetWriter`
/// (one graph: a source per input, an encoder, the muxer).
///
/// As in AVFoundation: `startWriting()` returns false and `status` is `.failed` when writing
/// cannot start (a file already at `outputURL` included: writing fails then, as Apple
/// documents); `append` returns false once the writer has failed. Where AVFoundation raises an
/// Objective-C exception (adding an input `canAdd` refuses, appending before
/// `startSession(atSourceTime:)`), GraphKit fails the writer instead, with an `error` saying what
/// to do: nothing here stops the program.
open class AVAssetWriter: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its URL, type and writer are let, what it keeps of the app's objects in a
    // Mutex. It holds no writing state of its own: status, error, the session and every
    // sample go to GraphKit's writer, whose session is the one owner (AssetWriter).
    public enum Status: Int, Sendable {
        case unknown = 0, writing, completed, failed, cancelled
    }

    public let outputURL: URL
    public let outputFileType: AVFileType
    package let writer: AssetWriter

    /// What it keeps of the app's own objects, to give them back: the inputs, the delegate (and
    /// the bridge to it), the tags as items and the times as given.
    struct State {
        var segmentInterval = CMTime.invalid
        var initialSegmentStartTime = CMTime.invalid
        weak var delegate: (any AVAssetWriterDelegate)?
        /// Holds the bridge the GraphKit writer holds weakly.
        var forwarder: SegmentForwarder?
        var inputs: [AVAssetWriterInput] = []
        var fragmentInterval = CMTime.invalid
        var metadata: [AVMetadataItem] = []
        /// ``clockBias``, once decided.
        var bias: MediaTime?
    }
    let state = Guarded(State())

    /// How much later than their own times every sample, the session's start and its end go to
    /// GraphKit's writer: an hour when every input is passthrough and a whole file is written
    /// (its samples at their own times, the session's start an edit), zero otherwise (a writer
    /// that encodes, a fragmented file, segments: on the session's clock). A passthrough file
    /// keeps its source's edit lists, so its samples may come before 0 (an AAC priming packet,
    /// the decode of a B-frame, as a reader gives them, and as Apple's writer takes them), and
    /// GraphKit's sample times cannot go below 0; the file's
    /// times count from the session's start, so the bias leaves no trace. Decided when first
    /// needed (writing or the session starting), when the inputs are known.
    var clockBias: MediaTime {
        let (segments, fragments) = (writer.writesSegments, writer.movieFragmentInterval != nil)
        let (bias, decided) = state.withLock { s -> (MediaTime, [AVAssetWriterInput]?) in
            if let bias = s.bias { return (bias, nil) }
            let sourceClock = !s.inputs.isEmpty && s.inputs.allSatisfy { $0.outputSettings == nil } && !segments && !fragments
            let bias = sourceClock ? MediaTime(value: 3_600, timescale: 1) : .zero
            s.bias = bias
            return (bias, s.inputs)
        }
        // Told outside the state's lock (each has its own), once, by the call that decided it.
        if let inputs = decided {
            writer.clockOffset = bias
            for input in inputs { input.setClockBias(bias) }
        }
        return bias
    }

    /// A writer of `outputFileType` (`.mp4`, `.mov` or `.m4a`) to the file URL `outputURL`.
    /// Throws for another file type or a URL that is not a file's.
    public init(outputURL: URL, fileType outputFileType: AVFileType) throws {
        guard outputURL.isFileURL else {
            throw avError(.invalidOutputURLPathExtension, "\(outputURL) is not a file URL; GraphKit writes local files")
        }
        guard let type = outputFileType.assets else {
            throw avError(.operationNotAllowed, "GraphKit writes .mp4, .mov and .m4a files (AVFileType.mp4, .mov, .m4a), not \(outputFileType.rawValue)")
        }
        do {
            writer = try AssetWriter(outputPath: outputURL.path, fileType: type)
        } catch {
            throw avError(error)
        }
        self.outputURL = outputURL
        self.outputFileType = outputFileType
    }

    /// A writer of segments (`init(contentType:)`): it writes no file; set
    /// `outputFileTypeProfile`, `preferredOutputSegmentInterval` and `delegate`, which receives
    /// each segment. `outputURL` is then an empty file URL. GraphKit writes `.mpeg4Movie`
    /// (`public.mpeg-4`) segments only.
    public init(contentType outputContentType: UTType) {
        outputURL = URL(fileURLWithPath: "/")
        outputFileType = .mp4
        // A writer of MP4 segments; another content type fails startWriting(), saying why
        // (AVFoundation raises an exception here).
        writer = AssetWriter(mp4SegmentsOn: SystemAlarmClock())
        if outputContentType != .mpeg4Movie {
            fail(avError(.operationNotAllowed, "GraphKit writes segments of MPEG-4 (UTType.mpeg4Movie, public.mpeg-4), not \(outputContentType.identifier)"))
        }
    }

    public convenience init(url outputURL: URL, fileType outputFileType: AVFileType) throws {
        try self.init(outputURL: outputURL, fileType: outputFileType)
    }

    // MARK: State

    public var status: Status {
        switch writer.status {
        case .completed: .completed
        case .cancelled: .cancelled
        case .failed: .failed
        case .writing: .writing
        case .unknown: .unknown
        }
    }

    /// Why writing failed, once `status` is `.failed`: an error in AVFoundation's domain whose
    /// description is GraphKit's message (the input, the file, the cause).
    public var error: (any Error)? {
        if let reported = writer.reportedFailure { return avError(reported) }
        return writer.error.map { avError($0) }
    }

    public var inputs: [AVAssetWriterInput] { state.withLock { $0.inputs } }

    /// The media types the file type takes: audio only for M4A.
    public var availableMediaTypes: [AVMediaType] { outputFileType == .m4a ? [.audio] : [.audio, .video] }

    /// Whether the index goes before the media data (`faststart`). Set it before `startWriting()`.
    public var shouldOptimizeForNetworkUse: Bool {
        get { writer.shouldOptimizeForNetworkUse }
        set { writer.shouldOptimizeForNetworkUse = newValue }
    }

    /// Fragments of this length, so a crash keeps what was written (invalid, the default: one
    /// unfragmented file). Set it before `startWriting()`.
    public var movieFragmentInterval: CMTime {
        get { state.withLock { $0.fragmentInterval } }
        set {
            state.withLock { $0.fragmentInterval = newValue }
            writer.movieFragmentInterval = newValue.isNumeric && newValue.value > 0 ? newValue.mediaTime : nil
        }
    }

    /// The file's tags, written as iTunes and AVFoundation write them: items whose common key
    /// (or whose key in its own space, `©nam`, `TIT2`, `com.apple.quicktime.location.ISO6709`…)
    /// is the title, artist, album name, type (genre), description (comment), creation date or
    /// software (`moov/udta/meta/ilst`), text values and a date as a date; the location (ISO 6709
    /// text, `udta/©xyz`); the artwork (`commonKeyArtwork`, `covr`, `APIC`: a JPEG or PNG
    /// picture as data, `covr`). Other items are not written. Set it before `startWriting()`,
    /// which fails, naming the item, for artwork that is not a JPEG or PNG picture.
    public var metadata: [AVMetadataItem] {
        get { state.withLock { $0.metadata } }
        set {
            state.withLock { $0.metadata = newValue }
            writer.metadata = Self.tags(newValue)
        }
    }

    /// The tags GraphKit writes, from items.
    static func tags(_ items: [AVMetadataItem]) -> MediaMetadata {
        var tags = MediaMetadata()
        for item in items {
            let key = (item.key as? NSString).map { $0 as String }
            if item.commonKey == .commonKeyArtwork || ["covr", "APIC", "PIC", "METADATA_BLOCK_PICTURE"].contains(key ?? "") {
                guard tags.artwork == nil else { continue }
                // Bytes are the picture; anything else is kept as its text's bytes, which writing
                // then refuses as not a picture, naming the artwork.
                let bytes: [UInt8]
                switch item.stored {
                case .bytes(let b)?: bytes = b
                default: bytes = Array((item.stringValue ?? "").utf8)
                }
                let mime: String? = switch item.dataType {
                case "com.apple.metadata.datatype.JPEG"?, kCMMetadataBaseDataType_JPEG?: "image/jpeg"
                case "com.apple.metadata.datatype.PNG"?, kCMMetadataBaseDataType_PNG?: "image/png"
                default: nil
                }
                tags.addPicture(bytes, mimeType: mime)
                if tags.artwork == nil { tags.artwork = MediaMetadata.Artwork(mimeType: mime ?? "application/octet-stream", data: bytes) }
                continue
            }
            let field: String? = switch item.commonKey {
            case .commonKeyTitle?: "title"
            case .commonKeyArtist?: "artist"
            case .commonKeyAlbumName?: "album"
            case .commonKeyType?: "genre"
            case .commonKeyDescription?: "comment"
            case .commonKeyCreationDate?: "date"
            case .commonKeySoftware?: "encoder"
            case .commonKeyLocation?: "location"
            default: key.flatMap { MediaMetadata.commonFieldName($0) }
            }
            let text: String?
            if case .date(let d)? = item.stored {
                text = d.formatted(.iso8601)
            } else {
                text = item.stringValue
            }
            guard let field, let text, !text.isEmpty else { continue }
            switch field {
            case "title": tags.title = tags.title ?? text
            case "artist": tags.artist = tags.artist ?? text
            case "album": tags.album = tags.album ?? text
            case "albumArtist": tags.albumArtist = tags.albumArtist ?? text
            case "genre": tags.genre = tags.genre ?? text
            case "comment": tags.comment = tags.comment ?? text
            case "date": tags.date = tags.date ?? text
            case "encoder": tags.encoder = tags.encoder ?? text
            case "location": tags.location = tags.location ?? text
            default: break
            }
        }
        return tags
    }

    /// Whether `outputSettings` are settings GraphKit can encode `mediaType` with.
    public func canApply(outputSettings: [String: Any]?, forMediaType mediaType: AVMediaType) -> Bool {
        guard let outputSettings else { return true }
        return (try? WriterSettings.read(outputSettings, mediaType: mediaType)) != nil
    }

    // MARK: Inputs

    /// Whether `input` can be added: its settings are ones GraphKit honours, and GraphKit's
    /// writer takes it (before writing starts, one input per media type, a type the file takes).
    public func canAdd(_ input: AVAssetWriterInput) -> Bool {
        guard input.settingsError == nil, let gk = input.input else { return false }
        return writer.canAdd(gk)
    }

    /// Adds an input. One `canAdd(_:)` refuses fails the writer (AVFoundation raises an
    /// exception), with an error saying why.
    public func add(_ input: AVAssetWriterInput) {
        if let problem = input.settingsError {
            fail(avError(.operationNotAllowed, "cannot add \(problem)"))
            return
        }
        guard let gk = input.input, gk.writerForAdaptor == nil else {
            fail(avError(.operationNotAllowed, "cannot add this \(input.mediaType.rawValue) input: it belongs to a writer already"))
            return
        }
        do {
            try writer.add(gk)
            state.withLock { $0.inputs.append(input) }
        } catch {
            fail(error)
        }
    }

    // MARK: Writing

    /// Starts writing; false, with `status` `.failed` and `error` set, when it cannot (a file
    /// already at `outputURL`, a folder that cannot be made, an input refused when added).
    @discardableResult
    public func startWriting() -> Bool {
        if writer.status == .failed { return false }
        if writer.writesSegments {
            startSegmentDelivery()
        } else if FileManager.default.fileExists(atPath: outputURL.path) {
            fail(avError(.fileAlreadyExists, "cannot write \(outputURL.path): a file is there already (AVFoundation does not replace it either); remove it first"))
            return false
        } else if let problem = outputFolderProblem(outputURL) {
            fail(problem)
            return false
        }
        _ = clockBias
        do {
            try writer.startWriting()
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// The file's time origin: a sample at `startTime` is at 0 in the file; earlier samples are
    /// left out. Call it after `startWriting()` and before appending.
    public func startSession(atSourceTime startTime: CMTime) {
        guard let t = startTime.mediaTime, t.isFinite else {
            fail(avError(.operationNotAllowed, "startSession(atSourceTime:) needs a numeric time, not \(startTime)"))
            return
        }
        writer.startSession(atSourceTime: t + clockBias)
    }

    /// The session's end: the file plays to `endTime` (every track's edit list stops there, as
    /// AVFoundation documents: samples past it stay in the file, edited out of what plays).
    /// Before `startSession`, or with an end not after the session's start, the writer fails
    /// (AVFoundation raises an exception).
    public func endSession(atSourceTime endTime: CMTime) {
        guard let end = endTime.mediaTime else {
            fail(avError(.operationNotAllowed, "endSession(atSourceTime:) needs a numeric time, not \(endTime)"))
            return
        }
        do {
            try writer.endSession(atSourceTime: end + clockBias)
        } catch {
            fail(error)
        }
    }

    /// Finishes every input, completes the file, then calls `handler` (on another thread).
    /// Check `status` in it.
    public func finishWriting(completionHandler handler: @escaping @Sendable () -> Void) {
        Task {
            await self.finishWriting()
            handler()
        }
    }

    /// Finishes every input and completes the file; `status` is then `.completed`, or `.failed`
    /// with `error` set.
    public func finishWriting() async {
        if writer.status == .failed { return }
        do {
            try await writer.finishWriting()
        } catch {
            if writer.status != .failed && writer.status != .cancelled { fail(error) }
            return
        }
    }

    /// Abandons writing: nothing is left at `outputURL`.
    public func cancelWriting() { writer.cancelWriting() }

    // MARK: For the inputs

    /// Fails the writer with `error` (the first failure stays), abandoning what was written.
    func fail(_ error: any Error) { writer.fail(error) }
}

extension AssetWriter {
    /// Fails GraphKit's writer with `error` as Apple's names report it (an error in AVFoundation's
    /// domain, kept as made: its code is what the app sees).
    func fail(_ error: any Error) {
        let reported = avError(error)
        fail(because: (error as? GraphError) ?? GraphError(.usage, at: "AVAssetWriter", reported.localizedDescription), reporting: reported)
    }
}
