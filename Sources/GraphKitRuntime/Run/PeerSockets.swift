import CGraphKitGlue
import Glibc

/// The process's TCP sockets connected to a server's port, found through /proc/self/fd: for a
/// node whose GStreamer element cannot be interrupted while it reads, to cut its connection.
///
/// rtspsrc (GStreamer 1.22) reads a reply's headers with a timeout for each read; a server that
/// sends a header line a second keeps it reading for ever, and its own flush does not wake it,
/// so the pipeline's state change waits on it and the run cannot end. The node notes the
/// sockets to the server's port before its element connects (``connected(toPort:)``), takes the
/// new ones after its first request as its own, and shuts those down (``shutDown(_:port:)``)
/// when its budget is spent: the read returns at once, the element fails, and the run ends.
/// `sink.rtmp` counts what its server sends the same way (``bytesReceived(_:port:)``).
public enum PeerSockets {
    /// The descriptors of this process's sockets whose peer is at TCP `port` (IPv4 or IPv6).
    public static func connected(toPort port: Int) -> Set<Int32> {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        defer { closedir(dir) }
        var found: Set<Int32> = []
        // A process holds a bounded number of descriptors (RLIMIT_NOFILE): the walk ends.
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), peerPort(of: fd) == port else { continue }
            found.insert(fd)
        }
        return found
    }

    /// Shuts down (both ways) each of `fds` still connected to `port`: a descriptor closed and
    /// reused since is left alone.
    public static func shutDown(_ fds: Set<Int32>, port: Int) {
        for fd in fds where peerPort(of: fd) == port { _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Those of `fds` still connected to `port` (a descriptor closed and reused since is not).
    public static func stillConnected(_ fds: Set<Int32>, port: Int) -> Set<Int32> {
        fds.filter { peerPort(of: $0) == port }
    }

    /// The bytes the kernel has taken in on those of `fds` still connected to `port`: what the
    /// peer sent, read without asking the element that reads it.
    public static func bytesReceived(_ fds: Set<Int32>, port: Int) -> Int {
        fds.reduce(0) { sum, fd in peerPort(of: fd) == port ? sum + max(Int(gk_socket_bytes_received(fd)), 0) : sum }
    }

    /// The TCP port of `fd`'s peer, or nil when it is not a connected stream socket.
    private static func peerPort(of fd: Int32) -> Int? {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else { return nil }
        var address = sockaddr_storage()
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &size) } }
        guard got == 0 else { return nil }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) } }
        case AF_INET6:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) } }
        default:
            return nil
        }
    }
}
