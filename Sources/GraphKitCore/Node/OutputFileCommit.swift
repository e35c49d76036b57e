import Glibc

/// Finishing an ``OutputFile``: the rename into place (or the exchange with what was there), the
/// checks before it, and the removal of what a failed run wrote.
extension OutputFile {
    /// Moves the finished temporary file under the target name: rename(2), relative to the
    /// folder opened at the start, replaces it atomically, so readers see the old file or the new
    /// one. Refused (73, and the temporary file removed if it is still ours) when the temporary
    /// name no longer holds the file written, the target became something else than a regular
    /// file, or the folder is no longer at its path: someone changed them during the run.
    public func commit() throws(GraphError) {
        _ = try commit(exchanging: false)
    }

    /// ``commit()``, returning what the target name held before (nil: nothing), exchanged with
    /// the new file in one step (`renameat2` with `RENAME_EXCHANGE`), so that the file replaced
    /// is exactly the one read, whoever else writes the folder: a package's playlist learns which
    /// generation it replaced. At most `limit` bytes of it are returned; it is removed.
    public func commitReplacing(limit: Int = 1 << 22) throws(GraphError) -> [UInt8]? {
        try commit(exchanging: true, limit: limit)
    }

    /// Whether ``commit()`` would find everything as it left it: the temporary file, the target
    /// name (nothing, or a regular file) and the folder. Throws what ``commit()`` would, removing
    /// nothing, so that several files can be checked before the first of them is renamed.
    public func checkCommit() throws(GraphError) {
        try opened.withLock { (opened) throws(GraphError) in
            guard let o = opened else { throw failure("cannot move the finished file to \"\(path)\": it was not written") }
            if let temporaryName = o.temporaryName { try check(o, temporaryName) }
        }
    }

    /// The checks before a rename (see ``checkCommit()``); a refusal removes the temporary file
    /// when `removing`.
    private func check(_ o: Opened, _ temporaryName: String, removing: Bool = false) throws(GraphError) {
        guard FileIdentity(at: o.folder, temporaryName) == o.identity else {
            throw failure("cannot move the finished file to \"\(path)\": its temporary file \"\(o.folderPath)/\(temporaryName)\" "
                          + "was replaced or removed while the run wrote it")
        }
        func refuse(_ why: String) -> GraphError {
            if removing { removeIfOurs(o) }
            return failure("cannot move the finished file to \"\(path)\": \(why)")
        }
        var info = stat()
        if fstatat(o.folder, o.name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
            if info.st_mode & S_IFMT == S_IFLNK {
                throw refuse("it became a symbolic link while the run wrote it; outputs are not written through links")
            }
            if let problem = Self.notAFile(info.st_mode) { throw refuse("it became \(problem) while the run wrote it") }
        }
        var folderNow = stat()
        guard stat(o.folderPath, &folderNow) == 0, FileIdentity(folderNow) == o.folderIdentity else {
            throw refuse("its folder \"\(o.folderPath)\" was moved or replaced while the run wrote it")
        }
    }

    private func commit(exchanging: Bool, limit: Int = 0) throws(GraphError) -> [UInt8]? {
        var previous: [UInt8]?
        try opened.withLock { (opened) throws(GraphError) in
            guard let o = opened else { throw failure("cannot move the finished file to \"\(path)\": it was not written") }
            defer { closeAll(o); opened = nil }
            guard let temporaryName = o.temporaryName else { return }  // written in place
            try check(o, temporaryName, removing: true)
            func refuse(_ why: String) -> GraphError {
                removeIfOurs(o)
                return failure("cannot move the finished file to \"\(path)\": \(why)")
            }
            if exchanging, let exchanged = Self.exchange(o.folder, temporaryName, o.name, limit: limit) {
                previous = exchanged
            } else if renameat(o.folder, temporaryName, o.folder, o.name) != 0 {
                let reason = Self.errnoText()
                throw refuse(reason)
            }
            guard FileIdentity(at: o.folder, o.name) == o.identity else {
                throw failure("cannot move the finished file to \"\(path)\": its temporary file was replaced as it was renamed")
            }
        }
        Self.live.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
        return previous
    }

    /// Exchanges `temporary` and `name` in `folder` when `name` holds a regular file, then reads
    /// that file (now at `temporary`, up to `limit` bytes) and removes it; nil when nothing was
    /// exchanged (no file there, or a kernel without `renameat2`: a plain rename follows).
    private static func exchange(_ folder: Int32, _ temporary: String, _ name: String, limit: Int) -> [UInt8]? {
        typealias Renameat2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
        let renameat2 = unsafeBitCast(symbol, to: Renameat2.self)
        guard renameat2(folder, temporary, folder, name, 2 /* RENAME_EXCHANGE */) == 0 else { return nil }
        let fd = openat(folder, temporary, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        var bytes: [UInt8] = []
        if fd >= 0 {
            var info = stat()
            if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
                bytes = [UInt8](repeating: 0, count: min(limit, Int(info.st_size)))
                let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                bytes = Array(bytes.prefix(max(0, n)))
            }
            close(fd)
        }
        unlinkat(folder, temporary, 0)
        return bytes
    }

    /// Removes the temporary file (a failed or cancelled run), if its name still holds the file
    /// this run made; what someone else put there is left alone.
    public func discard() {
        opened.withLock { opened in
            guard let o = opened else { return }
            if o.temporaryName != nil { removeIfOurs(o) }
            closeAll(o)
            opened = nil
        }
        Self.live.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }

    /// Removes the target itself (cancelling an in-place recording), if it is the file this run
    /// made.
    public func removeTarget() {
        opened.withLock { opened in
            guard let o = opened else { return }
            if o.temporaryName == nil, FileIdentity(at: o.folder, o.name) == o.identity { unlinkat(o.folder, o.name, 0) }
            closeAll(o)
            opened = nil
        }
        Self.live.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(self)) }
    }

    /// Removes a killed run's temporary file for this target, if that is what its temporary name
    /// holds (a regular file no live run holds), without following any link on the way.
    public func removeLeftovers() {
        let (folderPath, name) = Self.split(path)
        guard let folder = try? openFolder(folderPath, creating: false) else { return }
        defer { close(folder) }
        let temporaryName = Self.temporaryName(for: name)
        if case .free = Self.leftover(in: folder, temporaryName) { unlinkat(folder, temporaryName, 0) }
    }

    func removeIfOurs(_ o: Opened) {
        if let name = o.temporaryName, FileIdentity(at: o.folder, name) == o.identity { unlinkat(o.folder, name, 0) }
    }

    func closeAll(_ o: Opened) {
        Glibc.close(o.file)
        Glibc.close(o.folder)
    }
}
