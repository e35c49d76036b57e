import Foundation
import CoreGraphics

// The attributes CoreText reads from an attributed string, by Apple's names and string values.

/// The run's font: a ``CTFont`` (Apple's value is "NSFont", the same as `NSAttributedString.Key.font`).
public let kCTFontAttributeName: CFString = "NSFont"
/// The run's colour: a `CGColor` (default black).
public let kCTForegroundColorAttributeName: CFString = "CTForegroundColor"
/// True: the run takes the context's fill colour instead of a colour of its own.
public let kCTForegroundColorFromContextAttributeName: CFString = "CTForegroundColorFromContext"

extension NSAttributedString.Key {
    /// The font key of AppKit and UIKit, which Linux's Foundation lacks: a ``CTFont`` value here.
    public static let font = NSAttributedString.Key(kCTFontAttributeName)
    /// The colour key of AppKit and UIKit ("NSColor"): a `CGColor` value here (there is no NSColor
    /// or UIColor), read by CoreText as ``kCTForegroundColorAttributeName``.
    public static let foregroundColor = NSAttributedString.Key("NSColor")
}

/// An attributed string of `str` whose attributes are `attributes` throughout, as CoreFoundation's;
/// the allocator is ignored.
public func CFAttributedStringCreate(_ alloc: CFAllocator!, _ str: CFString!, _ attributes: CFDictionary!) -> CFAttributedString! {
    let attrs = (attributes ?? [:]).reduce(into: [NSAttributedString.Key: Any]()) { $0[NSAttributedString.Key($1.key)] = $1.value }
    return NSAttributedString(string: str ?? "", attributes: attrs)
}

/// What one run of an attributed string asks for.
struct TextRun {
    var bytes: Range<Int>   // UTF-8 offsets, as Pango counts
    var font: CTFont?
    var color: CGColor?
    var colorFromContext: Bool
}

extension NSAttributedString {
    /// Its runs, each with the attributes CoreText reads.
    var textRuns: [TextRun] {
        let text = string
        var runs: [TextRun] = []
        func byte(_ utf16: Int) -> Int {
            let index = String.Index(utf16Offset: utf16, in: text)
            return text.utf8.distance(from: text.utf8.startIndex, to: index.samePosition(in: text.utf8) ?? index)
        }
        enumerateAttributes(in: NSRange(location: 0, length: length), options: []) { attributes, range, _ in
            let value = { (key: String) in attributes[NSAttributedString.Key(key)] }
            let color = value(kCTForegroundColorAttributeName) ?? value(NSAttributedString.Key.foregroundColor.rawValue)
            runs.append(TextRun(bytes: byte(range.location)..<byte(range.location + range.length),
                                font: value(kCTFontAttributeName) as? CTFont,
                                color: color.flatMap { $0 as? CGColor },
                                colorFromContext: settingsBool(value(kCTForegroundColorFromContextAttributeName)) == true))
        }
        return runs
    }
}
