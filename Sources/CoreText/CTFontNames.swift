import Foundation

// Apple's font names as fontconfig families. A Mac has Helvetica, Menlo and Times; Linux has
// whatever fonts are installed, found by fontconfig. A name is split into a family and a style
// ("Helvetica-BoldOblique" → Helvetica, bold, oblique; "TimesNewRomanPS-BoldMT" → Times New Roman,
// bold), and the family is asked of fontconfig followed by its generic kind, so an installed
// Helvetica (or fontconfig's metric alias of it, Liberation Sans or Nimbus Sans) is taken first
// and DejaVu Sans otherwise:
//
//   sans-serif  Helvetica, Helvetica Neue, Arial, Lucida Grande, Geneva, Verdana, Tahoma, Avenir,
//               Avenir Next, the system fonts (".SFUI…", ".SFNS…", "SF Pro…", "system", ".AppleSystemUIFont")
//   monospace   Menlo, Monaco, Courier, Courier New, SF Mono, Andale Mono
//   serif       Times, Times New Roman, Georgia, Palatino, Baskerville, New York
//
// Any other name is asked as it is, then sans-serif (fontconfig's own fallback): an unknown name
// still draws, as Apple's falls back to a system font.

/// What a font name asks for: a fontconfig family list, a weight and a slant.
struct FontRequest: Equatable {
    var families: String
    var weight: Int32 = 400   // Pango's (CSS's) weights: 400 regular, 700 bold
    var italic = false
}

extension FontRequest {
    static let generics: [(String, [String])] = [
        ("sans-serif", ["helvetica", "helveticaneue", "arial", "lucidagrande", "geneva", "verdana", "tahoma", "avenir", "avenirnext",
                        "system", "systemfont", "applesystemuifont", "sfui", "sfuitext", "sfuidisplay", "sfns", "sfnstext",
                        "sfnsdisplay", "sfpro", "sfprotext", "sfprodisplay"]),
        ("monospace", ["menlo", "monaco", "courier", "couriernew", "sfmono", "andalemono"]),
        ("serif", ["times", "timesroman", "timesnewroman", "georgia", "palatino", "baskerville", "newyork"]),
    ]

    /// Style words of a PostScript name's suffix, longest first, with their weight (nil: slant).
    static let styles: [(String, Int32?)] = [
        ("ultralight", 200), ("extralight", 200), ("semibold", 600), ("demibold", 600), ("extrabold", 800),
        ("ultrabold", 800), ("regular", 400), ("roman", 400), ("medium", 500), ("light", 300), ("thin", 100),
        ("heavy", 900), ("black", 900), ("bold", 700), ("book", 400), ("italic", nil), ("oblique", nil),
    ]

    init(name: String) {
        var family = name, style = ""
        // "Family-Style" (PostScript) or "Family Style" (a full name: "Helvetica Bold").
        if let dash = name.lastIndex(of: "-"), dash != name.startIndex {
            (family, style) = (String(name[..<dash]), String(name[name.index(after: dash)...]).lowercased())
        } else if let space = name.lastIndex(of: " "), !Self.isKnown(name),
                  Self.styles.contains(where: { $0.0 == name[name.index(after: space)...].lowercased() }) {
            (family, style) = (String(name[..<space]), String(name[name.index(after: space)...]).lowercased())
        }
        // Apple's PostScript decorations: "TimesNewRomanPSMT", "Arial-BoldMT".
        for suffix in ["PSMT", "MT", "PS"] where family.hasSuffix(suffix) && family.count > suffix.count + 2 {
            family.removeLast(suffix.count)
            break
        }
        if style.hasSuffix("mt") { style.removeLast(2) }
        var rest = Substring(style)
        while !rest.isEmpty {
            guard let (word, weight) = Self.styles.first(where: { rest.hasPrefix($0.0) }) else {
                // Not a style after all ("Foo-Bar"): the whole name is the family.
                (family, rest, self.weight, italic) = (name, "", 400, false)
                break
            }
            if let weight { self.weight = weight } else { italic = true }
            rest = rest.dropFirst(word.count)
        }
        let key = family.lowercased().filter { $0.isLetter }
        let generic = Self.generics.first { $0.1.contains(key) }?.0 ?? (key.hasPrefix("sfmono") ? "monospace" : "sans-serif")
        // Apple's hidden system names (".SFUI-Regular") mean the system font: the generic only.
        let spaced = family.hasPrefix(".") || key == "system" || key == "systemfont" ? nil : Self.spaced(family)
        families = [spaced, generic].compactMap { $0 }.joined(separator: ",")
    }

    /// Whether a family is one of the table's ("Times New Roman" is, though "Roman" is a style).
    static func isKnown(_ family: String) -> Bool {
        let key = family.lowercased().filter { $0.isLetter }
        return generics.contains { $0.1.contains(key) }
    }

    /// "TimesNewRoman" → "Times New Roman": fontconfig's family names have spaces.
    static func spaced(_ family: String) -> String {
        var out = ""
        for (i, c) in family.enumerated() {
            if i > 0, c.isUppercase, let last = out.last, last.isLowercase { out.append(" ") }
            out.append(c)
        }
        return out.replacingOccurrences(of: ",", with: " ")
    }
}
