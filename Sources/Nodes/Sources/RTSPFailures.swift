import GraphKitCore
import GraphKitRuntime

/// `source.rtsp`'s failures in words: what rtspsrc says (a refused certificate, 401, 404, a
/// reply that is not RTSP, no UDP) told as what happened to the user's server; and the URL's
/// %-escapes, which its user and password are read through.
extension RTSPSourceNode {
    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        let text = NetworkEndpoint.text(message, debug: debug)
        let server = "the RTSP server \"\(endpoint.shown)\""
        let what: String
        if let problems = refusedCertificate.withLock({ $0 }) {
            let advice = problems.contains("authority") ? context.parameters[Self.certificateAuthority] == nil
                ? ": give the authority that signed it (or the certificate itself) as certificateAuthority"
                : ": certificateAuthority does not hold the authority that signed it" : ""
            what = "\(server) presented a certificate that is not trusted: \(problems)\(advice)"
        } else if text.contains("Unauthorized") || text.contains("(401)") {
            what = credentials == nil ? "\(server) requires a user and password, and none is given (401 Unauthorized)"
                : "\(server) refused the user and password (401 Unauthorized)"
        } else if text.contains("Not found") || text.contains("(404)") {
            what = "\(server) has no stream at that path (404 Not Found)"
        } else if text.contains("Parse error") {
            // rtspsrc could not read the reply as RTSP: something else answers there.
            what = "\(server) answered with something that is not RTSP (its reply could not be parsed)"
        } else if text.contains("Could not receive any UDP packets") {
            what = "\(server) sent no packets over UDP within \(context.parameters[Self.timeout]) s (a firewall?): try transport tcp"
        } else if text.contains("No supported stream was found") {
            // rtspsrc's words suggest a missing plugin (and the run said 69): it is the server's
            // description, or its answers to SETUP, that offer nothing it can set up.
            what = "\(server) offered no stream source.rtsp can set up over transport \(context.parameters[Self.transport].rawValue): "
                + "its description (SDP) has no track it can receive, or it refused or did not answer the SETUP of each"
        } else {
            switch NetworkEndpoint.failure(in: text) {
            case .unreachable? where tls:
                // rtspsrc says the same "Failed to connect" for a closed port and a handshake
                // with something that does not speak TLS.
                what = "\(server) could not be reached over TLS (nothing answered there, or what answered does not speak TLS)"
            case .unreachable?: what = "\(server) could not be reached (nothing answered there)"
            case .timedOut?: what = "\(server) did not answer within \(context.parameters[Self.timeout]) s"
            case .unresolved?: what = "\(server): the host \"\(endpoint.host)\" cannot be resolved"
            case nil:
                // GStreamer's words for a resource's failure say nothing of the cause ("Could not
                // get/set settings from/on resource."): rtspsrc's own reason, its debug text's last
                // line ("Server did not select transport."), is what the server did.
                guard Self.genericResourceFailures.contains(where: message.contains),
                      let reason = debug?.split(separator: "\n").last.map({ String($0.drop(while: \.isWhitespace)) }),
                      !reason.isEmpty, !reason.hasPrefix("../"), reason.count <= 300 else { return nil }
                what = "\(server) gave an answer source.rtsp cannot use: \(endpoint.scrubbed(reason))"
            }
        }
        return endpoint.error(what, text: text, node: context.id, at: location)
    }

    /// GStreamer's messages for a resource's failures, which name no cause.
    static let genericResourceFailures = [
        "Could not get/set settings from/on resource", "Could not open resource for reading", "Could not read from resource",
        "Could not write to resource",
    ]

    /// `text` with its %-escapes decoded (RFC 3986); nil when one is malformed or not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var i = text.utf8.startIndex
        let utf8 = text.utf8
        while i < utf8.endIndex {
            if utf8[i] == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                // Two hex digits, no more (UInt8(_:radix:) would take a sign: "%+4").
                guard h < utf8.endIndex, utf8.index(after: h) < utf8.endIndex,
                      utf8[h...utf8.index(after: h)].allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
                      let byte = UInt8(String(decoding: utf8[h...utf8.index(after: h)], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(byte)
                i = utf8.index(h, offsetBy: 2)
            } else {
                bytes.append(utf8[i])
                i = utf8.index(after: i)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
