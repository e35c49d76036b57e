import Foundation
import Glibc

/// A hostile peer on 127.0.0.1: a TCP server that accepts every connection and answers it with
/// bytes that mean nothing (after `preface`, when given: a plausible first line), or a UDP port
/// that answers every datagram so; it goes on for as long as the peer reads, until `stop()`.
/// For the network nodes' "a server that accepts, then sends garbage" failures.
public final class GarbageServer: @unchecked Sendable {
    public let port: Int
    private let fd: Int32
    private let udp: Bool
    private let preface: [UInt8]
    private let stopping = NSLock()
    private var stopped = false
    private var thread: TestThread<Void>?

    public init(udp: Bool = false, preface: String = "") throws {
        if TestTier.fastOnly { throw POSIXError(.EPERM) }
        self.udp = udp
        self.preface = Array(preface.utf8)
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (udp || listen(fd, 8) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            let e = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: e) ?? .EIO)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        thread = TestThread("garbage-server") { [self] in serve() }
    }

    private var isStopped: Bool { stopping.withLock { stopped } }

    /// Bytes from a fixed-seed generator: the same garbage each run.
    private static func garbage(_ count: Int, seed: inout UInt64) -> [UInt8] {
        (0..<count).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: seed >> 33)
        }
    }

    private func serve() {
        var seed: UInt64 = 0x5EED
        var clients: [Int32] = []
        defer { clients.forEach { close($0) } }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !isStopped {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 50) > 0 {
                if udp {
                    var from = sockaddr_storage()
                    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                    let n = withUnsafeMutablePointer(to: &from) { f in
                        f.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
                    }
                    if n >= 0 {
                        let reply = preface + Self.garbage(Int.random(in: 16...1400), seed: &seed)
                        _ = withUnsafePointer(to: &from) { f in
                            f.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, reply, reply.count, 0, $0, length) }
                        }
                    }
                } else {
                    let client = accept(fd, nil, nil)
                    if client >= 0 {
                        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                        if !preface.isEmpty { _ = send(client, preface, preface.count, Int32(MSG_NOSIGNAL)) }
                        clients.append(client)
                    }
                }
            }
            // Every client: what it sent is read and dropped, and 4 KB of garbage go back.
            clients = clients.filter { client in
                while recv(client, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}
                let chunk = Self.garbage(4096, seed: &seed)
                let sent = send(client, chunk, chunk.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
                if sent < 0, errno != EAGAIN, errno != EWOULDBLOCK {
                    close(client)
                    return false
                }
                return true
            }
        }
    }

    /// Stops serving, closes every connection and the socket, and waits for the thread.
    public func stop() {
        let first = stopping.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        _ = thread?.join()
        close(fd)
    }

    deinit { stop() }
}
