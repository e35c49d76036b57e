import Testing
@testable import Nodes

/// How `sink.rtmp` reads rtmp2sink's "Failed to connect: REASON" (issue 73, class 8): every
/// failure used to be "could not be reached (nothing answered there)"; the server's own refusal,
/// its silence and a reply that is not RTMP are now told apart, with the peer's words quoted.
struct RTMPFailureReasonTests {
    @Test func theServersOwnRefusalIsQuoted() {
        let text = #"Failed to connect: publish denied; stream already exists: { "level": "error", "code": "NetStream.Publish.BadName", "description": "stream already exists" }"#
        #expect(RTMPSinkNode.refusal(in: text, timeout: 5) == #"refused the stream: "stream already exists" (NetStream.Publish.BadName)"#)
        let connect = #"Failed to connect: 'connect' cmd failed: { "level": "error", "code": "NetConnection.Connect.Rejected", "description": "" }"#
        #expect(RTMPSinkNode.refusal(in: connect, timeout: 5) == #"refused the connection: "NetConnection.Connect.Rejected""#)
    }

    @Test func silenceAndGarbageAreToldApartFromNoServer() {
        #expect(RTMPSinkNode.refusal(in: "Failed to connect: Socket I/O timed out", timeout: 7)
                == "took the connection but did not answer within 7 s (what listens there does not speak RTMP, or is stuck)")
        #expect(RTMPSinkNode.refusal(in: "Failed to connect: 'connect' cmd failed; no status code", timeout: 7)?
                    .hasPrefix("answered with a reply that could not be read as RTMP's") == true)
        // No server at all is the endpoint's to say.
        #expect(RTMPSinkNode.refusal(in: "Connection refused: Could not connect to 127.0.0.1: Connection refused", timeout: 7) == nil)
    }
}
