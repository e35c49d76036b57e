import Glibc

/// A file with no name for what may outgrow memory (a long recording's sample tables, a node's
/// audio kept for a second pass): made in `$TMPDIR`, else /var/tmp (on disk where /tmp is
/// memory, as on Debian 13), else /tmp when /var/tmp will not take it, with `mkstemp` (a new file only its owner can open, so a
/// name planted by someone else is never used) and unlinked at once, so that nothing is left
/// whatever becomes of the process. Closed when the last reference goes.
package final class TemporaryFile: Sendable {
    package let fd: Int32
    /// The folder it was made in, for messages.
    package let folder: String

    /// Makes the file in `folder`, else in the first of ``folders`` that takes it; throws
    /// errno's words for the last one tried when none has room or permission.
    package init(in folder: String? = nil) throws(ContainerError) {
        var failure: Int32 = 0
        for candidate in folder.map({ [$0] }) ?? Self.folders {
            var template = Array((candidate + "/graphkit-XXXXXX").utf8CString)
            // (mkostemp, which would set close-on-exec at once, is not in Swift's Glibc.)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else {
                failure = errno
                continue
            }
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            self.fd = fd
            self.folder = candidate
            return
        }
        throw ContainerError(Self.reason(failure))
    }

    deinit { close(fd) }

    /// `$TMPDIR` when set, else /var/tmp then /tmp: where a file is made, in that order.
    package static var folders: [String] {
        if let dir = getenv("TMPDIR").map({ String(cString: $0) }), !dir.isEmpty { return [dir] }
        return ["/var/tmp", "/tmp"]
    }

    /// The first of ``folders``, for messages.
    package static var folder: String { folders[0] }

    package static func reason(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }

    /// Writes all of `bytes` at byte `offset`, or after what was appended so far when nil;
    /// throws errno's words (a full disk).
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64?) throws(ContainerError) {
        let failed = MP4Writer.writeAll(fd, bytes, at: offset)
        guard failed == 0 else { throw ContainerError(Self.reason(failed)) }
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
