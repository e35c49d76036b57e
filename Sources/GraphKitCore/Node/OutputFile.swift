import FoundationEssentials
import Glibc

/// A file a node writes, by the engine's rule: written beside the target under a temporary
/// name and renamed when complete, so an existing file is replaced only by a complete one and a
/// failed run leaves nothing under the target name. The temporary name is fixed per target, so
/// the next run to the same target removes what a killed run left; a run holds a lock on it
/// while it writes, so a second run to the same target at once is refused instead.
///
/// Everything goes through descriptors, opened once and never reopened by name, so that whoever
/// else can write the output's folder cannot redirect the write:
///
/// - the folder is opened once (missing folders made on the way, each opened without following
///   a link; a link in the folder's path is followed only when root or this user owns it, since
///   its target was then chosen by one of them);
/// - the temporary file is made exclusively in it (`openat` with `O_CREAT|O_EXCL|O_NOFOLLOW`)
///   and written through its descriptor (``descriptor``: `fdsink`, the waveform's files, the
///   statistics);
/// - it is renamed into place relative to the folder's descriptor (`renameat`), once its name is
///   seen to still hold the file written; afterwards the final name is checked to hold it.
///
/// An existing symbolic link at the final name is refused (73) unless ``followsSymbolicLinks``
/// is set (`graphctl --follow-symlinks`): anyone who can write the folder can plant a link there
/// and choose which file a run (often root's) replaces. So is anything else than a regular file
/// at the final or the temporary name (a pipe, a device, a folder), and a temporary name that is
/// not a file a run left.
public final class OutputFile: Sendable {
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

    deinit { discard() }

    /// Whether an output whose name is a symbolic link is written through it (the file it names
    /// is replaced, the link stays), as ffmpeg does. Off by default, for the whole process:
    /// `graphctl run --follow-symlinks` turns it on.
    public static var followsSymbolicLinks: Bool {
        get { followingLinks.withLock { $0 } }
        set { followingLinks.withLock { $0 = newValue } }
    }
    private static let followingLinks = Guarded(false)

    // MARK: Names

    /// The target as the graph names it, absolute.
    public var target: URL { URL(fileURLWithPath: path) }

    /// Beside the target: `.NAME.partial` (for messages, and to find a killed run's leftovers).
    public var temporary: URL {
        target.deletingLastPathComponent().appendingPathComponent(Self.temporaryName(for: target.lastPathComponent))
    }

    /// `.NAME.partial`, or, when that would pass the file system's 255 bytes, the name's first
    /// 200 bytes and a hash of the whole.
    package static func temporaryName(for name: String) -> String {
        var temporaryName = ".\(name).partial"
        if temporaryName.utf8.count > 255 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
            for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            var prefix = Substring(name)
            while prefix.utf8.count > 200 { prefix = prefix.dropLast() }
            temporaryName = ".\(prefix)-\(String(hash, radix: 16)).partial"
        }
        return temporaryName
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

    // MARK: State

    struct Opened {
        /// The folder the file is written in, and the names in it.
        var folder: Int32
        var name: String
        var temporaryName: String?
        /// The file being written (the temporary one, or the target when in place).
        var file: Int32
        var identity: FileIdentity
        /// The folder's identity, and the path that led to it (checked again before the rename).
        var folderIdentity: FileIdentity
        var folderPath: String
    }

    /// The file being written, from ``prepare(inPlace:)`` until ``commit()`` or ``discard()``.
    let opened = Guarded<Opened?>(nil)

    /// The descriptor of the file being written, open for reading and writing at offset 0:
    /// after ``prepare(inPlace:)``, until ``commit()`` or ``discard()``.
    public var descriptor: Int32 {
        opened.withLock { $0?.file ?? -1 }
    }

    /// Whether the file being written has no bytes yet; false when none is open.
    public var isEmpty: Bool {
        opened.withLock { o in
            guard let fd = o?.file else { return false }
            var s = stat()
            return fstat(fd, &s) == 0 && s.st_size == 0
        }
    }

    // MARK: Preparing

    /// Creates missing folders, removes a stale temporary file and creates the temporary file
    /// (held locked until ``commit()`` or ``discard()``), before anything runs. `inPlace`
    /// writes under the target name from the start (a fragmented recording that must survive a
    /// crash): an existing file there is removed and a new one made. Throws exit status 73.
    public func prepare(inPlace: Bool = false) throws(GraphError) {
        discard()
        var (folderPath, name) = Self.split(path)
        guard !name.isEmpty, name != ".", name != ".." else {
            throw failure("cannot write \"\(path)\": it names a folder, not a file")
        }
        var folder = try openFolder(folderPath)
        var hops = 0
        while true {
            if name.utf8.count > 255 {
                close(folder)
                throw failure("cannot write \"\(path)\": its name is \(name.utf8.count) bytes long, and a file name takes at most 255")
            }
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 || errno == ENOENT else {
                let reason = Self.errnoText()
                close(folder)
                throw failure("cannot write \"\(path)\": \(reason)")
            }
            let exists = info.st_ino != 0
            guard exists, info.st_mode & S_IFMT == S_IFLNK else {
                if exists, let problem = Self.notAFile(info.st_mode) {
                    close(folder)
                    throw failure("cannot write \"\(path)\": it is \(problem); an output is written beside its target and renamed over it, "
                                  + "so the target must be a regular file")
                }
                break
            }
            // A symbolic link at the final name.
            let destination = Self.readLink(folder, name) ?? "?"
            guard Self.followsSymbolicLinks else {
                close(folder)
                throw failure("cannot write \"\(path)\": it is a symbolic link (to \"\(destination)\"); outputs are not written through "
                              + "links, which anyone who can write its folder could point at another file: remove the link, or write "
                              + "through it with --follow-symlinks")
            }
            hops += 1
            guard hops <= 40 else {
                close(folder)
                throw failure("cannot write \"\(path)\": too many symbolic links")
            }
            // Where the link leads, from the link's folder.
            let (linkFolder, linkName) = Self.split(destination)
            let next: Int32
            do throws(GraphError) {
                next = try openFolder(linkFolder, from: destination.hasPrefix("/") ? nil : folder)
            } catch {
                close(folder)
                throw error
            }
            close(folder)
            folder = next
            if destination.hasPrefix("/") {
                folderPath = linkFolder
            } else if linkFolder != "." {
                folderPath += "/" + linkFolder
            }
            name = linkName
        }
        let folderIdentity = FileIdentity(descriptor: folder)
        if inPlace {
            try createInPlace(folder: folder, name: name, folderIdentity: folderIdentity, folderPath: folderPath)
        } else {
            try claimTemporary(folder: folder, name: name, folderIdentity: folderIdentity, folderPath: folderPath)
        }
        Self.live.withLock { $0[ObjectIdentifier(self)] = WeakFile(self) }
    }

    /// A folder path and a name: `out/a.json` → (`out`, `a.json`); `a.json` → (`.`, `a.json`).
    package static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = path[..<slash]
        return (folder.isEmpty ? "/" : String(folder), String(path[path.index(after: slash)...]))
    }

    /// Opens `folder` (relative to `base`, or the current folder; from the root when absolute)
    /// one component at a time, none followed if it is a link, making missing ones (`creating`).
    /// A link on the way is followed when root or this user owns it (its target was then chosen
    /// by one of them), or when ``followsSymbolicLinks`` is set; anyone else's link is refused,
    /// since it could lead the write anywhere.
    func openFolder(_ folder: String, from base: Int32? = nil, creating: Bool = true) throws(GraphError) -> Int32 {
        let flags = Self.pathOnly | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        var fd = folder.hasPrefix("/") ? open("/", flags) : base.map { dup($0) } ?? open(".", flags)
        guard fd >= 0 else { throw failure("cannot write \"\(path)\": cannot open its folder: \(Self.errnoText())") }
        var pending = folder.split(separator: "/").map(String.init)
        var walked = folder.hasPrefix("/") ? "" : "."
        var steps = 0
        while !pending.isEmpty {
            steps += 1
            let part = pending.removeFirst()
            if part == "." { continue }
            let here = walked == "." ? part : walked + "/" + part
            func fail(_ message: String) -> GraphError {
                close(fd)
                return failure(message)
            }
            guard steps < 256 else { throw fail("cannot write \"\(path)\": too many symbolic links in \"\(here)\"") }
            let next = openat(fd, part, flags)
            if next >= 0 {
                close(fd)
                fd = next
                walked = here
                continue
            }
            let openError = errno
            var info = stat()
            guard fstatat(fd, part, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                guard errno == ENOENT, creating else { throw fail("cannot write \"\(path)\": \"\(here)\": \(Self.errnoText())") }
                // Missing: made here, and opened (without following) on the next round.
                guard mkdirat(fd, part, 0o777) == 0 || errno == EEXIST else {
                    throw fail("cannot create the folder for \"\(path)\": \"\(here)\": \(Self.errnoText())")
                }
                pending.insert(part, at: 0)
                continue
            }
            switch info.st_mode & S_IFMT {
            case S_IFLNK:
                guard Self.followsSymbolicLinks || info.st_uid == 0 || info.st_uid == geteuid() else {
                    throw fail("cannot write \"\(path)\": \"\(here)\" is a symbolic link owned by another user (uid \(info.st_uid)), "
                               + "who could point it anywhere; outputs are not written through it (--follow-symlinks to allow)")
                }
                guard let destination = Self.readLink(fd, part) else {
                    throw fail("cannot write \"\(path)\": cannot read the link \"\(here)\": \(Self.errnoText())")
                }
                pending = destination.split(separator: "/").map(String.init) + pending
                if destination.hasPrefix("/") {
                    close(fd)
                    fd = open("/", flags)
                    guard fd >= 0 else { throw failure("cannot write \"\(path)\": cannot open \"/\": \(Self.errnoText())") }
                }
                walked = here
            case S_IFDIR:
                // Made by another run between the open and the look (two batch workers making
                // the same missing folder): opened on the next round, as a folder made here is.
                if openError == ENOENT {
                    pending.insert(part, at: 0)
                    continue
                }
                throw fail("cannot write \"\(path)\": cannot open the folder \"\(here)\": \(String(cString: strerror(openError)))")
            default:
                throw fail("cannot write \"\(path)\": \"\(here)\" is a file, not a folder")
            }
        }
        return fd
    }

    /// Creates the temporary file and holds a lock on it until ``commit()`` or ``discard()``.
    /// One left by a killed run (a regular file nobody holds) is replaced; one that another live
    /// process holds means two runs would write this output at once, and this one stops before
    /// it starts. Anything else under that name (a link, a pipe) was not made by a run: refused.
    private func claimTemporary(folder: Int32, name: String, folderIdentity: FileIdentity, folderPath: String) throws(GraphError) {
        let temporaryName = Self.temporaryName(for: name)
        var busy = false
        for _ in 0..<3 {
            let fd = openat(folder, temporaryName, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                    opened.withLock {
                        $0 = Opened(folder: folder, name: name, temporaryName: temporaryName, file: fd,
                                        identity: FileIdentity(descriptor: fd), folderIdentity: folderIdentity, folderPath: folderPath)
                    }
                    return
                }
                close(fd)
                busy = true  // locked between the two calls: another run's
                break
            }
            guard errno == EEXIST else {
                let reason = Self.errnoText()
                close(folder)
                throw failure("cannot write in \"\(folderPath)\": \(reason)")
            }
            // A killed run's is replaced. Another run's, in this process or another, is locked
            // (a flock lock belongs to an open file: a second open of it cannot take it).
            switch Self.leftover(in: folder, temporaryName) {
            case .free: unlinkat(folder, temporaryName, 0)
            case .held: busy = true
            case .foreign(let what):
                close(folder)
                throw failure("cannot write \"\(path)\": its temporary name \"\(folderPath)/\(temporaryName)\" is \(what), "
                              + "which no run made; remove it")
            }
            if busy { break }
        }
        close(folder)
        throw failure("cannot write \"\(path)\": another run is writing it now (its temporary file \"\(folderPath)/\(temporaryName)\" is in use)")
    }

    enum Leftover {
        /// A regular file nobody holds: a killed run's.
        case free
        /// Locked: a live run's.
        case held
        /// Not a run's temporary file: a link, a pipe, a device, a folder.
        case foreign(String)
    }

    /// What is under a temporary name, looked at without following a link and without opening
    /// anything but a regular file.
    static func leftover(in folder: Int32, _ name: String) -> Leftover {
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return .free }  // gone meanwhile
        if let problem = notAFile(info.st_mode) { return .foreign(problem) }
        let fd = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .free : .foreign("not readable (\(errnoText()))") }
        defer { close(fd) }
        var opened = stat()
        guard fstat(fd, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG else { return .foreign("not a regular file") }
        // A run holds its temporary file's lock as it holds its folders' (RunFolder's rule).
        return RunFolder.lock(fd) != nil ? .free : .held
    }

    /// A fragmented recording's file, made anew under the target name: an existing regular
    /// file there is removed first (its replacement is written from the start), never written
    /// into (it may be a hard link to another file).
    private func createInPlace(folder: Int32, name: String, folderIdentity: FileIdentity, folderPath: String) throws(GraphError) {
        for _ in 0..<3 {
            let fd = openat(folder, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if fd >= 0 {
                guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                    Glibc.close(fd)
                    close(folder)
                    throw failure("cannot write \"\(path)\": another run is writing it now")
                }
                opened.withLock {
                    $0 = Opened(folder: folder, name: name, temporaryName: nil, file: fd,
                                    identity: FileIdentity(descriptor: fd), folderIdentity: folderIdentity, folderPath: folderPath)
                }
                return
            }
            guard errno == EEXIST else { break }
            switch Self.leftover(in: folder, name) {
            case .free: unlinkat(folder, name, 0)
            case .held:
                close(folder)
                throw failure("cannot write \"\(path)\": another run is writing it now")
            case .foreign(let what):
                close(folder)
                throw failure("cannot write \"\(path)\": it is \(what)")
            }
        }
        let reason = Self.errnoText()
        close(folder)
        throw failure("cannot write in \"\(folderPath)\": \(reason)")
    }

    // MARK: Writing

    /// Writes all of `bytes` at the descriptor's position. Throws 73 naming the output.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(GraphError) {
        let fd = descriptor
        guard fd >= 0 else { throw failure("cannot write \"\(path)\": it is not open for writing") }
        let failed = Self.writeAll(fd, bytes)
        if failed != 0 { throw failure("cannot write \"\(path)\": \(String(cString: strerror(failed)))") }
    }

    public func write(_ bytes: [UInt8]) throws(GraphError) {
        let fd = descriptor
        guard fd >= 0 else { throw failure("cannot write \"\(path)\": it is not open for writing") }
        let failed = bytes.withUnsafeBytes { Self.writeAll(fd, $0) }
        if failed != 0 { throw failure("cannot write \"\(path)\": \(String(cString: strerror(failed)))") }
    }

    /// 0, or the errno of the write that failed.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return 0
    }

    // MARK: Every file of the process

    struct WeakFile: Sendable {
        weak let file: OutputFile?
        init(_ file: OutputFile) { self.file = file }
    }

    /// The files this process is writing now.
    static let live = Guarded<[ObjectIdentifier: WeakFile]>([:])

    /// Removes every temporary file this process is writing (and every in-place file, which a
    /// cancel removes too): what a process that must exit at once (a signal during its start,
    /// a run that cannot be stopped) leaves behind otherwise.
    public static func discardAll() {
        let files = live.withLock { $0.values.compactMap(\.file) }
        for file in files {
            if file.opened.withLock({ $0?.temporaryName == nil }) { file.removeTarget() } else { file.discard() }
        }
    }

    // MARK: Helpers

    func failure(_ message: String) -> GraphError {
        GraphError(.outputUnwritable, at: location, message, node: node)
    }

    /// What a file of mode `mode` is, when it is not a regular file: "a named pipe".
    static func notAFile(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a folder"
        case S_IFLNK: "a symbolic link"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFIFO: "a named pipe"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    static func readLink(_ folder: Int32, _ name: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBytes { readlinkat(folder, name, $0.baseAddress!.assumingMemoryBound(to: CChar.self), Int(PATH_MAX)) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }

    /// `O_PATH`, which Glibc's Swift module does not export (the same on every Linux
    /// architecture Swift runs on).
    static let pathOnly: Int32 = 0o10000000

    /// The system's words for why a file operation failed ("Permission denied").
    public static func reason(_ error: any Error) -> String {
        if let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }
}
