import Testing
import GraphKit
@testable import Nodes

/// What the network nodes share (NetworkEndpoint): a URL's host and port, how it is shown, and
/// how their elements' common failures are told apart. No GStreamer: the fast tier.
@Suite struct NetworkEndpointTests {
    func endpoint(_ url: String, shown: String? = nil) throws(GraphError) -> NetworkEndpoint {
        try NetworkEndpoint(url, shown: shown, context: NodeContext(id: "n", parameters: Parameters()))
    }

    @Test func hostAndPortAreReadAfterAnyUserInformation() throws {
        let e = try endpoint("rtsp://admin:hunter2@camera.local:8554/live/main")
        #expect(e.host == "camera.local" && e.port == 8554)
        #expect(e.shown == "rtsp://camera.local:8554/live/main")
        let v6 = try endpoint("srt://[::1]:9000")
        #expect(v6.host == "::1" && v6.port == 9000)
        let noPort = try endpoint("rtsp://u:p@[fe80::1]/path")
        #expect(noPort.host == "fe80::1" && noPort.port == nil)
        #expect(try endpoint("rtmp://h/live/key", shown: "rtmp://h/live/…").shown == "rtmp://h/live/…")
    }

    /// A port out of range is refused at the URL, which the message shows without credentials.
    @Test func aPortOutOfRangeIsRefusedAtTheURL() {
        do {
            _ = try endpoint("rtsp://admin:hunter2@127.0.0.1:70000/x")
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidGraph)
            #expect(error.problems.first?.location == "nodes.n.params.url")
            #expect(error.message.contains("rtsp://127.0.0.1:70000/x has no port from 1 to 65535"), "\(error.message)")
            #expect(!"\(error)".contains("hunter2"))
        }
    }

    @Test func theCommonFailuresAreToldApart() {
        #expect(NetworkEndpoint.failure(in: "Could not open resource\nFailed to connect. (Generic error)") == .unreachable)
        #expect(NetworkEndpoint.failure(in: "Connection refused") == .unreachable)
        #expect(NetworkEndpoint.failure(in: "Could not receive message. (Timeout while waiting for server response)") == .timedOut)
        #expect(NetworkEndpoint.failure(in: "Failed to connect: Error resolving “nowhere.invalid”: Name or service not known") == .unresolved)
        #expect(NetworkEndpoint.failure(in: "Unauthorized (401)") == nil)
    }

    /// The cause keeps GStreamer's words without the URL's credentials, and without what
    /// `shown` hides.
    @Test func theCauseIsScrubbed() throws {
        let e = try endpoint("rtmp://127.0.0.1/live/secretkey", shown: "rtmp://127.0.0.1/live/…")
        let error = e.error("failed", text: "could not write to rtmp://127.0.0.1/live/secretkey", node: "n", at: "node \"n\"")
        #expect(error.cause == "could not write to rtmp://127.0.0.1/live/…")
        let rtsp = try endpoint("rtsp://u:pw123@h/s")
        #expect(!rtsp.scrubbed("opening rtsp://u:pw123@h/s failed").contains("pw123"))
    }
}
