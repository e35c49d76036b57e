import Glibc

/// A file with no name for what may outgrow memory (a long recording's sample tables, a node's
/// audio kept for a second pass): made in `$TMPDIR`, else /var/tmp (on disk where /tmp is
/// memory, as on Debian 13), else /tmp, with `mkstemp` (a new file only its owner can open, so a
/// name planted by someone else is never used) and unlinked at once, so that nothing is left
/// whatever becomes of the process. Closed when the last reference goes.
package final class TemporaryFile: Sendable {
    package let fd: Int32
    /// The folder it was made in, for messages.
    package let folder: String

    /// Makes the file in `folder`; throws errno's words when it has no room or no permission.
    package init(in folder: String = TemporaryFile.folder) throws(ContainerError) {
        var template = Array((folder + "/graphkit-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw ContainerError(Self.reason(errno)) }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
        self.folder = folder
    }

    deinit { close(fd) }

    /// `$TMPDIR` when set, else /var/tmp when it is a folder, else /tmp.
    package static var folder: String {
        if let dir = getenv("TMPDIR").map({ String(cString: $0) }), !dir.isEmpty { return dir }
        var st = stat()
        return stat("/var/tmp", &st) == 0 && st.st_mode & S_IFMT == S_IFDIR ? "/var/tmp" : "/tmp"
    }

    package static func reason(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }

    /// Writes all of `bytes` at byte `offset`, or after what was appended so far when nil;
    /// throws errno's words (a full disk).
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64?) throws(ContainerError) {
        var done = 0
        while done < bytes.count {
            let n = offset.map { pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t($0) + off_t(done)) }
                ?? Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ContainerError(n < 0 ? Self.reason(errno) : "nothing was written") }
            done += n
        }
    }

    /// Fills `bytes` from byte `offset` on; returns how many it read (fewer at the end).
    package func read(into bytes: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(ContainerError) -> Int {
        var done = 0
        while done < bytes.count {
            let n = pread(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw ContainerError(Self.reason(errno)) }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Gives back the file's space past `length` bytes; appending goes on from there.
    package func truncate(to length: UInt64) {
        _ = ftruncate(fd, off_t(length))
        _ = lseek(fd, off_t(length), SEEK_SET)
    }
}
