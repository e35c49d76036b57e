import Glibc
import GraphKitCore

/// Where a node keeps audio aside that may outgrow its memory (`effect.normalize`'s two-pass
/// input, `effect.trimSilence`'s quiet stretches): a file in `$TMPDIR` (else /tmp) removed from
/// its folder as soon as it is made, so that nothing is left whatever becomes of the process;
/// closed with the node.
final class SpillFile: Sendable {
    let fd: Int32
    let folder: String
    let node: String
    /// What the file keeps, for messages: "cannot keep \(what) aside in …".
    let what: String

    init(node: String, keeping what: String = "the input for the second pass") throws(GraphError) {
        self.node = node
        self.what = what
        folder = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((folder + "/graphkit-spill-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw GraphError(.outputUnwritable, "cannot keep \(what) aside in \"\(folder)\": \(Self.reason(errno))", node: node)
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        self.fd = fd
    }

    deinit { close(fd) }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)).lowercased() }

    /// Appends float samples at the end of what was appended so far.
    func append(_ samples: [Float]) throws(GraphError) {
        try samples.withUnsafeBytes { bytes in Result { () throws(GraphError) in try write(bytes, at: nil) } }.get()
    }

    /// Writes `bytes` at byte `offset`, or at the end of what was appended so far when nil.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int?) throws(GraphError) {
        var done = 0
        while done < bytes.count {
            let n = offset.map { pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t($0 + done)) }
                ?? Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw GraphError(.outputUnwritable, "cannot keep \(what) aside in \"\(folder)\": \(Self.reason(errno))", node: node)
            }
            done += n
        }
    }

    /// Up to `count` float samples from sample `offset`; none at the end.
    func read(at offset: Int, count: Int) throws(GraphError) -> [Float] {
        var samples = [Float](repeating: 0, count: count)
        let got = try samples.withUnsafeMutableBytes { bytes in Result { () throws(GraphError) in try read(into: bytes, at: offset * 4) } }.get()
        samples.removeLast(count - got / 4)
        return samples
    }

    /// Fills `bytes` from byte `offset` on; returns how many it read (fewer at the end).
    func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int) throws(GraphError) -> Int {
        var done = 0
        while done < bytes.count {
            let n = pread(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw GraphError(.runFailed, "cannot read back \(what) kept in \"\(folder)\": \(Self.reason(errno))", node: node)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Gives back the file's space past `length` bytes; appending goes on from there.
    func truncate(to length: Int) {
        _ = ftruncate(fd, off_t(length))
        _ = lseek(fd, off_t(length), SEEK_SET)
    }

    /// Gives back all the file's space: it is empty again.
    func empty() { truncate(to: 0) }
}
