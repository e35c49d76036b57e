import Glibc

/// A folder a run makes for its own files (an HLS package's generation, an ``OutputFileGroup``'s
/// staging folder) and holds a lock on while it runs (`flock` on its descriptor), so that a
/// folder of that kind which nobody holds is a killed run's (`kill -9`, a power cut): a later
/// run of the same output removes it (``removeIfAbandoned(_:in:depth:sparing:changedBefore:)``).
/// Everything is done relative to the descriptor of the folder that holds it, and no link is
/// followed.
package enum RunFolder {
    /// Takes the lock on the folder (or a run's temporary file, ``OutputFile``) open as
    /// `descriptor`: the time of its last change then (what a later sweep compares with), or nil
    /// when someone else holds it, a running run.
    package static func lock(_ descriptor: Int32) -> timespec? {
        var info = stat()
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, fstat(descriptor, &info) == 0 else { return nil }
        return info.st_ctim
    }

    /// The names in the folder open as `folder` (the descriptor stays open; it may be an
    /// `O_PATH` one, as ``OutputFile`` opens folders).
    package static func names(in folder: Int32) -> [String] {
        let copy = openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard copy >= 0 else { return [] }
        guard let dir = fdopendir(copy) else {
            close(copy)
            return []
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the folder `name` in `folder` (and what it holds, `depth` levels of folders down)
    /// when it is a folder of this user's that nobody holds and, with `changedBefore`, one not
    /// changed since then (a running run's, made just before it took its lock, is newer). A file
    /// whose identity is in `sparing` stays, and so does its folder.
    package static func removeIfAbandoned(_ name: String, in folder: Int32, depth: Int, sparing: Set<FileIdentity>,
                                          changedBefore limit: timespec?) {
        let fd = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), lock(fd) != nil else { return }
        if let limit {
            let changed = info.st_ctim
            guard changed.tv_sec < limit.tv_sec || (changed.tv_sec == limit.tv_sec && changed.tv_nsec < limit.tv_nsec) else { return }
        }
        removeContents(of: fd, depth: depth, sparing: sparing)
        unlinkat(folder, name, AT_REMOVEDIR)
    }

    /// Removes the folder `name` in `folder` and what it holds, `depth` levels of folders down,
    /// without following a link (a link is removed, not where it leads). What it cannot remove,
    /// or spares, stays, and so does its folder.
    package static func removeTree(_ name: String, in folder: Int32, depth: Int, sparing: Set<FileIdentity>) {
        let fd = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        removeContents(of: fd, depth: depth, sparing: sparing)
        close(fd)
        unlinkat(folder, name, AT_REMOVEDIR)
    }

    private static func removeContents(of folder: Int32, depth: Int, sparing: Set<FileIdentity>) {
        for name in names(in: folder) {
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                guard depth > 0 else { continue }
                removeTree(name, in: folder, depth: depth - 1, sparing: sparing)
            } else if !sparing.contains(FileIdentity(info)) {
                unlinkat(folder, name, 0)
            }
        }
    }
}
