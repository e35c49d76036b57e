import FoundationEssentials
import Glibc
import GraphKit

/// Media made in tests: PCM computed in Swift, files made by GStreamer, results read by ffprobe.
public enum TestMedia {
    /// Interleaved S16LE PCM buffers from a per-frame sample function, timestamped exactly.
    public static func pcm(sampleRate: Int = 44_100, channels: Int = 1, frames: Int, framesPerBuffer: Int = 1024,
                           sample: (_ frame: Int, _ channel: Int) -> Int16) -> [SampleBuffer] {
        let format = MediaFormat.pcm(.init(sampleRate: sampleRate, channels: channels, sampleFormat: .s16le))
        var buffers: [SampleBuffer] = []
        var start = 0
        while start < frames {
            let n = min(framesPerBuffer, frames - start)
            var samples = [Int16](repeating: 0, count: n * channels)
            for f in 0..<n { for c in 0..<channels { samples[f * channels + c] = sample(start + f, c) } }
            let bytes = samples.withUnsafeBytes { Array($0) }
            buffers.append(SampleBuffer(format: format, bytes: bytes,
                                        presentationTime: MediaTime(value: Int64(start), timescale: Int32(sampleRate)),
                                        duration: MediaTime(value: Int64(n), timescale: Int32(sampleRate))))
            start += n
        }
        return buffers
    }

    /// A sine tone as S16LE PCM buffers.
    public static func sine(frequency: Double = 440, amplitude: Double = 0.5, sampleRate: Int = 44_100,
                            channels: Int = 1, seconds: Double, framesPerBuffer: Int = 1024) -> [SampleBuffer] {
        pcm(sampleRate: sampleRate, channels: channels, frames: Int(seconds * Double(sampleRate)), framesPerBuffer: framesPerBuffer) { f, _ in
            Int16(amplitude * 32767 * sin(2 * Double.pi * frequency * Double(f) / Double(sampleRate)))
        }
    }

    /// Runs `gst-launch-1.0 -q -e DESCRIPTION` and throws if it fails: GStreamer makes the
    /// test's input files.
    public static func gstLaunch(_ description: String) throws {
        try runTool("gst-launch-1.0", ["-q", "-e"] + description.split(separator: " ").map(String.init))
    }

    /// A WAV file of a sine tone, written by GStreamer: exactly `seconds × sampleRate` frames
    /// when the rate is a multiple of 100 (buffers of 10 ms).
    public static func writeWAV(_ path: String, seconds: Double, sampleRate: Int = 44_100, channels: Int = 2,
                                frequency: Double = 440) throws {
        let frames = Int(seconds * Double(sampleRate))
        let perBuffer = sampleRate % 100 == 0 ? sampleRate / 100 : 1024
        try gstLaunch("audiotestsrc num-buffers=\(max(1, frames / perBuffer)) samplesperbuffer=\(perBuffer) freq=\(frequency) ! "
                      + "audio/x-raw,format=S16LE,rate=\(sampleRate),channels=\(channels) ! wavenc ! filesink location=\(path)")
    }

    /// The environment variable that names the tier a suite runs in: `fast` (GraphKit's own
    /// `make test-fast`) is the code's own logic only, in which ``runTool(_:_:)`` starts nothing.
    public static let tierVariable = "GRAPHKIT_TEST_TIER"

    /// Runs a tool found on the PATH and returns what it printed; throws with its error output
    /// when it fails. Its output goes to files, not pipes, so no amount of it can stall either
    /// side (and GraphKit needs no Foundation `Process`). Under GRAPHKIT_TEST_TIER=fast it throws
    /// at once, naming the tool: a test that makes media belongs to the full tier. An ffmpeg
    /// command that makes one file from generated sources, run a second time in the process,
    /// copies the first run's file (``MediaCommandCache`` says which commands are kept).
    @discardableResult
    public static func runTool(_ tool: String, _ arguments: [String]) throws -> String {
        if ProcessInfo.processInfo.environment[tierVariable] == "fast" {
            throw GraphError(.runFailed, "\(tool) started in the fast tier (\(tierVariable)=fast): this test makes media, so its suite belongs to `make test`")
        }
        guard let key = MediaCommandCache.key(tool, arguments) else { return try spawn(tool, arguments) }
        if let printed = MediaCommandCache.reuse(key) { return printed }
        let before = MediaCommandCache.namesBeside(key)
        let printed = try spawn(tool, arguments)
        MediaCommandCache.keep(key, printed: printed, before: before)
        return printed
    }

    private static func spawn(_ tool: String, _ arguments: [String]) throws -> String {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout").path, err = folder.appendingPathComponent("stderr").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, tool, &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw GraphError(.runFailed, "cannot start \(tool): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let printed = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0, code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
            throw GraphError(.runFailed, "\(tool) failed (\(exited ? "exit \(code)" : "signal \(status & 0x7f)")): \(errors)")
        }
        return printed
    }

    /// A fresh temporary folder for one test: inside one folder of the process's (`gk-PID-HEX`), removed with
    /// everything in it when the process exits (a run of the suite left thousands behind).
    public static func temporaryFolder() throws -> URL {
        let url = URL(fileURLWithPath: testsFolder ?? FileManager.default.temporaryDirectory.path)
            .appendingPathComponent("graphkit-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The process's folder of test folders (nil when it cannot be made: each folder is then
    /// made in the temporary directory itself, and stays).
    private static let testsFolder: String? = {
        // Short: a test's Unix socket in its folder (PipeWire's `run/pipewire-0-manager`) must
        // fit a socket address's 108 bytes with the test folder's UUID name under it.
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("gk-\(getpid())-\(String(UInt32.random(in: 0...0xFF_FFFF), radix: 16))").path
        guard mkdir(path, 0o755) == 0 else { return nil }
        atexit { _ = try? FileManager.default.removeItem(atPath: TestMedia.testsFolder ?? "") }
        return path
    }()

    /// The shift, in samples, that best lines `decoded` up with `input` (by cross-correlation of
    /// a 4,096-sample window from the middle): 0 when each decoded sample lands where the
    /// input's does. For a signal without a period (noise), so that the best shift is unique.
    public static func lag(of decoded: [Int16], against input: [Int16], within limit: Int = 2048) -> Int {
        let window = min(4096, input.count - 2 * limit)
        guard window > 256 else { return .max }
        let start = max(limit, (input.count - window) / 2)
        var best = (lag: Int.max, score: -Double.infinity)
        for lag in -limit...limit {
            var score = 0.0
            for i in start..<(start + window) where i + lag >= 0 && i + lag < decoded.count {
                score += Double(input[i]) * Double(decoded[i + lag])
            }
            if score > best.score { best = (lag, score) }
        }
        return best.lag
    }
}

/// What ffprobe says of a file: its streams and format, as `ffprobe -show_format` after writing.
public struct MediaProbe: Sendable {
    public struct Stream: Sendable {
        public var codecType: String
        public var codecName: String
        public var sampleRate: Int?
        public var channels: Int?
        public var width: Int?
        public var height: Int?
        public var frameCount: Int?
        public var duration: Double?
        public var frameRate: Double?
        /// Bits per second, as the file states it (ffprobe's `bit_rate`).
        public var bitRate: Int?
    }
    public var streams: [Stream]
    public var formatName: String
    public var duration: Double
    /// Byte offsets of the top-level MP4 boxes, by type (for "moov before mdat").
    public var topLevelBoxes: [String]
    /// The container's tags (`-show_format`'s), keys as ffprobe names them (`title`, `encoder`,
    /// `location`).
    public var tags: [String: String]
    /// The chapters, as `-show_chapters` gives them: start and end in seconds, and title.
    public var chapters: [Chapter]
    public struct Chapter: Sendable, Equatable {
        public var start: Double
        public var end: Double
        public var title: String
    }

    public init(_ path: String, countFrames: Bool = false) throws {
        var args = ["-v", "error", "-of", "json", "-show_streams", "-show_format", "-show_chapters"]
        if countFrames { args.append("-count_frames") }
        let text = try TestMedia.runTool("ffprobe", args + [path])
        let json = try JSONParser.parse(text)
        func string(_ v: JSONValue?) -> String? { if case .string(let s)? = v { return s }; return nil }
        func int(_ v: JSONValue?) -> Int? {
            if case .number(let n)? = v { return Int(n) }
            return string(v).flatMap { Int($0) }
        }
        func double(_ v: JSONValue?) -> Double? { string(v).flatMap { Double($0) } }
        func rate(_ v: JSONValue?) -> Double? {
            guard let s = string(v) else { return nil }
            let parts = s.split(separator: "/").compactMap { Double($0) }
            return parts.count == 2 && parts[1] != 0 ? parts[0] / parts[1] : nil
        }
        var streams: [Stream] = []
        if case .array(let items)? = json["streams"] {
            for s in items {
                streams.append(Stream(codecType: string(s["codec_type"]) ?? "", codecName: string(s["codec_name"]) ?? "",
                                      sampleRate: int(s["sample_rate"]), channels: int(s["channels"]),
                                      width: int(s["width"]), height: int(s["height"]),
                                      frameCount: int(s["nb_read_frames"]) ?? int(s["nb_frames"]),
                                      duration: double(s["duration"]), frameRate: rate(s["avg_frame_rate"]), bitRate: int(s["bit_rate"])))
            }
        }
        self.streams = streams
        formatName = string(json["format"]?["format_name"]) ?? ""
        duration = double(json["format"]?["duration"]) ?? 0
        topLevelBoxes = MediaProbe.boxes(path)
        var tags: [String: String] = [:]
        if case .object(let members)? = json["format"]?["tags"] {
            for (key, value) in members { if let text = string(value) { tags[key] = text } }
        }
        self.tags = tags
        var chapters: [Chapter] = []
        if case .array(let items)? = json["chapters"] {
            for c in items {
                chapters.append(Chapter(start: double(c["start_time"]) ?? -1, end: double(c["end_time"]) ?? -1, title: string(c["tags"]?["title"]) ?? ""))
            }
        }
        self.chapters = chapters
    }

    public func stream(_ type: String) -> Stream? { streams.first { $0.codecType == type } }

    /// The types of a file's top-level MP4 boxes, in order (the last may run past its end),
    /// as GraphKit's one box reader walks them.
    public static func boxes(_ path: String) -> [String] {
        guard let file = FileBytes(path: path) else { return [] }
        var walker = BoxWalker(file)
        var result: [String] = []
        while result.count < 64, case .box(let extent)? = try? walker.next() { result.append(extent.type.description) }
        return result
    }
}
