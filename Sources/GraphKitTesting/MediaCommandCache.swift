import FoundationEssentials
import Glibc
import Synchronization

/// The files ffmpeg made for one test process, by command: a suite asks for the same test media
/// many times (the same clip in every test of a suite), and ffmpeg made about a third of the
/// suite's CPU time, 43% of it again for a command it had already run (BENCHMARKS.md, "The
/// suite's wall time"). A command that makes one file from generated sources and small input files
/// gives the same bytes each time (ffmpeg's encoders are deterministic for one set of
/// arguments on one machine), so the second time the file is copied from the first.
///
/// A command is kept only when nothing about it can differ between runs:
/// - its output is its last argument, an absolute path that does not exist yet, and after the
///   run the output's folder holds that one new file and nothing else new (no segments, logs or
///   second outputs);
/// - every other argument that names a file in the temporary folder names a regular file of at
///   most 1 MiB, which is read and named by its bytes in the key (so the same command on other
///   input bytes is run again); any other mention of the temporary folder (a filter's file
///   argument) is not kept;
/// - it draws no random numbers or clock (`noise`, `random`, `now`) and writes no pattern, pipe
///   or URL.
///
/// The cache is a folder of this process's, removed when it exits. `GRAPHKIT_TEST_MEDIA_CACHE=0`
/// turns it off.
enum MediaCommandCache {
    struct Key: Hashable {
        var text: String
        var output: String
    }

    private struct Entry { var file: String; var printed: String }

    private static let entries = Mutex<[String: Entry]>([:])
    /// How many runs copied a kept file (for the cache's tests).
    static let reused = Atomic<Int>(0)
    private static let folder: String? = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("graphkit-media-cache-\(getpid())").path
        guard mkdir(path, 0o700) == 0 else { return nil }
        atexit { _ = try? FileManager.default.removeItem(atPath: MediaCommandCache.folder ?? "") }
        return path
    }()
    private static let largestInput = 1 << 20
    private static let unkept = ["noise", "random", "now", "://", "pipe:", "%", "-pass", "-re"]

    /// The key of `tool`'s run with `arguments`, or nil when the run is not one to keep.
    static func key(_ tool: String, _ arguments: [String]) -> Key? {
        guard tool == "ffmpeg", ProcessInfo.processInfo.environment["GRAPHKIT_TEST_MEDIA_CACHE"] != "0",
              let output = arguments.last, output.hasPrefix("/"), !FileManager.default.fileExists(atPath: output),
              !arguments.contains(where: { a in unkept.contains { a.contains($0) } }) else { return nil }
        let temporary = FileManager.default.temporaryDirectory.path
        var text = tool
        for argument in arguments.dropLast() {
            if argument.contains(temporary) {
                guard let bytes = smallFile(argument) else { return nil }
                text += "\u{0}<file \(bytes.count) \(hash(bytes))>"
            } else {
                text += "\u{0}" + argument
            }
        }
        let name = output.split(separator: "/").last.map(String.init) ?? ""
        let suffix = name.contains(".") ? String(name.split(separator: ".").last!) : ""
        return Key(text: text + "\u{0}<output .\(suffix)>", output: output)
    }

    /// Copies the kept output of `key` into place and returns what the command printed; nil
    /// when it was not kept.
    static func reuse(_ key: Key) -> String? {
        guard let entry = entries.withLock({ $0[key.text] }) else { return nil }
        guard (try? FileManager.default.copyItem(atPath: entry.file, toPath: key.output)) != nil else { return nil }
        reused.add(1, ordering: .relaxed)
        return entry.printed
    }

    /// The names in `key`'s output folder, before the run (what ``keep(_:printed:before:)`` compares).
    static func namesBeside(_ key: Key) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: parent(key.output))) ?? [])
    }

    /// Keeps the output the run just made, when it made that file alone.
    static func keep(_ key: Key, printed: String, before: Set<String>) {
        let name = String(key.output.split(separator: "/").last ?? "")
        guard let folder, namesBeside(key).subtracting(before) == [name] else { return }
        entries.withLock { kept in
            guard kept[key.text] == nil else { return }
            let copy = "\(folder)/\(kept.count)"
            guard (try? FileManager.default.copyItem(atPath: key.output, toPath: copy)) != nil else { return }
            kept[key.text] = Entry(file: copy, printed: printed)
        }
    }

    private static func parent(_ path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }

    /// The bytes of `path` when it is a regular file (not a link) of at most 1 MiB.
    private static func smallFile(_ path: String) -> [UInt8]? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= largestInput,
              let data = FileManager.default.contents(atPath: path) else { return nil }
        return [UInt8](data)
    }

    /// FNV-1a, 64 bits.
    private static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in buffer { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return h
        }
    }
}
