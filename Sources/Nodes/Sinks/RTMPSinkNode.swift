import GraphKitCore
import GraphKitRuntime

/// `sink.rtmp`: pushes H.264 and AAC in FLV to an RTMP server (`flvmux ! rtmp2sink`), as a
/// streaming platform or a media server (nginx-rtmp, SRS, MediaMTX) takes it: `rtmp://` or
/// `rtmps://` (TLS), `HOST[:PORT]/APP/STREAM`.
///
/// The stream key (the URL's last part) is a credential: messages name the server and the
/// application (`rtmp://127.0.0.1:1935/live/…`), never the key, and a malformed URL is refused
/// without being quoted. Samples are sent at their time (the sink follows the clock), as a live
/// stream is. A server that cannot be reached fails the run (70) naming the URL so shown, within
/// `timeout` seconds.
///
/// Example:
/// ```json
/// "out": { "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:1935/live/stream" } }
/// ```
public final class RTMPSinkNode: ElementNode, ExplainsFailures, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.rtmp",
        category: .sink,
        summary: "Pushes H.264 and AAC in FLV to an RTMP or RTMPS server",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac]), presence: .optional, help: "AAC audio"),
            PortDescriptor("video", FormatSet([.h264]), presence: .optional, help: "H.264 video"),
        ],
        parameters: [url, timeout],
        requiresAnInput: true,
        example: #"{ "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:1935/live/stream" } }"#
    )

    public static let url = RequiredParameter<String>("url", format: StringFormat(
        pattern: #"^rtmps?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?/[^/?#@\s]+/[^?#@\s]+$"#, minLength: 1,
        expected: "rtmp://HOST[:PORT]/APP/STREAM or rtmps://… (no user or query)", shown: .hidden),
        help: "the server, application and stream key; the key is never shown")
    public static let timeout = Parameter<Int>("timeout", 1...300, default: 10, help: "seconds to wait for the server to answer before the run fails")

    let context: NodeContext
    let location: String
    /// The URL as messages show it: without the stream key.
    let shown: String

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        location = try context.parameters.value(Self.url)
        let schemeEnd = location.hasPrefix("rtmps://") ? 8 : 7
        let rest = location.dropFirst(schemeEnd)
        let parts = rest.split(separator: "/", maxSplits: 1)
        let app = parts.count > 1 ? parts[1].split(separator: "/").first.map(String.init) ?? "" : ""
        shown = "\(location.prefix(schemeEnd))\(parts.first ?? "")/\(app)/…"
        if let colon = parts.first?.lastIndex(of: ":"), parts.first?.hasSuffix("]") == false,
           let port = Int(parts.first![parts.first!.index(after: colon)...]), !(1...65535).contains(port) {
            throw GraphError(.invalidGraph, at: context.location(parameter: "url"), "\(shown) has no port from 1 to 65535", node: context.id)
        }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let mux = try bin.make("flvmux", name: "mux", ["streamable": true])
        let sink = try bin.make("rtmp2sink", name: "rtmp2sink", ["location": location, "timeout": context.parameters[Self.timeout]])
        try bin.link(mux, sink)
        for port in ["audio", "video"] where context.connectedInputs.contains(port) {
            try bin.expose(input: port, requesting: port, from: mux)
        }
    }

    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        let text = [message, debug ?? ""].joined(separator: "\n")
        let what: String
        if text.contains("Connection refused") || text.contains("Could not connect") || text.contains("Failed to connect") {
            what = "the RTMP server \"\(shown)\" could not be reached (nothing answered there)"
        } else if text.contains("timed out") || text.contains("Timeout") || text.contains("timeout") {
            what = "the RTMP server \"\(shown)\" did not answer within \(context.parameters[Self.timeout]) s"
        } else if text.contains("resolve") || text.contains("Error resolving") {
            what = "the RTMP server \"\(shown)\": its host name cannot be resolved"
        } else {
            what = "the RTMP server \"\(shown)\" failed: \(RedactedURL.scrub(message.replacing(self.location, with: shown)))"
        }
        // GStreamer's text may quote the location with its key: only the key-free form is kept.
        return GraphError(.runFailed, at: location, what, node: context.id,
                          cause: RedactedURL.scrub(text.replacing(self.location, with: shown)))
    }
}
