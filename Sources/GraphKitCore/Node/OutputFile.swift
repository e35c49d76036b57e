import FoundationEssentials
import Glibc

/// A file a node writes, by the engine's rule: written beside the target under a temporary
/// name and renamed when complete, so an existing file is replaced only by a complete one and a
/// failed run leaves nothing under the target name. The temporary name is fixed per target, so
/// the next run to the same target removes what a killed run left; a run holds a lock on it
/// while it writes, so a second run to the same target at once is refused instead.
public struct OutputFile: Sendable {
    /// The path as the graph gives it (relative paths are relative to the current folder).
    public let path: String
    /// Where errors point: `nodes.file.params.path`.
    public let location: String
    public let node: String

    public init(path: String, location: String, node: String) {
        self.path = path
        self.location = location
        self.node = node
    }

    /// The file written: `path`, or where it leads when it is a symbolic link (the link stays,
    /// and the file it names is replaced, as ffmpeg writes through it).
    public var target: URL { URL(fileURLWithPath: Self.followingLink(path)) }

    /// Beside the target: `.NAME.partial`, or, when that name would pass the file system's 255
    /// bytes, the name's first 200 bytes and a hash of the whole.
    public var temporary: URL {
        let name = target.lastPathComponent
        var temporaryName = ".\(name).partial"
        if temporaryName.utf8.count > 255 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            var prefix = Substring(name)
            while prefix.utf8.count > 200 { prefix = prefix.dropLast() }
            temporaryName = ".\(prefix)-\(String(hash, radix: 16)).partial"
        }
        return target.deletingLastPathComponent().appendingPathComponent(temporaryName)
    }

    /// `path` made absolute against `folder` (the current one by default), with `.` and `..`
    /// worked out: two paths to one file (`out/a.mp4`, `./out/a.mp4`, its absolute path) give
    /// the same text. Symbolic links are left as they are.
    public static func absolute(_ path: String, from folder: String = FileManager.default.currentDirectoryPath) -> String {
        let full = path.hasPrefix("/") ? path : folder + "/" + path
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    static func followingLink(_ path: String) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return path }
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        // A link to a file yet to be made: where it points, from the link's folder.
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, Int(PATH_MAX))
        guard n > 0 else { return path }
        let destination = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if destination.hasPrefix("/") { return destination }
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(destination).path
    }

    /// Creates missing folders, removes a stale temporary file and checks that the file can be
    /// created, before anything runs. `inPlace` writes under the target name from the start (a
    /// fragmented recording that must survive a crash). Throws exit status 73.
    public func prepare(inPlace: Bool = false) throws(GraphError) {
        let fm = FileManager.default
        let folder = target.deletingLastPathComponent()
        var isDirectory = false
        if fm.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory else { throw failure("cannot write \"\(path)\": \"\(folder.path)\" is a file, not a folder") }
        } else {
            do {
                try fm.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw failure("cannot create the folder for \"\(path)\": \(Self.reason(error))")
            }
        }
        if target.lastPathComponent.utf8.count > 255 {
            throw failure("cannot write \"\(path)\": its name is \(target.lastPathComponent.utf8.count) bytes long, and a file name takes at most 255")
        }
        var info = stat()
        if stat(target.path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR: throw failure("cannot write \"\(path)\": it is a folder")
            default:
                // rename(2) would put a regular file in place of a device or a pipe.
                let kind = switch info.st_mode & S_IFMT {
                case S_IFCHR, S_IFBLK: "a device"
                case S_IFIFO: "a named pipe"
                case S_IFSOCK: "a socket"
                default: "not a regular file"
                }
                throw failure("cannot write \"\(path)\": it is \(kind); an output is written beside its target and renamed over it, "
                              + "so the target must be a regular file")
            }
        }
        if inPlace {
            guard fm.createFile(atPath: target.path, contents: nil) else {
                throw failure("cannot write in \"\(folder.path)\": permission denied or disk full")
            }
            return
        }
        try claimTemporary()
    }

    /// Creates the temporary file and holds a lock on it until ``commit()`` or ``discard()``.
    /// One left by a killed run (unlocked) is replaced; one that another live process holds
    /// means two runs would write this output at once, and this one stops before it starts.
    func claimTemporary() throws(GraphError) {
        let temp = temporary.path
        for _ in 0..<2 {
            let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                    Self.held.withLock { $0[temp] = fd }
                    return
                }
                close(fd)
                break  // locked between the two calls: another run's
            }
            guard errno == EEXIST else {
                throw failure("cannot write in \"\(target.deletingLastPathComponent().path)\": \(String(cString: strerror(errno)))")
            }
            // A killed run's is replaced. Another run's, in this process or another, is locked
            // (a flock lock belongs to an open file: a second open of it cannot take it).
            let existing = open(temp, O_RDONLY | O_CLOEXEC)
            if existing >= 0 {
                let free = flock(existing, LOCK_EX | LOCK_NB) == 0
                close(existing)
                if !free { break }
            }
            unlink(temp)
        }
        throw failure("cannot write \"\(path)\": another run is writing it now (its temporary file \"\(temp)\" is in use)")
    }

    /// The temporary files this process has claimed, each with the descriptor holding its lock.
    private static let held = Held()

    private final class Held: @unchecked Sendable {
        private let lock = Lock()
        private var files: [String: Int32] = [:]
        func withLock<T>(_ body: (inout [String: Int32]) -> T) -> T {
            lock.withLock { body(&files) }
        }
    }

    private func release() {
        let temp = temporary.path
        if let fd = Self.held.withLock({ $0.removeValue(forKey: temp) }) { close(fd) }
    }

    /// Moves the finished temporary file under the target name; rename(2) replaces it
    /// atomically, so readers see the old file or the new one.
    public func commit() throws(GraphError) {
        guard rename(temporary.path, target.path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw failure("cannot move the finished file to \"\(path)\": \(reason)")
        }
        release()
    }

    /// Removes the temporary file (a failed or cancelled run).
    public func discard() {
        try? FileManager.default.removeItem(at: temporary)
        release()
    }

    /// Removes the target itself (cancelling an in-place recording).
    public func removeTarget() {
        try? FileManager.default.removeItem(at: target)
    }

    func failure(_ message: String) -> GraphError {
        GraphError(.outputUnwritable, at: location, message, node: node)
    }

    /// The system's words for why a file operation failed ("Permission denied").
    public static func reason(_ error: any Error) -> String {
        if let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }
}
