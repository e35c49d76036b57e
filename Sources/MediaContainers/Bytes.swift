import Glibc

/// What goes wrong reading or editing a container: a phrase that completes "the file …" or
/// "its index is malformed: …" ("its stsz box ends after 12 of its 20 bytes"). The library's one
/// error; GraphKit's layers above wrap it in a GraphError that names the file and the node.
public struct ContainerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Bytes to read by offset: a file (``FileBytes``, through its descriptor) or memory
/// (``MemoryBytes``). Every walk in this library reads through one, so the same code reads a
/// file on disk, an index handed over by a demuxer and a fuzzer's input.
public protocol ByteSource {
    /// How many bytes there are.
    var count: UInt64 { get }
    /// Up to `count` bytes at `offset`: fewer only where the source ends (none past it).
    /// Throws only when the bytes cannot be read (an I/O error).
    func read(at offset: UInt64, count: Int) throws(ContainerError) -> [UInt8]
}

/// Bytes in memory.
public struct MemoryBytes: ByteSource, Sendable {
    public let bytes: ArraySlice<UInt8>
    public init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }
    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }
    public var count: UInt64 { UInt64(bytes.count) }

    public func read(at offset: UInt64, count: Int) -> [UInt8] {
        guard offset < self.count, count > 0 else { return [] }
        let start = bytes.startIndex + Int(offset)
        return Array(bytes[start..<(start + min(count, bytes.endIndex - start))])
    }
}

/// A file read (and, for the editor, written) through its descriptor by offset: the library's
/// one pread loop and one pwrite loop. Opened by path (owned: closed when this goes) or over a
/// descriptor someone else holds (borrowed: never closed here, never reopened by name).
public final class FileBytes: ByteSource, Sendable {
    public let descriptor: Int32
    /// The size when this was made (a file being written may grow after).
    public let count: UInt64
    private let owned: Bool

    /// The regular file at `path`, for reading; nil when it cannot be opened or is not a
    /// regular file (a folder, a pipe: opened without blocking, so a pipe with no writer does
    /// not hold the caller).
    public convenience init?(path: String) {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            return nil
        }
        self.init(fd, size: st.st_size, owned: true)
    }

    /// The file open as `descriptor` (readable; writable too for the editor), which stays open
    /// when this goes. Anything but a regular file (a pipe, a device) reads as empty: its bytes
    /// cannot be read by offset.
    public convenience init(descriptor: Int32) {
        var st = stat()
        let regular = fstat(descriptor, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        self.init(descriptor, size: regular ? st.st_size : -1, owned: false)
    }

    /// The file open as `descriptor`, which this now owns: closed when this goes (a file a
    /// caller opened once, checked, and reads only through it).
    public convenience init(owning descriptor: Int32) {
        var st = stat()
        let regular = fstat(descriptor, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        self.init(descriptor, size: regular ? st.st_size : -1, owned: true)
    }

    /// `size` is the regular file's stated size, or -1 for anything else (empty).
    private init(_ fd: Int32, size: off_t, owned: Bool) {
        descriptor = fd
        self.owned = owned
        // Files whose size the kernel does not know until they are read (those under /proc
        // and /sys say 0) are measured by reading them: their size is what a read gives.
        count = size > 0 ? UInt64(size) : size == 0 ? Self.measure(fd) : 0
    }

    deinit { if owned { close(descriptor) } }

    /// The bytes a read of `fd` gives, up to 64 MiB (a file whose size is unknown is small).
    private static func measure(_ fd: Int32) -> UInt64 {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var total: UInt64 = 0
        while total < 64 << 20 {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(total)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            total += UInt64(n)
        }
        return total
    }

    public func read(at offset: UInt64, count: Int) throws(ContainerError) -> [UInt8] {
        guard offset < self.count, count > 0 else { return [] }
        let want = Int(min(UInt64(count), self.count - offset))
        var bytes = [UInt8](repeating: 0, count: want)
        let done = try bytes.withUnsafeMutableBytes { raw in Result { () throws(ContainerError) in try read(at: offset, into: raw) } }.get()
        if done < want { bytes.removeLast(want - done) }
        return bytes
    }

    /// Reads up to `buffer.count` bytes at `offset` straight into `buffer` (a sample's own
    /// memory, with no copy between); returns how many were read: fewer where the file ends.
    public func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws(ContainerError) -> Int {
        guard offset < count, let base = buffer.baseAddress else { return 0 }
        let want = Int(min(UInt64(buffer.count), count - offset))
        var done = 0
        while done < want {
            let n = pread(descriptor, base + done, want - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw ContainerError(String(cString: strerror(errno)))
            }
            if n == 0 { break }  // shorter than it was: what is there
            done += n
        }
        return done
    }

    /// Writes all of `bytes` at `offset` (the descriptor must be open for writing).
    package func write(_ bytes: some Collection<UInt8>, at offset: UInt64) throws(ContainerError) {
        let array = Array(bytes)
        var done = 0
        while done < array.count {
            let n = array.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, array.count - done, off_t(offset) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ContainerError(n == 0 ? "nothing could be written" : String(cString: strerror(errno))) }
            done += n
        }
    }

    /// Moves the bytes of `range` by `shift` within the file, in place (overlapping ranges
    /// too: from the end when they move forward).
    package func move(_ range: Range<UInt64>, by shift: Int64) throws(ContainerError) {
        guard shift != 0, !range.isEmpty else { return }
        let total = range.upperBound - range.lowerBound
        var done: UInt64 = 0
        while done < total {
            let n = min(UInt64(1 << 20), total - done)
            let from = shift > 0 ? range.upperBound - done - n : range.lowerBound + done
            let chunk = try read(at: from, count: Int(n))
            guard chunk.count == Int(n) else { throw ContainerError("the file ends at byte \(from + UInt64(chunk.count)), before byte \(from + n)") }
            try write(chunk, at: UInt64(Int64(from) + shift))
            done += n
        }
    }

    /// Cuts (or extends) the file to `size` bytes.
    package func truncate(to size: UInt64) throws(ContainerError) {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw ContainerError(String(cString: strerror(errno))) }
    }
}

/// Reads big-endian fields from bytes in memory, one after another, and never past their end:
/// a read that would throws, so a damaged count or size cannot read out of bounds or loop
/// through billions of entries. The one way this library reads a box's fields.
package struct ByteReader {
    package let bytes: ArraySlice<UInt8>
    /// The index (into `bytes`) of the next byte.
    package private(set) var position: Int

    package init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    package init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    package var remaining: Int { bytes.endIndex - position }
    package var isAtEnd: Bool { position == bytes.endIndex }
    /// How many bytes have been read.
    package var offset: Int { position - bytes.startIndex }

    private mutating func take(_ n: Int) throws(ContainerError) -> Int {
        guard n >= 0, n <= remaining else { throw ContainerError("ends after \(bytes.count) bytes, short of \(offset + max(n, 0))") }
        defer { position += n }
        return position
    }

    package mutating func u8() throws(ContainerError) -> UInt8 { bytes[try take(1)] }
    package mutating func u16() throws(ContainerError) -> UInt16 {
        let at = try take(2)
        return UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
    }
    package mutating func u24() throws(ContainerError) -> UInt32 {
        let at = try take(3)
        return UInt32(bytes[at]) << 16 | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2])
    }
    package mutating func u32() throws(ContainerError) -> UInt32 {
        let at = try take(4)
        return UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
    package mutating func u64() throws(ContainerError) -> UInt64 { UInt64(try u32()) << 32 | UInt64(try u32()) }
    package mutating func fourCC() throws(ContainerError) -> FourCC { FourCC(try u32()) }
    /// The next `n` bytes, not copied.
    package mutating func bytes(_ n: Int) throws(ContainerError) -> ArraySlice<UInt8> {
        let at = try take(n)
        return bytes[at..<(at + n)]
    }
    /// Everything left.
    package mutating func rest() -> ArraySlice<UInt8> {
        defer { position = bytes.endIndex }
        return bytes[position...]
    }
    package mutating func skip(_ n: Int) throws(ContainerError) { _ = try take(n) }

    /// A full box's version (8 bits) and flags (24 bits), which open its body.
    package mutating func versionAndFlags() throws(ContainerError) -> (version: UInt8, flags: UInt32) {
        let word = try u32()
        return (UInt8(word >> 24), word & 0xFF_FFFF)
    }

    /// `count` entries of `size` bytes each, read by `entry`; throws before reading any when the
    /// bytes left cannot hold them all (a damaged count).
    package mutating func entries<T>(_ count: UInt32, size: Int, _ entry: (inout ByteReader) throws(ContainerError) -> T) throws(ContainerError) -> [T] {
        guard UInt64(count) * UInt64(size) <= UInt64(remaining) else {
            throw ContainerError("says it holds \(count) entries of \(size) bytes in \(remaining) bytes")
        }
        var result: [T] = []
        result.reserveCapacity(Int(count))
        for _ in 0..<count { result.append(try entry(&self)) }
        return result
    }
}

/// Writing big-endian fields, the counterpart of ``ByteReader``.
extension [UInt8] {
    package mutating func appendU16(_ v: UInt16) { append(UInt8(v >> 8)); append(UInt8(v & 0xFF)) }
    package mutating func appendU24(_ v: UInt32) { append(UInt8((v >> 16) & 0xFF)); appendU16(UInt16(v & 0xFFFF)) }
    package mutating func appendU32(_ v: UInt32) {
        append(contentsOf: [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)])
    }
    package mutating func appendU64(_ v: UInt64) { appendU32(UInt32(v >> 32)); appendU32(UInt32(v & 0xFFFF_FFFF)) }
    package mutating func appendVersionAndFlags(_ version: UInt8, _ flags: UInt32) { appendU32(UInt32(version) << 24 | flags & 0xFF_FFFF) }
    package mutating func setU32(_ at: Int, _ v: UInt32) {
        self[at] = UInt8(v >> 24); self[at + 1] = UInt8((v >> 16) & 0xFF); self[at + 2] = UInt8((v >> 8) & 0xFF); self[at + 3] = UInt8(v & 0xFF)
    }
    package mutating func setU64(_ at: Int, _ v: UInt64) { setU32(at, UInt32(v >> 32)); setU32(at + 4, UInt32(v & 0xFFFF_FFFF)) }
}
