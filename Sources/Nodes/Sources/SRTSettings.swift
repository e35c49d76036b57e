import GraphKitCore
import GraphKitRuntime

/// What `source.srt` and `sink.srt` share: the parameters of an SRT connection (Haivision's
/// Secure Reliable Transport, live mode, MPEG-TS in 1316-byte messages), how they set GStreamer's
/// `srtsrc`/`srtsink`, and how those elements' failures read.
///
/// - `url` is `srt://HOST:PORT` and nothing else: options are parameters, so that no secret sits
///   in a URL that messages quote (`passphrase` and `streamId` never appear in any message, log,
///   statistic or `inspect` output). A caller connects to HOST:PORT; a listener binds to exactly
///   HOST:PORT (no `0.0.0.0` unless the graph names it); a rendezvous binds `localAddress`
///   (required) and `localPort` (the URL's port unless given) and meets HOST:PORT.
/// - A caller whose peer does not answer fails after SRT's connect timeout, 3 s
///   (`SRTO_CONNTIMEO`), naming the URL: GStreamer's own reconnection (`auto-reconnect`) is off,
///   since it would retry for ever.
/// - A wrong or missing passphrase is refused by the peer during the handshake: the run fails at
///   once (70), naming the URL and saying which.
struct SRTSettings: Sendable {
    enum Mode: String, ParameterEnum { case caller, listener, rendezvous }

    static let urlFormat = StringFormat(pattern: #"^srt://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}$"#, minLength: 1,
                                        expected: "srt://HOST:PORT (no user, path or query: mode, latency, passphrase and streamId are parameters)",
                                        shown: .url)
    static let url = RequiredParameter<String>("url", format: urlFormat,
                                               help: "srt://HOST:PORT: the peer a caller or rendezvous reaches, the address and port a listener binds")
    static let mode = Parameter<Mode>("mode", default: .caller,
                                      help: "caller connects to url; listener waits on url's address and port for one caller; rendezvous meets a peer doing the same")
    static let latency = Parameter<Int>("latency", 20...8000, default: 120,
                                        help: "milliseconds SRT holds packets to resend lost ones (SRTO_LATENCY); the larger of both ends' applies")
    static let passphrase = Parameter<String>("passphrase",
                                              format: StringFormat(pattern: "^(.{10,79})?$", expected: "a passphrase of 10 to 79 characters", shown: .hidden),
                                              default: "", help: "encrypts the stream (AES); both ends need the same; empty: not encrypted")
    static let keyLength = Parameter<Int>("keyLength", oneOf: [16, 24, 32], default: 16,
                                          help: "AES key length in bytes when a passphrase is given (SRTO_PBKEYLEN)")
    static let streamId = Parameter<String>("streamId", default: "",
                                            help: "the stream id a caller sends (SRTO_STREAMID), which servers use to pick or authorise a stream; never shown")
    static let localAddress = OptionalParameter<String>("localAddress", format: .pattern(#"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)$"#, "a host name or IP address"),
                                                       help: "rendezvous only: the local address to bind (required there)")
    static let localPort = OptionalParameter<Int>("localPort", 1...65535, help: "rendezvous only: the local port to bind; the url's port when not given")

    static let parameters: [any ParameterDeclaration] = [url, mode, latency, passphrase, keyLength, streamId, localAddress, localPort]
    static let rules: [ParameterRule] = [
        .when(.equals(mode, .rendezvous), require: .given(localAddress), because: "a rendezvous binds the address the graph names"),
    ]

    let endpoint: NetworkEndpoint
    var host: String { endpoint.host }
    let port: Int
    let mode: Mode
    let parameters: Parameters

    init(context: NodeContext) throws(GraphError) {
        let p = context.parameters
        endpoint = try NetworkEndpoint(try p.value(Self.url), context: context)
        parameters = p
        mode = p[Self.mode]
        // The format requires a port; NetworkEndpoint checked its range.
        guard let port = endpoint.port else {
            throw GraphError(.invalidGraph, at: context.location(parameter: "url"), "\(endpoint.shown) has no port from 1 to 65535", node: context.id)
        }
        self.port = port
    }

    /// How messages name the stream: `the SRT stream "srt://127.0.0.1:9000"` (a URL with no
    /// credentials by its format).
    var description: String { "the SRT \(mode.rawValue) \"\(endpoint.shown)\"" }

    /// Sets `element` (srtsrc or srtsink) to this connection; `reconnecting`, a caller that
    /// calls again when its peer goes away (srtsrc's `auto-reconnect`, which `source.srt` bounds
    /// in time with its `reconnect` parameter), or a listener that takes the next caller
    /// (`keep-listening` too).
    func configure(_ element: Element, reconnecting: Bool = false) throws(GraphError) {
        let p = parameters
        try element.set("uri", "srt://\(host.contains(":") ? "[\(host)]" : host):\(port)")
        try element.set("mode", mode.rawValue)
        try element.set("latency", p[Self.latency])
        try element.set("auto-reconnect", reconnecting)
        // A reconnected srtsrc (1.22) can wait in SRT's poll with its socket no longer in it, for
        // ever: a bounded wait lets it see the run's end of stream or stop.
        if reconnecting { try element.set("poll-timeout", 100) }
        if reconnecting, mode == .listener { try element.set("keep-listening", true) }
        if !p[Self.passphrase].isEmpty {
            try element.set("passphrase", p[Self.passphrase])
            try element.set("pbkeylen", p[Self.keyLength])
        }
        if !p[Self.streamId].isEmpty { try element.set("streamid", p[Self.streamId]) }
        switch mode {
        case .listener:
            try element.set("localaddress", host)
            try element.set("localport", port)
        case .rendezvous:
            try element.set("localaddress", p[Self.localAddress] ?? host)
            try element.set("localport", p[Self.localPort] ?? port)
        case .caller:
            break
        }
    }

    /// The run's error for a failure srtsrc or srtsink posted (GStreamer's message and debug
    /// text), in the graph's terms; nil for one this does not recognise.
    func explain(_ message: String, debug: String?, node: String, at location: String) -> GraphError? {
        let text = NetworkEndpoint.text(message, debug: debug)
        let what: String
        if text.contains("Incorrect passphrase") {
            what = "\(description) refused the connection: the passphrase differs from the peer's"
        } else if text.contains("Password required or unexpected") {
            what = "\(description) refused the connection: \(parameters[Self.passphrase].isEmpty ? "the peer requires a passphrase, and none is given" : "the peer takes no passphrase, and one is given")"
        } else if text.contains("Failed to bind") || text.contains("Address already in use") || text.contains("Cannot assign requested address") {
            what = "\(description) cannot listen there: the address is in use or not this machine's"
        } else if NetworkEndpoint.failure(in: text) == .unresolved {
            what = "\(description): the host \"\(host)\" cannot be resolved"
        } else if text.contains("Connection does not exist") || text.contains("Connection setup failure") || NetworkEndpoint.failure(in: text) != nil
                    || (mode != .listener && text.contains("Could not read from resource") && (debug ?? "").isEmpty) {
            what = "\(description) could not be reached: no peer answered within SRT's connect timeout (3 s)"
        } else if mode != .listener, text.contains("Could not read from resource"),
                  (debug ?? "").split(separator: "\n").count <= 1 || text.contains("Socket is broken or closed") {
            // GStreamer 1.26 posts a listener's refusal of a caller without a passphrase with no
            // reason (its debug text is the element's place alone, or that and "Socket is broken
            // or closed", run to run; 1.22 says "Password required"): what the node knows is
            // said. (A peer closing after bytes came is the stream's end, not this: source.srt's
            // failureEndsStream takes it first.)
            what = "\(description) refused the connection without saying why"
                + (parameters[Self.passphrase].isEmpty ? ": the peer may require a passphrase, and none is given"
                   : ": the peer's passphrase may differ from the one given")
        } else {
            return nil
        }
        return endpoint.error(what, text: text, node: node, at: location)
    }
}
