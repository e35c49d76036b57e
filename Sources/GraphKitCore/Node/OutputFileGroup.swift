import Glibc

/// Files of one folder that appear together or not at all: numbered pictures. Each is written
/// complete (flushed to the disk) into a staging folder that this group makes in the target folder
/// (`.NAME-3f9a0c61.partial/`, private to the run), and only when every one is written are they
/// renamed into place, one after another, with nothing left to fail but the renames; a failure
/// before that (a full disk, an encoder error, a signal) removes the staging folder and leaves the
/// target folder as it was, with an earlier run's complete set untouched. The run holds a lock on
/// its staging folder (``RunFolder``); a group's commit removes the staging folders of its stem that
/// runs killed before it started left (`kill -9`: nobody holds them).
///
/// The target folder is opened once and the renames are made relative to its descriptor, as for
/// ``OutputFile``; a symbolic link or anything else than a regular file at a final name is refused
/// (73) before the first rename (``OutputFile/followsSymbolicLinks`` lets a link be written
/// through: the rename then replaces the link itself, as a link's target is not in the group's
/// folder).
public final class OutputFileGroup: Sendable {
    public let folder: String
    public let location: String
    public let node: String

    private struct Opened {
        var folder: Int32
        var staging: Int32
        var stagingName: String
        /// The staging folders' common prefix (`.thumbnails-`), and when this one was locked.
        var prefix: String
        var lockedAt: timespec
        /// The files written, in order.
        var names: [String] = []
    }
    private let opened = Guarded<Opened?>(nil)

    public init(folder: String, location: String, node: String) {
        self.folder = folder
        self.location = location
        self.node = node
    }

    deinit { discard() }

    /// Opens the folder (made if missing) and makes the staging folder in it. Throws 73.
    public func prepare(stem: String = "files") throws(GraphError) {
        discard()
        let probe = OutputFile(path: WrittenFile.path(".probe", in: folder), location: location, node: node)
        let fd = try probe.openFolder(folder)
        for _ in 0..<8 {
            let name = ".\(stem)-\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).partial"
            guard mkdirat(fd, name, 0o700) == 0 else {
                if errno == EEXIST { continue }
                let reason = OutputFile.errnoText()
                close(fd)
                throw failure("cannot write in \"\(folder)\": \(reason)")
            }
            let staging = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            // Held while the run writes: one that nobody holds is a killed run's (``RunFolder``).
            guard staging >= 0, let lockedAt = RunFolder.lock(staging) else {
                if staging >= 0 { close(staging) }
                let reason = OutputFile.errnoText()
                unlinkat(fd, name, AT_REMOVEDIR)
                close(fd)
                throw failure("cannot write in \"\(folder)\": \(reason)")
            }
            opened.withLock { $0 = Opened(folder: fd, staging: staging, stagingName: name, prefix: ".\(stem)-", lockedAt: lockedAt) }
            return
        }
        close(fd)
        throw failure("cannot write in \"\(folder)\": no free name for its staging folder")
    }

    /// Writes `bytes` as `name` into the staging folder, flushed to the disk. Throws 73 naming
    /// the file and the system's reason (a full disk).
    public func add(_ name: String, _ bytes: [UInt8]) throws(GraphError) {
        try opened.withLock { (o) throws(GraphError) in
            guard let staging = o?.staging else { throw failure("cannot write \"\(WrittenFile.path(name, in: folder))\": the group was not prepared") }
            let fd = openat(staging, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw failure("cannot write \"\(WrittenFile.path(name, in: folder))\": \(OutputFile.errnoText())") }
            o!.names.append(name)
            defer { close(fd) }
            let written = bytes.withUnsafeBytes { OutputFile.writeAll(fd, $0) }
            guard written == 0, fsync(fd) == 0 else {
                let reason = String(cString: strerror(written != 0 ? written : errno))
                throw failure("cannot write \"\(WrittenFile.path(name, in: folder))\": \(reason)")
            }
        }
    }

    /// Renames every file written into place, after checking that no final name holds a link or
    /// anything else than a file; then removes the staging folder. Throws 73 (and removes what is
    /// still staged) when a name is refused before any rename, or a rename fails.
    public func commit() throws(GraphError) {
        try opened.withLock { (opened) throws(GraphError) in
            guard let o = opened else { return }
            defer { remove(o); opened = nil }
            try check(o)
            for name in o.names {
                guard renameat(o.staging, name, o.folder, name) == 0 else {
                    throw failure("cannot move \"\(WrittenFile.path(name, in: folder))\" into place: \(OutputFile.errnoText())")
                }
            }
            // The staging folders runs killed before this one started left (nobody holds them).
            for name in RunFolder.names(in: o.folder) where name != o.stagingName && Self.isStaging(name, prefix: o.prefix) {
                RunFolder.removeIfAbandoned(name, in: o.folder, depth: 0, sparing: [], changedBefore: o.lockedAt)
            }
        }
    }

    /// Whether ``commit()`` would rename every file: no final name holds a link or anything
    /// else than a file. Throws what ``commit()`` would, removing nothing, so that files outside
    /// the group can be checked too before the first rename.
    public func checkCommit() throws(GraphError) {
        try opened.withLock { (opened) throws(GraphError) in
            if let o = opened { try check(o) }
        }
    }

    /// Whether `name` is a staging folder's: the prefix, one to eight hex digits, `.partial`.
    static func isStaging(_ name: String, prefix: String) -> Bool {
        guard name.hasPrefix(prefix), name.hasSuffix(".partial") else { return false }
        let digits = name.utf8.dropFirst(prefix.utf8.count).dropLast(8)
        return (1...8).contains(digits.count) && digits.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    private func check(_ o: Opened) throws(GraphError) {
        for name in o.names {
            var info = stat()
            guard fstatat(o.folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFLNK, OutputFile.followsSymbolicLinks { continue }
            if let problem = OutputFile.notAFile(info.st_mode) {
                throw failure("cannot write \"\(WrittenFile.path(name, in: folder))\": it is \(problem); no file of the group was written")
            }
        }
    }

    /// Removes the staging folder and what it holds (a failed or cancelled run).
    public func discard() {
        opened.withLock { opened in
            guard let o = opened else { return }
            remove(o)
            opened = nil
        }
    }

    private func remove(_ o: Opened) {
        for name in o.names { unlinkat(o.staging, name, 0) }
        close(o.staging)
        unlinkat(o.folder, o.stagingName, AT_REMOVEDIR)
        close(o.folder)
    }

    private func failure(_ message: String) -> GraphError {
        GraphError(.outputUnwritable, at: location, message, node: node)
    }
}
