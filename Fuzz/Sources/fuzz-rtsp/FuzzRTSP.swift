import Foundation
import GraphKit
import Nodes
import Glibc

/// One input: what an RTSP server answers, played by a loopback server in this process to a
/// `source.rtsp → sink.mp4` recording (RTP interleaved over TCP, `timeout` 1 s): rtspsrc's
/// parsing of the replies and the SDP, the depayloaders and parsers on the packets, and
/// GraphKit's own watch (the budget before PLAY, the bounds on what a peer makes it hold, the
/// cut), writer and file handling, all fed a hostile peer (issue 73).
///
/// The input is split at each `|||`: the first pieces answer the client's requests in turn
/// (OPTIONS, DESCRIBE, SETUP, PLAY…), each sent as it is, with `CSEQ` replaced by the request's
/// own CSeq (so that the fuzzer's replies can match); the last piece is sent right after the
/// reply before it (the seeds': PLAY's): the packets (`$`, channel, length, RTP). The server
/// then answers nothing more and keeps the connection open until the run ends.
///
/// A finding is a crash, a leak, a run that does not end within FUZZ_RUN_SECONDS (default 10),
/// an end that is neither a completed run whose MP4 reads back nor a GraphError (70) naming
/// its place and the server without its password, and a failed run that left a file behind.
let limit = getenv("FUZZ_RUN_SECONDS").flatMap { Double(String(cString: $0)) } ?? 10
let folder: String = {
    var template = Array("/tmp/graphkit-fuzz-rtsp-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot make a temporary folder") }
    return String(cString: made)
}()
let loader = GraphLoader(registry: .builtIn)
let verbose = getenv("FUZZ_VERBOSE") != nil

/// The loopback server: one listener for every input; each connection served on a thread of its
/// own from the script of the input under way, and shut down (then closed) when that input's run
/// has ended: a descriptor is closed only once its thread is done with it.
final class Server: @unchecked Sendable {
    let listener: Int32
    let port: Int
    private let lock = NSLock()
    private var script: [[UInt8]] = []
    private var clients: [Int32] = []
    private var serving = 0

    init() {
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listener = listener
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 16) == 0 else { fatalError("the loopback server cannot listen") }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in accepting() }
    }

    private func locked<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }

    func play(_ pieces: [[UInt8]]) { locked { script = pieces } }

    /// Shuts down every connection of the input that ended, waits (at most 2 s) for their
    /// threads, and closes them.
    func hangUp() {
        let open = locked { clients }
        for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
        let end = ContinuousClock.now + .seconds(2)
        while locked({ serving }) > 0, ContinuousClock.now < end { usleep(1_000) }
        locked {
            for fd in clients { close(fd) }
            clients = []
        }
    }

    private func accepting() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            let pieces = locked { clients.append(fd); serving += 1; return script }
            Thread.detachNewThread { [self] in
                Server.serve(fd, pieces)
                locked { serving -= 1 }
            }
        }
    }

    private static func serve(_ fd: Int32, _ pieces: [[UInt8]]) {
        var pending: [UInt8] = [], next = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            pending += buffer[..<n]
            while let end = pending.firstRange(of: [13, 10, 13, 10]) {
                let request = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                pending.removeSubrange(..<end.upperBound)
                let cseq = request.split(separator: "\r\n").first { $0.lowercased().hasPrefix("cseq:") }
                    .map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) } ?? "0"
                guard next < pieces.count - 1 else { continue }
                let reply = replacing(pieces[next], "CSEQ", with: cseq)
                next += 1
                guard send(reply, on: fd) else { return }
                if next == pieces.count - 1, !send(pieces[next], on: fd) { return }
            }
        }
    }

    private static func replacing(_ bytes: [UInt8], _ token: String, with value: String) -> [UInt8] {
        var out: [UInt8] = [], rest = bytes[...]
        while let r = rest.firstRange(of: Array(token.utf8)) {
            out += rest[..<r.lowerBound] + Array(value.utf8)
            rest = rest[r.upperBound...]
        }
        return out + rest
    }

    private static func send(_ bytes: [UInt8], on fd: Int32) -> Bool {
        var at = 0
        while at < bytes.count {
            let n = bytes[at...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            at += n
        }
        return true
    }
}

let server = Server()
let setUp: Void = {
    GraphKitLogging.bootstrapStandardError(level: .error)
    atexit { rmdir(folder) }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTSP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = setUp
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var pieces: [[UInt8]] = [], rest = bytes[...]
    while let r = rest.firstRange(of: Array("|||".utf8)) {
        pieces.append(Array(rest[..<r.lowerBound]))
        rest = rest[r.upperBound...]
    }
    pieces.append(Array(rest))
    server.play(pieces)
    defer { server.hangUp() }
    let out = "\(folder)/out.mp4"
    defer { unlink(out) }
    let text = """
        { "version": 1, "nodes": {
            "cam": { "type": "source.rtsp", "params": { "url": "rtsp://fuzz:secretword@127.0.0.1:\(server.port)/stream", "transport": "tcp", "timeout": 1 } },
            "file": { "type": "sink.mp4", "params": { "path": \(JSONValue.string(out)) } } },
          "edges": [ "cam.video -> file.video" ] }
        """
    let graph: Graph
    do { graph = try loader.load(json: text) } catch { fatalError("the fuzz graph does not load: \(error)") }
    do {
        let run = try GraphRun(graph)
        try run.start()
        let start = ContinuousClock.now
        while !run.isFinished {
            usleep(5_000)
            if ContinuousClock.now - start > .seconds(limit) {
                run.cancel()
                fatalError("hang: the run did not end within \(limit) s")
            }
        }
        let report = run.wait()
        if verbose { say("\(size) bytes, \(pieces.count) pieces: \(report.status); \(report.error.map { "\($0)" } ?? "")") }
        switch (report.status, report.error) {
        case (.completed, nil):
            guard let file = try? Data(contentsOf: URL(fileURLWithPath: out)), file.count > 8 else { fatalError("a completed run wrote no file") }
        case (.failed, let error?):
            check(error)
            let left = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            if !left.isEmpty { fatalError("a failed run left \(left) in \(folder)") }
        default: fatalError("a run ended \(report.status) with error \(String(describing: report.error))")
        }
    } catch {
        if verbose { say("\(size) bytes: not started: \(error)") }
        check(error)
    }
    return 0
}

/// A hostile server is a failed run (70) naming where, and never its password.
func check(_ error: GraphError) {
    guard error.code == .runFailed else { fatalError("unexpected error code \(error.code.exitStatus): \(error)") }
    if "\(error)".contains("secretword") { fatalError("the password was shown: \(error)") }
    for p in error.problems where p.location?.isEmpty ?? true {
        fatalError("a problem that names no place: \(p.message)")
    }
}

func say(_ line: String) {
    let text = Array((line + "\n").utf8)
    _ = text.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
}
