import Foundation
import Glibc

/// A folder served over HTTP on 127.0.0.1 (a port the system picks), for players that take only
/// HTTP: GStreamer's adaptive demuxers (hlsdemux2, which plays HLS's alternative renditions)
/// fetch with libsoup and refuse `file://`. Each request is `GET /path` for a file under the
/// folder, answered whole with `Connection: close` (404 for anything else). The listening socket
/// exists before `init` returns, so a client may connect at once; `stop()` closes it and joins
/// the thread that serves (a request being answered finishes first).
public final class FolderServer: @unchecked Sendable {
    public let port: UInt16
    private let listener: Int32
    private let folder: URL
    private var thread: TestThread<Void>?

    public init(folder: URL) throws {
        self.folder = folder.standardizedFileURL
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 16) == 0,
              withUnsafeMutablePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }) == 0 else {
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        thread = TestThread("folder server") { [self] in serve() }
    }

    /// `http://127.0.0.1:PORT/` followed by `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)/\(path)" }

    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        _ = thread?.join()
        thread = nil
    }

    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return  // the listener was closed
            }
            answer(client)
            close(client)
        }
    }

    private func answer(_ client: Int32) {
        var request = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !request.suffix(4).elementsEqual([13, 10, 13, 10]) && request.count < 65_536 {
            let n = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            request += chunk[0..<n]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self).split(separator: " ")
        var body: Data?
        if line.count >= 2, line[0] == "GET" || line[0] == "HEAD" {
            let name = String(line[1].dropFirst().prefix { $0 != "?" }).removingPercentEncoding ?? ""
            let file = folder.appendingPathComponent(name).standardizedFileURL
            if file.path.hasPrefix(folder.path + "/") { body = try? Data(contentsOf: file) }
        }
        let type = line.count >= 2 && line[1].hasSuffix(".m3u8") ? "application/vnd.apple.mpegurl" : "application/octet-stream"
        let head = body.map { "HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nContent-Length: \($0.count)\r\nConnection: close\r\n\r\n" }
            ?? "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        var out = Data(head.utf8)
        if line.first != "HEAD", let body { out += body }
        out.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = send(client, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return }
                sent += n
            }
        }
    }
}
