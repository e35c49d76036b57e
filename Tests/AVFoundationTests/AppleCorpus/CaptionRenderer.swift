// Written for Apple's platforms: a caption burned into a video frame's CGContext with CoreText,
// white with a soft drop shadow, centred above the bottom edge. Compiled unchanged; the test in
// CoreTextTests.swift only calls it.
import CoreGraphics
import CoreText
import Foundation

final class CaptionRenderer {
    let font: CTFont
    let margin: CGFloat

    init(fontName: String = "Helvetica-Bold", size: CGFloat = 28, margin: CGFloat = 16) {
        font = CTFontCreateWithName(fontName as CFString, size, nil)
        self.margin = margin
    }

    /// Draws `text` centred horizontally, its descenders `margin` above the bottom; returns the line's width.
    @discardableResult
    func draw(_ text: String, in context: CGContext, width: Int) -> CGFloat {
        let attributes: [NSAttributedString.Key: Any] = [
            .font: font,
            .foregroundColor: CGColor(red: 1, green: 1, blue: 1, alpha: 1),
        ]
        let line = CTLineCreateWithAttributedString(NSAttributedString(string: text, attributes: attributes) as CFAttributedString)
        var ascent: CGFloat = 0, descent: CGFloat = 0, leading: CGFloat = 0
        let lineWidth = CGFloat(CTLineGetTypographicBounds(line, &ascent, &descent, &leading))
        context.saveGState()
        context.setShadow(offset: CGSize(width: 2, height: -2), blur: 4, color: CGColor(gray: 0, alpha: 0.8))
        context.textMatrix = .identity
        context.textPosition = CGPoint(x: (CGFloat(width) - lineWidth) / 2, y: margin + descent)
        CTLineDraw(line, context)
        context.restoreGState()
        return lineWidth
    }
}
