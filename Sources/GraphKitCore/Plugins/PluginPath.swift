import Glibc

/// A plugin file or folder reached from `/` one name at a time, through descriptors, with every
/// folder on the way checked, as sshd checks `authorized_keys` (StrictModes): a plugin is code
/// that will run as the caller, so whoever can change it, or swap anything on its way, could run
/// code as the caller.
///
/// The rules, for the caller's effective uid U:
/// - the plugin file and every folder it is reached through (including the folders that hold a
///   symbolic link on the way, and `/`) belong to U or to root;
/// - none is writable by its group or by everyone. Group-writable is refused too: a group is other
///   users, and a plugin folder shared by a team should belong to a dedicated account;
/// - except that a folder above the plugin's own may be writable by others when its sticky bit is
///   set (`/tmp`): there only an entry's owner, or root, can rename or remove it, and the entry
///   below it is itself checked. The plugin's own folder gets no such exception: anyone could add
///   a file there;
/// - a symbolic link found in such a sticky folder belongs to U or root (as the kernel's
///   `fs.protected_symlinks`);
/// - the file is a regular file.
/// Every check is on an open descriptor (`fstat`), and the file handed back is the very file
/// checked (reopened through `/proc/self/fd`, never by name), so nothing can be swapped between
/// the check and the load.
struct PluginPath {
    /// Linux's O_PATH (glibc defines it only with _GNU_SOURCE): a descriptor that names a file
    /// without opening it, enough to fstat it, read a link, or open what is under a folder.
    static let O_PATH: Int32 = 0o10000000

    /// Why a path cannot be used.
    enum Failure: Error {
        /// Nothing there (a plugin folder from the path variable that does not exist is skipped).
        case missing
        /// The caller may not read or search it.
        case unreadable
        /// It breaks a rule; the text says which, naming the path and the permission.
        case refused(String)
    }

    /// A folder on the way, open with `O_PATH`.
    struct Folder {
        var fd: Int32
        var path: String
        var status: stat
    }

    /// The folders from `/` to the current one (each open), every folder a step was taken from
    /// (for the rules), and every descriptor opened (closed at the end, but the result's).
    private var stack: [Folder]
    private var visited: [Folder] = []
    private var opened: [Int32] = []
    private var links = 0
    private let uid = geteuid()

    /// What was reached: an open regular file (readable), or a folder to load the plugins of.
    enum Target {
        case file(fd: Int32, path: String, status: stat)
        case folder(PluginFolder)
    }

    /// Resolves an absolute `path` from `/`.
    static func open(_ path: String) throws(Failure) -> Target {
        var walk = try PluginPath(root: ())
        defer { walk.closeAll() }
        return try walk.resolve(path)
    }

    private init(root: Void) throws(Failure) {
        let fd = Glibc.open("/", Self.O_PATH | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable }
        var st = stat()
        fstat(fd, &st)
        stack = [Folder(fd: fd, path: "/", status: st)]
        opened = [fd]
    }

    /// A walk that starts in an open folder, already checked (its chain of folders from `/`).
    fileprivate init(in folder: PluginFolder) {
        stack = folder.chain
        visited = []
    }

    private mutating func closeAll() {
        for fd in opened { close(fd) }
        opened = []
    }

    private static func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

    /// Follows `path` (absolute: from `/`; relative: from the current folder) to its end.
    fileprivate mutating func resolve(_ path: String) throws(Failure) -> Target {
        if path.hasPrefix("/") { stack.removeSubrange(1...) }
        var names = path.split(separator: "/").map(String.init)
        while !names.isEmpty {
            let name = names.removeFirst()
            if name == "." { continue }
            if name == ".." {
                if stack.count > 1 { stack.removeLast() }
                continue
            }
            let parent = stack[stack.count - 1]
            let fd = openat(parent.fd, name, Self.O_PATH | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else {
                switch errno {
                case EACCES, EPERM: throw .unreadable
                case ENOENT, ENOTDIR: throw .missing
                default: throw .refused("cannot open \(Self.join(parent.path, name)): \(String(cString: strerror(errno)))")
                }
            }
            opened.append(fd)
            visited.append(parent)
            var st = stat()
            fstat(fd, &st)
            let here = Self.join(parent.path, name)
            switch st.st_mode & S_IFMT {
            case S_IFLNK:
                links += 1
                guard links <= 40 else { throw .refused("too many symbolic links on the way to \(path)") }
                if Self.othersMayWrite(parent.status), !owned(st) {
                    throw .refused("the symbolic link \(here), in a folder others may write (\(parent.path)), belongs to uid \(st.st_uid), neither you (uid \(uid)) nor root")
                }
                var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlinkat(fd, "", &buffer, buffer.count - 1)
                guard n > 0 else { throw .refused("cannot read the symbolic link \(here)") }
                let target = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                if target.hasPrefix("/") { stack.removeSubrange(1...) }
                names = target.split(separator: "/").map(String.init) + names
            case S_IFDIR:
                stack.append(Folder(fd: fd, path: here, status: st))
            default:
                guard names.isEmpty else { throw .missing }  // a file used as a folder: ENOTDIR
                guard st.st_mode & S_IFMT == S_IFREG else { throw .refused("\(here) is not a regular file") }
                try check(file: here, st)
                try checkFolders(final: parent)
                // The very file checked, readable: through its descriptor, not its name.
                let readable = Glibc.open("/proc/self/fd/\(fd)", O_RDONLY | O_CLOEXEC | O_NOCTTY)
                guard readable >= 0 else {
                    if errno == EACCES { throw .unreadable }
                    throw .refused("cannot reopen it through /proc/self/fd (is /proc mounted?): \(String(cString: strerror(errno)))")
                }
                var again = stat()
                fstat(readable, &again)
                guard again.st_dev == st.st_dev, again.st_ino == st.st_ino else {
                    close(readable)
                    throw .refused("\(here) changed while it was opened")
                }
                return .file(fd: readable, path: here, status: st)
            }
        }
        // A folder: the folder plugins live in, held to the strict rule.
        let folder = stack[stack.count - 1]
        try check(folder: folder, strict: true)
        try checkFolders(final: nil)
        let readable = Glibc.open("/proc/self/fd/\(folder.fd)", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard readable >= 0 else {
            if errno == EACCES { throw .unreadable }
            throw .refused("cannot reopen it through /proc/self/fd (is /proc mounted?): \(String(cString: strerror(errno)))")
        }
        // The chain stays open with the folder: its entries are opened from it.
        var chain: [Folder] = []
        for f in stack {
            let copy = fcntl(f.fd, F_DUPFD_CLOEXEC, 0)
            chain.append(Folder(fd: copy, path: f.path, status: f.status))
        }
        return .folder(PluginFolder(chain: chain, readable: readable))
    }

    private func owned(_ st: stat) -> Bool { st.st_uid == uid || st.st_uid == 0 }

    private static func othersMayWrite(_ st: stat) -> Bool { st.st_mode & (S_IWGRP | S_IWOTH) != 0 }

    private static func mode(_ st: stat) -> String { "mode 0" + String(st.st_mode & 0o7777, radix: 8) }

    private static func writers(_ st: stat) -> String { st.st_mode & S_IWOTH != 0 ? "everyone" : "its group" }

    private func check(file path: String, _ st: stat) throws(Failure) {
        guard owned(st) else {
            throw .refused("the plugin file \(path) belongs to uid \(st.st_uid), neither you (uid \(uid)) nor root: it would run as you")
        }
        if Self.othersMayWrite(st) {
            throw .refused("the plugin file \(path) is writable by \(Self.writers(st)) (\(Self.mode(st))): a plugin must be writable by its owner only (chmod go-w \(path))")
        }
    }

    private func check(folder: Folder, strict: Bool) throws(Failure) {
        guard owned(folder.status) else {
            throw .refused("the folder \(folder.path) belongs to uid \(folder.status.st_uid), neither you (uid \(uid)) nor root: its owner could swap the plugin")
        }
        let sticky = folder.status.st_mode & S_ISVTX != 0
        if Self.othersMayWrite(folder.status), strict || !sticky {
            throw .refused("the folder \(folder.path) is writable by \(Self.writers(folder.status)) (\(Self.mode(folder.status))): a plugin and every folder it is reached through must be writable by their owner only (chmod go-w \(folder.path))")
        }
    }

    /// Every folder a step was taken from; the plugin's own folder (`final`) strictly.
    private func checkFolders(final: Folder?) throws(Failure) {
        var seen = Set<String>()
        for folder in visited where seen.insert(folder.path).inserted {
            try check(folder: folder, strict: folder.status.st_dev == final?.status.st_dev && folder.status.st_ino == final?.status.st_ino)
        }
    }
}

/// A plugin folder that passed the checks, open: its `.so` files are opened from it, never by a
/// name built from its path.
final class PluginFolder {
    fileprivate let chain: [PluginPath.Folder]
    private let readable: Int32

    fileprivate init(chain: [PluginPath.Folder], readable: Int32) {
        self.chain = chain
        self.readable = readable
    }

    deinit {
        for f in chain { close(f.fd) }
        close(readable)
    }

    var path: String { chain[chain.count - 1].path }

    /// The names of the shared objects in it (`*.so`), sorted.
    func sharedObjects() -> [String] {
        let copy = fcntl(readable, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0, let dir = fdopendir(copy) else { return [] }
        defer { closedir(dir) }
        rewinddir(dir)
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".so") { names.append(name) }
        }
        return names.sorted()
    }

    /// One entry, resolved from this folder (a symbolic link is followed and checked as well).
    func open(_ name: String) throws(PluginPath.Failure) -> PluginPath.Target {
        var walk = PluginPath(in: self)
        return try walk.resolveEntry(name)
    }
}

extension PluginPath {
    /// Resolves an entry of a checked folder: the folder is the plugin's own (checked strictly
    /// already), its own descriptors stay open with it.
    fileprivate mutating func resolveEntry(_ name: String) throws(Failure) -> Target {
        // Only what this walk opened is closed: the folder's chain belongs to the folder.
        defer { closeAll() }
        return try resolve(name)
    }
}
