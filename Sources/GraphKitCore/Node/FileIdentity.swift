import Glibc

/// A file's identity (device and inode): two paths, a hard link or a symbolic link to one file
/// give one identity.
public struct FileIdentity: Hashable, Sendable {
    public let device: UInt64
    public let inode: UInt64

    public init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    init(descriptor: Int32) {
        var info = stat()
        fstat(descriptor, &info)
        self.init(info)
    }

    /// What `name` in `folder` is, itself (not where a link leads); nil when nothing is there.
    init?(at folder: Int32, _ name: String) {
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        self.init(info)
    }

    /// The file `path` leads to (links followed); nil when there is none.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }
}


