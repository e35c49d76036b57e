import Foundation
import Testing
import GraphKit
import Nodes

/// What `source.srt` and `sink.srt` refuse when the graph is loaded, before anything runs: each
/// at its parameter, and never quoting a credential (the running side is SRTSinkNodeTests).
@Suite struct SRTSourceNodeTests {
    func problems(_ type: String, _ params: String) -> [String] {
        let other = type == "sink.srt"
            ? #""enc": { "type": "encode.aac" }, "mic": { "type": "capture.audio" }"#
            : #""demux": { "type": "demux" }, "file": { "type": "sink.mkv", "params": { "path": "out.mkv" } }"#
        let edges = type == "sink.srt" ? #""mic.out -> enc.in", "enc.out -> n.audio""# : #""n.out -> demux.in", "demux.audio -> file.audio""#
        do {
            _ = try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "n": { "type": "\#(type)", "params": { \#(params) } }, \#(other) }, "edges": [ \#(edges) ] }"#)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test(arguments: ["source.srt", "sink.srt"])
    func aGoodGraphLoads(_ type: String) {
        #expect(problems(type, #""url": "srt://127.0.0.1:9000", "mode": "listener", "latency": 300, "passphrase": "0123456789", "keyLength": 24, "streamId": "live/a""#) == [])
        #expect(problems(type, #""url": "srt://[::1]:9000""#) == [])
        #expect(problems(type, #""url": "srt://peer.example:9000", "mode": "rendezvous", "localAddress": "127.0.0.1", "localPort": 9001"#) == [])
    }

    /// Credentials, a query, another scheme: refused at the URL, which the message shows without
    /// its user information or secrets.
    @Test(arguments: ["source.srt", "sink.srt"])
    func aURLWithAnythingButHostAndPortIsRefusedWithoutItsCredentials(_ type: String) {
        let refused = problems(type, #""url": "srt://admin:hunter2@127.0.0.1:9000""#)
        #expect(refused.count == 1)
        #expect(refused.first?.hasPrefix("nodes.n.params.url: expected srt://HOST:PORT") == true, "\(refused)")
        #expect(refused.first?.contains("\"srt://127.0.0.1:9000\"") == true, "\(refused)")
        #expect(refused.allSatisfy { !$0.contains("hunter2") && !$0.contains("admin") })
        let query = problems(type, #""url": "srt://127.0.0.1:9000?passphrase=hunter2hunter2""#)
        #expect(query.count == 1 && query.allSatisfy { !$0.contains("hunter2") }, "\(query)")
        #expect(problems(type, #""url": "rtmp://127.0.0.1:9000""#).first?.hasPrefix("nodes.n.params.url: expected srt://HOST:PORT") == true)
        #expect(problems(type, #""url": "srt://127.0.0.1""#).count == 1)
    }

    /// A passphrase SRT cannot take is refused without being quoted; a key length that is not
    /// AES's, at its parameter; a rendezvous without the address it binds.
    @Test func theOtherParametersAreCheckedAtTheirPlace() {
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "passphrase": "short""#)
                == ["nodes.n.params.passphrase: expected a passphrase of 10 to 79 characters, got a value of 5 characters"])
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "keyLength": 20"#).first?.hasPrefix("nodes.n.params.keyLength") == true)
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "mode": "rendezvous""#).first?.hasPrefix("nodes.n.params.localAddress") == true)
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "latency": 5"#).first?.hasPrefix("nodes.n.params.latency") == true)
    }

    /// `reconnect` is a caller's (the end that calls again), in seconds from 0; a sink has none.
    @Test func reconnectIsACallersOrAListenersAndInRange() {
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "reconnect": 30"#) == [])
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "mode": "listener", "reconnect": 30"#) == [])
        #expect(problems("source.srt", #""url": "srt://127.0.0.1:9000", "reconnect": -1"#).first?.hasPrefix("nodes.n.params.reconnect") == true)
        let rendezvous = problems("source.srt", #""url": "srt://127.0.0.1:9000", "mode": "rendezvous", "localAddress": "127.0.0.1", "reconnect": 30"#)
        #expect(rendezvous.count == 1 && rendezvous.first?.hasPrefix("nodes.n.params.mode: mode must not be \"rendezvous\" when reconnect is given") == true, "\(rendezvous)")
        // sink.srt: a caller's (srtsink calls its listener again).
        #expect(problems("sink.srt", #""url": "srt://127.0.0.1:9000", "reconnect": 30"#) == [])
        let sinkListener = problems("sink.srt", #""url": "srt://127.0.0.1:9000", "mode": "listener", "reconnect": 30"#)
        #expect(sinkListener.first?.hasPrefix("nodes.n.params.mode: mode must be \"caller\" when reconnect is given") == true, "\(sinkListener)")
    }
}
