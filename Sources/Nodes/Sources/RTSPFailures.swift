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
        } else {
            switch NetworkEndpoint.failure(in: text) {
            case .unreachable? where tls:
                // rtspsrc says the same "Failed to connect" for a closed port and a handshake
                // with something that does not speak TLS.
                what = "\(server) could not be reached over TLS (nothing answered there, or what answered does not speak TLS)"
            case .unreachable?: what = "\(server) could not be reached (nothing answered there)"
            case .timedOut?: what = "\(server) did not answer within \(context.parameters[Self.timeout]) s"
            case .unresolved?: what = "\(server): the host \"\(endpoint.host)\" cannot be resolved"
            case nil: return nil
            }
        }
        return endpoint.error(what, text: text, node: context.id, at: location)
    }

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
