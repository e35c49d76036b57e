import FoundationEssentials
import GraphKitCore
import GraphKitRuntime

/// `sink.whip`: sends H.264 and Opus over WebRTC to a WHIP endpoint (RFC 9725), the ingest of
/// WebRTC servers (MediaMTX, Janus, Cloudflare Stream, OBS's WHIP output's peers), through
/// GraphKit's `gkwhipsink` (a `webrtcbin` and the WHIP exchange: the SDP offer POSTed with every
/// ICE candidate in it, the answer of a 201 reply, a DELETE of its Location at the end).
///
/// - `url`: the endpoint, `http://` or `https://` (TLS checked against the system's certificate
///   authorities, or those in `certificateAuthority`, a PEM file: a self-hosted server's own
///   authority or self-signed certificate); messages show its scheme, host and port only (a path
///   may hold a stream's key). The session's resource gets the token only on the endpoint's own
///   origin, and is never reached over http from an https endpoint. `token`: sent as
///   `Authorization: Bearer`, never shown.
/// - The media waits (each input's stream) until the peer connection is up, and the video then
///   starts at a key frame (asked of the encoder, as a receiver's PLI is later); a receiver
///   joins from the next key frame of passed-through video.
/// - `timeout`: for the whole exchange (the offer, the endpoint's answer, the connection: ICE,
///   DTLS), each failure an error naming the endpoint (`https://host:port/…`) and what failed (a refusal with its HTTP status: 401 and 403
///   say to check the token), 70.
/// - At the end of every input's stream the session is ended with a DELETE, then the run ends;
///   a stop does the same; a cancel, or a failure after the endpoint made the session, sends the
///   DELETE with a second's wait.
///
/// Example:
/// ```json
/// "out": { "type": "sink.whip", "params": { "url": "http://127.0.0.1:8889/cam/whip", "token": "…" } }
/// ```
public final class WHIPSinkNode: ElementNode, ExplainsFailures, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.whip",
        category: .sink,
        summary: "Sends H.264 and Opus over WebRTC to a WHIP endpoint (RFC 9725)",
        inputs: [
            PortDescriptor("audio", FormatSet([.audio(.opus)]), presence: .optional, help: "Opus audio (WebRTC's; encode.opus)"),
            PortDescriptor("video", FormatSet([.h264]), presence: .optional, help: "H.264 video (without B-frames, for browsers)"),
        ],
        parameters: [url, token, timeout, certificateAuthority],
        requiresAnInput: true,
        example: #"{ "type": "sink.whip", "params": { "url": "http://127.0.0.1:8889/cam/whip" } }"#
    )

    public static let url = RequiredParameter<String>("url", format: StringFormat(
        pattern: #"^https?://([^/?#@\s]+@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?(/[^\s#]*)?$"#, minLength: 1,
        expected: "http://HOST[:PORT]/PATH or https://…", shown: .url),
        help: "the WHIP endpoint; a user, password or query in it is never shown")
    public static let token = OptionalParameter<String>("token", format: StringFormat(
        pattern: #"^[A-Za-z0-9._~+/=-]+$"#, minLength: 1, expected: "a bearer token (RFC 6750's characters)", shown: .hidden),
        help: "sent as \"Authorization: Bearer\"; never shown")
    public static let timeout = NetworkEndpoint.connectTimeout(default: 10,
        help: "seconds for the whole exchange (the offer, the endpoint's answer, the WebRTC connection) before the run fails")

    public static let certificateAuthority = OptionalParameter<String>("certificateAuthority", format: .path,
        help: "https:// only: a PEM file of the authorities (or the self-signed certificate) to trust for the endpoint's certificate, instead of the system's")

    let context: NodeContext
    /// The endpoint, shown without credentials or query.
    let endpoint: NetworkEndpoint

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let location = try context.parameters.value(Self.url)
        endpoint = try NetworkEndpoint(location, shown: Self.shown(location), context: context)
        if let authority = context.parameters[Self.certificateAuthority] {
            guard location.lowercased().hasPrefix("https://") else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "certificateAuthority"),
                                 "certificateAuthority is for an https:// URL (TLS); \(endpoint.shown) is not one", node: context.id)
            }
            guard FileManager.default.isReadableFile(atPath: authority) else {
                throw GraphError(.inputUnreadable, at: context.location(parameter: "certificateAuthority"), "cannot read \"\(authority)\"", node: context.id)
            }
        }
    }

    /// How messages name the endpoint: scheme, host and port, "/…" for a path (which may hold a
    /// stream's key: Cloudflare's WHIP URLs do); never a user, password or query. As gkwhipsink's.
    static func shown(_ url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return "(a WHIP URL)" }
        let rest = url[schemeEnd.upperBound...]
        var authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let path = rest.dropFirst(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }.count).prefix { $0 != "?" && $0 != "#" }
        return url[..<schemeEnd.upperBound] + authority + (path.isEmpty || path == "/" ? "" : "/…")
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        // webrtcbin without libnice's elements fails only when it gathers candidates, saying little.
        for element in ["webrtcbin", "nicesink"] where !GStreamer.hasElement(element) {
            throw GraphError(.missingPlugin, at: "node \"\(context.id)\"",
                             "GStreamer element \"\(element)\" is not installed; install the Debian package \(GStreamer.debianPackage(forElement: element))",
                             node: context.id)
        }
        let sink = try bin.make("gkwhipsink", name: "whip", ["url": endpoint.url, "timeout": context.parameters[Self.timeout]])
        if let token = context.parameters[Self.token] { try sink.set("token", token) }
        if let authority = context.parameters[Self.certificateAuthority] { try sink.set("ca-file", authority) }
        for port in ["video", "audio"] where context.connectedInputs.contains(port) {
            try bin.expose(input: port, requesting: port, from: sink)
        }
    }

    /// gkwhipsink's errors name the endpoint as shown already; any URL GStreamer or GIO quotes
    /// is scrubbed.
    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        let text = NetworkEndpoint.text(message, debug: debug)
        return endpoint.error(endpoint.scrubbed(message), text: text, node: context.id, at: location)
    }
}
