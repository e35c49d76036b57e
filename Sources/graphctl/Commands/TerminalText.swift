/// Text from a file (its tags, its streams' names) or from the command line (a file name), made
/// safe to print on a terminal: every control character — C0 (NUL, BEL, ESC, newline, tab…), DEL
/// and C1 — is shown as an escape instead of being sent, so a tag cannot move the cursor,
/// retitle the window, ring the bell or forge a line of the output. C0 and DEL read `\x1B`, as
/// a byte that is not UTF-8 reads in a file name (`caf\xE9.wav`, InputList); C1, two bytes in
/// UTF-8, reads `\u{9B}`. Everything else, accents and all, is printed as it is.
enum TerminalText {
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for u in text.unicodeScalars {
            if u.value < 0x20 || u.value == 0x7F {
                let hex = String(u.value, radix: 16, uppercase: true)
                out += "\\x" + (hex.count == 1 ? "0" : "") + hex
            } else if isControl(u) {
                out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    static func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (0x7F...0x9F).contains(u.value) }
}
