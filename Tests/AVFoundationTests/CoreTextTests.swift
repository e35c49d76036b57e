import CCairo
import CoreGraphics
import CoreText
import CPangoCairo
import Foundation
import Testing

/// CoreText's lines drawn into a CGContext: against Pango drawing the same string directly, the
/// baseline at the text position in Apple's space, widths, colours, the CTM, font names, fallback,
/// and the context's shadow, clip and alpha.
@Suite struct CoreTextTests {
    static let bgra = CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue

    static func context(_ w: Int, _ h: Int) throws -> CGContext {
        try #require(CGContext(data: nil, width: w, height: h, bitsPerComponent: 8, bytesPerRow: 0,
                               space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: bgra))
    }

    static func bytes(_ ctx: CGContext) -> [UInt8] {
        Array(UnsafeBufferPointer(start: ctx.data!.assumingMemoryBound(to: UInt8.self), count: ctx.bytesPerRow * ctx.height))
    }

    /// Pixel (x, y) in Apple's space (y up): [blue, green, red, alpha].
    static func pixel(_ ctx: CGContext, _ x: Int, _ y: Int) -> [Int] {
        let p = ctx.data!.assumingMemoryBound(to: UInt8.self) + (ctx.height - 1 - y) * ctx.bytesPerRow + x * 4
        return (0..<4).map { Int(p[$0]) }
    }

    /// The box (x0, y0, x1, y1) in Apple's space of the pixels where `inked` holds, or nil.
    static func inkBox(_ ctx: CGContext, _ inked: ([Int]) -> Bool = { $0[3] > 0 }) -> (Int, Int, Int, Int)? {
        var box: (Int, Int, Int, Int)?
        for y in 0..<ctx.height {
            for x in 0..<ctx.width where inked(pixel(ctx, x, y)) {
                box = box.map { (min($0.0, x), min($0.1, y), max($0.2, x + 1), max($0.3, y + 1)) } ?? (x, y, x + 1, y + 1)
            }
        }
        return box
    }

    static func line(_ text: String, _ font: CTFont, _ color: CGColor = CGColor(gray: 0, alpha: 1)) -> CTLine {
        let string = NSAttributedString(string: text, attributes: [.font: font, .foregroundColor: color])
        return CTLineCreateWithAttributedString(string as CFAttributedString)
    }

    /// The same string in the same face, size and colour drawn by Pango over Cairo directly, its
    /// baseline at (20, 30) of Apple's space (row h − 30 from the top), with the options
    /// CoreText's Pango context uses (unhinted, unrounded positions, gray antialiasing): every
    /// byte equal.
    @Test func aLineIsWhatPangoDrawsAtTheTextPosition() throws {
        let (w, h) = (220, 60), text = "Hello, Wörld! AVg fi"
        let ctx = try Self.context(w, h)
        ctx.textPosition = CGPoint(x: 20, y: 30)
        CTLineDraw(Self.line(text, CTFontCreateWithName("DejaVu Sans", 20, nil), CGColor(red: 0.8, green: 0.2, blue: 0, alpha: 1)), ctx)

        let surface = try #require(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(w), Int32(h)))
        defer { cairo_surface_destroy(surface) }
        let cr = try #require(cairo_create(surface))
        defer { cairo_destroy(cr) }
        let pango = try #require(pango_cairo_create_context(cr))
        defer { g_object_unref(UnsafeMutableRawPointer(pango)) }
        let options = cairo_font_options_create()
        defer { cairo_font_options_destroy(options) }
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        pango_cairo_context_set_font_options(pango, options)
        pango_cairo_context_set_resolution(pango, 72)
        pango_context_set_round_glyph_positions(pango, 0)
        let layout = try #require(pango_layout_new(pango))
        defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
        let description = pango_font_description_from_string("DejaVu Sans")
        defer { pango_font_description_free(description) }
        pango_font_description_set_absolute_size(description, 20 * Double(PANGO_SCALE))
        pango_layout_set_font_description(layout, description)
        pango_layout_set_text(layout, text, -1)
        cairo_set_source_rgba(cr, Double(UInt16(0.8 * 65535 + 0.5)) / 65535, Double(UInt16(0.2 * 65535 + 0.5)) / 65535, 0, 1)
        cairo_move_to(cr, 20, Double(h - 30))
        pango_cairo_show_layout_line(cr, pango_layout_get_line_readonly(layout, 0))
        cairo_surface_flush(surface)
        let data = cairo_image_surface_get_data(surface)!
        let theirs = Array(UnsafeBufferPointer(start: data, count: Int(cairo_image_surface_get_stride(surface)) * h))
        let ours = Self.bytes(ctx)
        #expect(ours.count == theirs.count)
        let difference = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(difference == 0, "largest difference \(difference)/255")
        #expect(ours.contains { $0 != 0 })
    }

    /// "HHH" stands on the baseline (its ink starts at the text position's row, in Apple's y-up
    /// space); the "g" of "ggg" hangs below it.
    @Test func theBaselineIsAtTheTextPositionInApplesSpace() throws {
        let font = CTFontCreateWithName("Helvetica", 24, nil)
        let capitals = try Self.context(120, 60)
        capitals.textPosition = CGPoint(x: 10, y: 20)
        CTLineDraw(Self.line("HHH", font), capitals)
        let h = try #require(Self.inkBox(capitals))
        #expect(h.1 == 20, "the H's lowest inked row \(h.1)")
        #expect(h.3 > 35 && h.3 < 40, "cap height \(h.3 - 20) of 24-point DejaVu Sans (0.73 em)")
        #expect(h.0 >= 10 && h.0 <= 13)

        let descenders = try Self.context(120, 60)
        descenders.textPosition = CGPoint(x: 10, y: 20)
        CTLineDraw(Self.line("ggg", font), descenders)
        let g = try #require(Self.inkBox(descenders))
        #expect(g.1 < 16 && g.1 >= 20 - Int(CTFontGetDescent(font).rounded(.up)) - 1, "the g's lowest row \(g.1)")
        #expect(g.3 > 30)
    }

    /// Widths: longer strings are wider; "HH" then "HH" drawn one width further gives the
    /// pixels of "HHHH" (the width is the advance), and the image bounds are the drawn ink.
    @Test func typographicBoundsAndImageBounds() throws {
        let font = CTFontCreateWithName("Helvetica", 20, nil)
        var ascent: CGFloat = 0, descent: CGFloat = 0, leading: CGFloat = -1
        let two = CTLineGetTypographicBounds(Self.line("HH", font), &ascent, &descent, &leading)
        let four = CTLineGetTypographicBounds(Self.line("HHHH", font), nil, nil, nil)
        #expect(two > 20 && abs(four - 2 * two) < 0.01, "HH \(two), HHHH \(four)")
        #expect(CTLineGetTypographicBounds(Self.line("HHHH is longer", font), nil, nil, nil) > four)
        #expect(abs(ascent - CTFontGetAscent(font)) < 0.01 && abs(descent - CTFontGetDescent(font)) < 0.01)
        #expect(ascent > 14 && ascent < 22 && descent > 3 && descent < 8 && leading >= 0)

        let whole = try Self.context(160, 40), halves = try Self.context(160, 40)
        whole.textPosition = CGPoint(x: 10, y: 10)
        CTLineDraw(Self.line("HHHH", font), whole)
        halves.textPosition = CGPoint(x: 10, y: 10)
        CTLineDraw(Self.line("HH", font), halves)
        halves.textPosition = CGPoint(x: 10 + two, y: 10)
        CTLineDraw(Self.line("HH", font), halves)
        let difference = zip(Self.bytes(whole), Self.bytes(halves)).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(difference <= 1, "HH + HH against HHHH: \(difference)/255")

        let ink = try #require(Self.inkBox(whole))
        let bounds = CTLineGetImageBounds(Self.line("HHHH", font), whole)
        #expect(abs(bounds.minX - CGFloat(ink.0)) <= 1 && abs(bounds.maxX - CGFloat(ink.2)) <= 1, "\(bounds) against \(ink)")
        #expect(abs(bounds.minY - CGFloat(ink.1)) <= 1 && abs(bounds.maxY - CGFloat(ink.3)) <= 1, "\(bounds) against \(ink)")
        #expect(abs(CGFloat(ink.2 - ink.0) - four) < 6, "ink \(ink.2 - ink.0) within the side bearings of the advance \(four)")
    }

    /// Colours by Apple's keys: kCTForegroundColorAttributeName, `.foregroundColor`, black by
    /// default, and the context's fill colour with kCTForegroundColorFromContextAttributeName.
    @Test func theColourAttributeIsHonoured() throws {
        let font = CTFontCreateWithName("Helvetica-Bold", 24, nil)
        let green = CGColor(red: 0, green: 1, blue: 0, alpha: 1)
        let strings: [(NSAttributedString, [Int])] = [
            (NSAttributedString(string: "Ab", attributes: [NSAttributedString.Key(kCTFontAttributeName as String): font,
                                                          NSAttributedString.Key(kCTForegroundColorAttributeName as String): green]), [0, 1, 0]),
            (NSAttributedString(string: "Ab", attributes: [.font: font, .foregroundColor: CGColor(red: 0, green: 0, blue: 1, alpha: 1)]), [1, 0, 0]),
            (NSAttributedString(string: "Ab", attributes: [.font: font]), [0, 0, 0]),
            (CFAttributedStringCreate(kCFAllocatorDefault, "Ab" as CFString,
                                      [kCTFontAttributeName as String: font, kCTForegroundColorFromContextAttributeName as String: true]), [0, 0, 1]),
        ]
        for (i, (string, channels)) in strings.enumerated() {
            let ctx = try Self.context(80, 40)
            ctx.setFillColor(CGColor(red: 1, green: 0, blue: 0, alpha: 1))   // read only by the last
            ctx.textPosition = CGPoint(x: 5, y: 10)
            CTLineDraw(CTLineCreateWithAttributedString(string), ctx)
            var opaque = 0
            for y in 0..<40 {
                for x in 0..<80 {
                    let p = Self.pixel(ctx, x, y)
                    // Premultiplied: each channel is its colour's share of the pixel's alpha.
                    #expect((0..<3).allSatisfy { p[$0] == channels[$0] * p[3] }, "string \(i), pixel (\(x), \(y)): \(p)")
                    if p[3] == 255 { opaque += 1 }
                }
            }
            #expect(opaque > 40, "string \(i): \(opaque) opaque pixels")
        }
    }

    /// A CTM scaled by 2 draws the text twice as wide and high; the text matrix moves it too.
    @Test func theCTMAndTheTextMatrixTransformTheText() throws {
        let line = Self.line("Hi", CTFontCreateWithName("Helvetica", 16, nil))
        let plain = try Self.context(120, 80), scaled = try Self.context(120, 80)
        plain.textPosition = CGPoint(x: 10, y: 10)
        CTLineDraw(line, plain)
        scaled.scaleBy(x: 2, y: 2)
        scaled.textPosition = CGPoint(x: 10, y: 10)
        CTLineDraw(line, scaled)
        let a = try #require(Self.inkBox(plain)), b = try #require(Self.inkBox(scaled))
        #expect(abs(b.0 - 2 * a.0) <= 2 && abs(b.1 - 2 * a.1) <= 2, "origin \(a) → \(b)")
        #expect(abs((b.2 - b.0) - 2 * (a.2 - a.0)) <= 2 && abs((b.3 - b.1) - 2 * (a.3 - a.1)) <= 2, "size \(a) → \(b)")
        // The text matrix is not part of the graphics state, as Apple's.
        plain.saveGState()
        plain.textMatrix = CGAffineTransform(scaleX: 3, y: 3)
        plain.restoreGState()
        #expect(plain.textMatrix.a == 3 && plain.textPosition == .zero)
    }

    /// The family fontconfig matches for `pattern` ("Menlo,monospace:bold"), as `fc-match` says.
    static func fcMatch(_ pattern: String) throws -> String {
        let process = Process(), pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["fc-match", "-f", "%{family[0]}", pattern]
        process.standardOutput = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return try #require(String(data: out, encoding: .utf8).flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Apple's names map to the faces fontconfig gives for their family and kind (sans, mono,
    /// serif), whatever fonts are installed (DejaVu alone, or Liberation's and URW's metric
    /// clones of Helvetica, Courier and Times); styles to faces; a name nobody has still draws, in
    /// the sans-serif face.
    @Test func fontNamesMapAndUnknownNamesFallBack() throws {
        let expected: [(String, String)] = [
            ("Helvetica", "Helvetica,sans-serif"), ("Menlo-Regular", "Menlo,monospace"), ("Courier", "Courier,monospace"),
            ("Times New Roman", "Times New Roman,serif"), (".SFUI-Regular", "sans-serif"),
            ("TimesNewRomanPS-BoldMT", "Times New Roman,serif:bold"), ("NoSuchFontAnywhere-Bold", "NoSuchFontAnywhere,sans-serif:bold"),
        ]
        for (name, pattern) in expected {
            let family = CTFontCopyFamilyName(CTFontCreateWithName(name as CFString, 12, nil))
            #expect(family == (try Self.fcMatch(pattern)), "\(name): \(family)")
        }
        let kinds = try ["sans-serif", "monospace", "serif"].map(Self.fcMatch)
        let found = ["Helvetica", "Menlo", "Times New Roman"].map { CTFontCopyFamilyName(CTFontCreateWithName($0 as CFString, 12, nil)) }
        #expect(Set(found).count == Set(kinds).count, "\(found) against fontconfig's \(kinds)")
        #expect(CTFontCopyPostScriptName(CTFontCreateWithName("Helvetica-Bold", 12, nil)).contains("Bold"))
        #expect(!CTFontCopyPostScriptName(CTFontCreateWithName("Helvetica", 12, nil)).contains("Bold"))
        #expect(CTFontGetSize(CTFontCreateWithName("Helvetica", 0, nil)) == 12)

        let unknown = CTFontCreateWithName("NoSuchFontAnywhere-Bold", 18, nil)
        let ctx = try Self.context(100, 40)
        ctx.textPosition = CGPoint(x: 5, y: 10)
        CTLineDraw(Self.line("Fallback", unknown), ctx)
        #expect(Self.inkBox(ctx) != nil)
    }

    /// Text casts the context's shadow, is cut by its clip and takes its alpha.
    @Test func textTakesTheShadowClipAndAlpha() throws {
        let line = Self.line("HH", CTFontCreateWithName("Helvetica-Bold", 24, nil))
        let plain = try Self.context(100, 50)
        plain.textPosition = CGPoint(x: 10, y: 15)
        CTLineDraw(line, plain)
        let text = try #require(Self.inkBox(plain))

        let shadowed = try Self.context(100, 50)
        shadowed.setShadow(offset: CGSize(width: 6, height: -6), blur: 0, color: CGColor(red: 0, green: 0, blue: 1, alpha: 1))
        shadowed.textPosition = CGPoint(x: 10, y: 15)
        CTLineDraw(line, shadowed)
        let blue = try #require(Self.inkBox(shadowed) { $0[0] > 0 })
        #expect(blue == (text.0 + 6, text.1 - 6, text.2 + 6, text.3 - 6), "shadow \(blue), text \(text)")

        let clipped = try Self.context(100, 50)
        clipped.clip(to: CGRect(x: 0, y: 0, width: 25, height: 50))
        clipped.setAlpha(0.5)
        clipped.textPosition = CGPoint(x: 10, y: 15)
        CTLineDraw(line, clipped)
        let cut = try #require(Self.inkBox(clipped))
        #expect(cut.0 == text.0 && cut.2 == 25)
        let strongest = (0..<50).flatMap { y in (0..<100).map { Self.pixel(clipped, $0, y)[3] } }.max()
        #expect(strongest == 128, "half alpha: \(String(describing: strongest))")
    }

    /// Fonts and lines made, measured, drawn and released on many threads at once (Pango's font
    /// map is not thread-safe; CoreText's lock keeps it whole): each picture is the same.
    @Test func linesAreDrawnOnManyThreadsAtOnce() throws {
        let reference = try Self.context(120, 40)
        reference.textPosition = CGPoint(x: 4, y: 12)
        CTLineDraw(Self.line("Threads 123", CTFontCreateWithName("Menlo", 16, nil)), reference)
        let expected = Self.bytes(reference)
        let results = UnsafeMutableBufferPointer<Bool>.allocate(capacity: 16)
        defer { results.deallocate() }
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            guard let ctx = try? Self.context(120, 40) else { return results[i] = false }
            ctx.textPosition = CGPoint(x: 4, y: 12)
            let font = CTFontCreateWithName(i % 2 == 0 ? "Menlo" : "Menlo-Regular", 16, nil)   // the same face
            _ = CTFontGetAscent(font)
            CTLineDraw(Self.line("Threads 123", font), ctx)
            results[i] = Self.bytes(ctx) == expected
        }
        #expect(results.allSatisfy { $0 })
    }

    /// A caption renderer written for Apple's platforms (AppleCorpus/CaptionRenderer.swift) over a
    /// mid-gray frame: white text centred, its shadow darker than the frame below and right of it.
    @Test func appleCaptionRendererRuns() throws {
        let ctx = try Self.context(240, 80)
        ctx.setFillColor(CGColor(gray: 0.5, alpha: 1))
        ctx.fill(CGRect(x: 0, y: 0, width: 240, height: 80))
        let width = CaptionRenderer().draw("Caption", in: ctx, width: 240)
        #expect(width > 80 && width < 200)
        let white = try #require(Self.inkBox(ctx) { $0[0] > 250 && $0[1] > 250 && $0[2] > 250 })
        #expect(abs((white.0 + white.2) - 240) <= 8, "centred: \(white)")
        #expect(white.1 >= 16 && white.1 <= 24, "above the margin: \(white)")
        let dark = try #require(Self.inkBox(ctx) { $0[0] < 100 })
        #expect(dark.2 > white.2 && dark.1 < white.1, "shadow \(dark), text \(white)")
        #expect(Self.pixel(ctx, 2, 78) == [128, 128, 128, 255])   // the frame elsewhere, untouched
    }

    /// A singular, NaN or overflowing font matrix is identity (the text is drawn untransformed);
    /// a NaN or singular text matrix, one whose product with the CTM overflows, or an infinite
    /// text position draws nothing; a CTM that would overflow is refused. After each the context
    /// still draws (Cairo's error state, which nothing clears, is never reached).
    @Test func hostileMatricesLeaveTheContextDrawing() throws {
        for var bad in [CGAffineTransform(a: 1, b: 2, c: 2, d: 4, tx: 0, ty: 0), CGAffineTransform(a: .nan, b: 0, c: 0, d: 1, tx: 0, ty: 0),
                        CGAffineTransform(a: 1e200, b: 0, c: 0, d: 1e200, tx: 0, ty: 0), CGAffineTransform(a: 1, b: 0, c: 0, d: 1, tx: .infinity, ty: 0)] {
            let font = CTFontCreateWithName("Helvetica", 24, &bad)
            #expect(CTFontGetMatrix(font) == .identity, "\(bad)")
            let plain = try Self.context(100, 40), ctx = try Self.context(100, 40)
            plain.textPosition = CGPoint(x: 5, y: 10)
            ctx.textPosition = CGPoint(x: 5, y: 10)
            CTLineDraw(Self.line("Hg", CTFontCreateWithName("Helvetica", 24, nil)), plain)
            CTLineDraw(Self.line("Hg", font), ctx)
            #expect(Self.bytes(ctx) == Self.bytes(plain) && Self.inkBox(ctx) != nil, "\(bad): drawn untransformed")
            ctx.fill(CGRect(x: 80, y: 0, width: 20, height: 40))
            #expect(Self.pixel(ctx, 90, 20) == [0, 0, 0, 255], "\(bad): the context draws on")
        }
        let setUps: [(String, Bool, (CGContext) -> Void)] = [
            ("NaN text matrix", false, { $0.textMatrix = CGAffineTransform(a: .nan, b: 0, c: 0, d: 1, tx: 5, ty: 10) }),
            ("singular text matrix", false, { $0.textMatrix = CGAffineTransform(a: 1, b: 1, c: 1, d: 1, tx: 5, ty: 10) }),
            ("text matrix × CTM overflows", false, { $0.scaleBy(x: 1e150, y: 1e150); $0.textMatrix = CGAffineTransform(scaleX: 1e160, y: 1e160) }),
            ("text matrix × CTM underflows", false, { $0.scaleBy(x: 1e-150, y: 1e-150); $0.textMatrix = CGAffineTransform(scaleX: 1e-160, y: 1e-160) }),
            ("infinite text position", false, { $0.textPosition = CGPoint(x: CGFloat.infinity, y: 10) }),
            ("CTM overflows (refused)", true, { $0.scaleBy(x: 1e200, y: 1e200); $0.textPosition = CGPoint(x: 5, y: 10) }),
        ]
        for (name, draws, setUp) in setUps {
            let ctx = try Self.context(100, 40)
            ctx.saveGState()
            setUp(ctx)
            CTLineDraw(Self.line("Hg", CTFontCreateWithName("Helvetica", 24, nil)), ctx)
            ctx.restoreGState()
            #expect((Self.inkBox(ctx) != nil) == draws, "\(name)")
            ctx.textMatrix = .identity
            ctx.fill(CGRect(x: 80, y: 0, width: 20, height: 40))
            #expect(Self.pixel(ctx, 90, 20) == [0, 0, 0, 255], "\(name): the context draws on")
            #expect(Self.pixel(ctx, 70, 20)[3] == 0, "\(name)")
        }
    }

    /// Should Cairo still end text drawing in its error state, the context goes on in a fresh
    /// Cairo context with its matrix and clip, and saved states still restore.
    @Test func aCairoErrorWhileDrawingTextDoesNotStopTheContext() throws {
        let ctx = try Self.context(60, 40)
        ctx.clip(to: CGRect(x: 0, y: 0, width: 30, height: 40))
        ctx.translateBy(x: 5, y: 0)
        ctx.saveGState()
        ctx.drawText(ink: CGRect(x: 0, y: -10, width: 20, height: 20)) { cr in
            var singular = cairo_matrix_t(xx: 0, yx: 0, xy: 0, yy: 0, x0: 0, y0: 0)
            cairo_transform(cr, &singular)
        }
        ctx.restoreGState()
        ctx.fill(CGRect(x: 0, y: 0, width: 10, height: 10))
        #expect(Self.pixel(ctx, 4, 5)[3] == 0 && Self.pixel(ctx, 5, 5) == [0, 0, 0, 255] && Self.pixel(ctx, 14, 5) == [0, 0, 0, 255])
        ctx.fill(CGRect(x: 0, y: 20, width: 60, height: 10))
        #expect(Self.pixel(ctx, 20, 25) == [0, 0, 0, 255] && Self.pixel(ctx, 40, 25)[3] == 0, "the clip kept")
    }

    /// Sizes: NaN, negative and infinite are 12 (as 0 is); past 16,384 points 16,384; below
    /// 1/1024 point 1/1024. Drawing and measuring any of them neither traps nor takes long.
    @Test func hostileFontSizesAreClamped() throws {
        let sizes: [(CGFloat, CGFloat)] = [(.nan, 12), (-5, 12), (.infinity, 12), (1e300, 16_384), (3e6, 16_384), (1e-300, 1.0 / 1024), (20, 20)]
        for (asked, size) in sizes {
            let font = CTFontCreateWithName("Helvetica", asked, nil)
            #expect(CTFontGetSize(font) == size, "\(asked)")
            let ctx = try Self.context(200, 100)
            ctx.textPosition = CGPoint(x: 10, y: 50)
            let start = Date()
            let line = Self.line("Hg", font)
            let width = CTLineGetTypographicBounds(line, nil, nil, nil)
            CTLineDraw(line, ctx)
            let seconds = Date().timeIntervalSince(start)
            #expect(seconds < 5 && width.isFinite && width >= 0, "\(asked): \(seconds) s, width \(width)")
            ctx.fill(CGRect(x: 0, y: 0, width: 4, height: 4))
            #expect(Self.pixel(ctx, 2, 2) == [0, 0, 0, 255], "\(asked): the context draws on")
        }
    }
}
