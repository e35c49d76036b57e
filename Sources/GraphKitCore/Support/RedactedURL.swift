/// A network address as it may be shown: in messages, logs, statistics, `inspect` and `dot`.
///
/// A URL's credentials never leave the node that uses them: the user information
/// (`rtsp://user:password@host/…` shows as `rtsp://host/…`) and the value of any query item
/// whose name says it is a secret (`passphrase`, `password`, `pass`, `key`, `token`, `secret`,
/// `streamid`, `auth`…) are removed. ``scrub(_:)`` does the same to every URL inside a longer
/// text (GStreamer's debug text, which may quote the URL an element was given).
public enum RedactedURL {
    /// `url` without its credentials.
    public static func text(_ url: String) -> String {
        guard let schemeEnd = schemeMark(in: Substring(url)) else { return url }
        let scheme = url[..<schemeEnd.lowerBound]
        var rest = url[schemeEnd.upperBound...]
        // The authority ends at the first '/', '?' or '#'; user information is what comes before
        // its last '@'.
        let authorityEnd: Substring.Index = rest.firstIndex { c in c == "/" || c == "?" || c == "#" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            rest = rest[rest.index(after: at)...]
        }
        var shown = "\(scheme)://\(rest)"
        if let q = shown.firstIndex(of: "?") {
            let base = shown[..<q]
            let fragmentStart: String.Index = shown[q...].firstIndex(of: "#") ?? shown.endIndex
            let query = shown[shown.index(after: q)..<fragmentStart]
            var items: [String] = []
            for item in query.split(separator: "&", omittingEmptySubsequences: false) {
                let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                items.append(isSecret(name) ? "\(name)=…" : String(item))
            }
            shown = "\(base)?\(items.joined(separator: "&"))\(shown[fragmentStart...])"
        }
        return shown
    }

    static let secretNames: Set<String> = ["pass", "passphrase", "password", "pwd", "key", "pbkey", "token", "secret", "auth",
                                           "streamid", "user", "username", "sig", "signature"]

    /// `url` as ``text(_:)`` shows it, and without what follows its first path segment: an
    /// RTMP URL's stream key (`rtmp://host:1935/live/KEY` shows as `rtmp://host:1935/live/…`),
    /// its query and fragment. Text that is not a URL shows up to its first `/`, `?` or `#`.
    public static func withoutKey(_ url: String) -> String {
        let shown = text(url)
        let hostStart = schemeMark(in: Substring(shown))?.upperBound ?? shown.startIndex
        let ends: (Character) -> Bool = { $0 == "/" || $0 == "?" || $0 == "#" }
        guard let pathStart = shown[hostStart...].firstIndex(where: ends) else { return shown }
        guard shown[pathStart] == "/", shown.index(after: pathStart) < shown.endIndex,
              let appEnd = shown[shown.index(after: pathStart)...].firstIndex(where: ends) else {
            return shown[pathStart] == "/" && shown.index(after: pathStart) == shown.endIndex ? shown : "\(shown[..<pathStart])/…"
        }
        return "\(shown[..<appEnd])/…"
    }

    /// Whether a query item of this name holds a secret.
    public static func isSecret(_ name: String) -> Bool {
        let n = name.lowercased()
        if secretNames.contains(n) { return true }
        return ["password", "token", "secret", "key"].contains { n.hasSuffix($0) }
    }

    /// What ends a URL quoted in a text.
    static let endsURL: Set<Character> = [" ", "\"", "'", "\n", "\t", ">", ")", ","]

    /// The first "://" in `text`.
    static func schemeMark(in text: Substring) -> Range<Substring.Index>? {
        var i = text.startIndex
        while i < text.endIndex {
            if text[i...].hasPrefix("://") { return i..<text.index(i, offsetBy: 3) }
            i = text.index(after: i)
        }
        return nil
    }

    /// `text` with every URL in it (`scheme://…` up to the next space or quote) shown by ``text(_:)``.
    public static func scrub(_ text: String) -> String {
        guard text.contains("://") else { return text }
        var out = ""
        var rest = Substring(text)
        while let mark = schemeMark(in: rest) {
            // The scheme: the letters, digits, '+', '-' and '.' just before "://".
            var start = mark.lowerBound
            while start > rest.startIndex {
                let before = rest.index(before: start)
                let c = rest[before]
                guard c.isASCII, c.isLetter || c.isNumber || c == "+" || c == "-" || c == "." else { break }
                start = before
            }
            let end: Substring.Index = rest[mark.upperBound...].firstIndex { c in Self.endsURL.contains(c) } ?? rest.endIndex
            out += rest[..<start]
            out += self.text(String(rest[start..<end]))
            rest = rest[end...]
        }
        return out + rest
    }
}
