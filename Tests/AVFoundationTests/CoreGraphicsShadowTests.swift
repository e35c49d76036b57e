import CoreGraphics
import Foundation
import Testing

/// CGContext's shadows, pixel by pixel: a sharp shadow's exact values, a blurred one's total,
/// symmetry and reach, the offset in device space whatever the CTM, the graphics state, the
/// clip, and that strokes, images and other layouts cast them too.
@Suite struct CoreGraphicsShadowTests {
    static let bgra = CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue

    static func context(_ w: Int, _ h: Int, info: UInt32 = bgra) throws -> CGContext {
        try #require(CGContext(data: nil, width: w, height: h, bitsPerComponent: 8, bytesPerRow: 0,
                               space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: info))
    }

    /// Pixel (x, y) in Apple's space (y up) as [blue, green, red, alpha] (the BGRA bytes).
    static func pixel(_ ctx: CGContext, _ x: Int, _ y: Int) -> [Int] {
        let p = ctx.data!.assumingMemoryBound(to: UInt8.self) + (ctx.height - 1 - y) * ctx.bytesPerRow + x * 4
        return (0..<4).map { Int(p[$0]) }
    }

    static func alpha(_ ctx: CGContext) -> [[Int]] {
        (0..<ctx.height).map { y in (0..<ctx.width).map { x in pixel(ctx, x, y)[3] } }
    }

    static func close(_ a: [Int], _ b: [Int], _ tolerance: Int = 1) -> Bool {
        zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
    }

    /// Blur 0: the shadow is the rect moved by (10, -10) in Apple's default colour (black, a
    /// third alpha) where the rect does not cover it, over white and over nothing.
    @Test func aSharpShadowIsTheShiftedShapeInItsColour() throws {
        for background in [false, true] {
            let ctx = try Self.context(80, 60)
            if background { ctx.setFillColor(.white); ctx.fill(CGRect(x: 0, y: 0, width: 80, height: 60)) }
            ctx.setShadow(offset: CGSize(width: 10, height: -10), blur: 0)
            ctx.setFillColor(CGColor(red: 1, green: 0, blue: 0, alpha: 1))
            ctx.fill(CGRect(x: 20, y: 25, width: 20, height: 15))
            let rect = CGRect(x: 20, y: 25, width: 20, height: 15), shadow = rect.offsetBy(dx: 10, dy: -10)
            // Black at alpha 1/3 over white: 255 × 2/3 = 170; over nothing: alpha 85, colour 0.
            let shade = background ? [170, 170, 170, 255] : [0, 0, 0, 85]
            let empty = background ? [255, 255, 255, 255] : [0, 0, 0, 0]
            for y in 0..<60 {
                for x in 0..<80 {
                    let p = CGPoint(x: Double(x) + 0.5, y: Double(y) + 0.5)
                    let expected = rect.contains(p) ? [0, 0, 255, 255] : shadow.contains(p) ? shade : empty
                    #expect(Self.close(Self.pixel(ctx, x, y), expected), "pixel (\(x), \(y)): \(Self.pixel(ctx, x, y)), expected \(expected)")
                }
            }
        }
    }

    /// Blur 6 (sigma 3) of an opaque black shadow 50 pixels to the right of its 20 × 20 square:
    /// the same total alpha as the square (within 2%), mirror-symmetric about the moved square's
    /// centre, reaching past its edge about the blur and never farther than twice it.
    @Test func aBlurredShadowKeepsItsAlphaIsSymmetricAndReachesAboutTheBlur() throws {
        let blur = 6
        let ctx = try Self.context(140, 80)
        ctx.setShadow(offset: CGSize(width: 50, height: 0), blur: CGFloat(blur), color: CGColor(gray: 0, alpha: 1))
        ctx.setFillColor(CGColor(red: 0, green: 0, blue: 1, alpha: 1))
        ctx.fill(CGRect(x: 10, y: 30, width: 20, height: 20))
        let alpha = Self.alpha(ctx)
        // The shadow: square x 60..<80, y 30..<50; everything right of x = 40 is shadow.
        let total = alpha.reduce(0) { $0 + $1[40...].reduce(0, +) }
        #expect(abs(Double(total) / 255 - 400) <= 8, "total alpha \(Double(total) / 255), the square's 400")
        var asymmetry = 0
        for y in 0..<80 { for x in 40..<100 { asymmetry = max(asymmetry, abs(alpha[y][x] - alpha[79 - y][139 - x])) } }
        #expect(asymmetry <= 1)
        // Reach: along the middle row, the last pixel with alpha is about `blur` past x = 80.
        let lastInk = try #require((40..<140).last { alpha[40][$0] > 0 })
        #expect(lastInk >= 80 + blur - 1 && lastInk < 80 + 2 * blur, "last ink at \(lastInk)")
        // Nothing anywhere farther than twice the blur from the square.
        for y in 0..<80 {
            for x in 40..<140 where alpha[y][x] > 0 {
                let (ex, ey) = (max(0, max(60 - x, x - 79)), max(0, max(30 - y, y - 49)))
                #expect(ex <= 2 * blur && ey <= 2 * blur, "ink at (\(x), \(y))")
            }
        }
        // Blurred: the edge is soft (between none and full), the middle nearly full.
        #expect(alpha[40][80] > 20 && alpha[40][80] < 200)
        #expect(alpha[40][70] >= 250)
    }

    /// The offset is in device space: a scaled and rotated CTM moves and turns the shape, not
    /// the shadow's offset. Checked against the shape's own alpha, moved by hand: with an opaque
    /// shadow colour, alpha = shape + moved shape × (1 − shape).
    @Test func theOffsetIgnoresTheCTM() throws {
        func draw(_ ctx: CGContext) {
            ctx.translateBy(x: 50, y: 10)
            ctx.rotate(by: .pi / 5)
            ctx.scaleBy(x: 2, y: 1.5)
            ctx.fill(CGRect(x: 0, y: 0, width: 12, height: 10))
        }
        let shape = try Self.context(100, 70), shadowed = try Self.context(100, 70)
        draw(shape)
        shadowed.setShadow(offset: CGSize(width: 7, height: 5), blur: 0, color: CGColor(gray: 0, alpha: 1))
        draw(shadowed)
        let a = Self.alpha(shape), b = Self.alpha(shadowed)
        var worst = 0, shadowPixels = 0
        for y in 0..<70 {
            for x in 0..<100 {
                let moved = x >= 7 && y >= 5 ? a[y - 5][x - 7] : 0
                let expected = a[y][x] + (moved * (255 - a[y][x]) + 127) / 255
                worst = max(worst, abs(b[y][x] - expected))
                if moved > 0 && a[y][x] == 0 { shadowPixels += 1 }
            }
        }
        #expect(shadowPixels > 50)
        #expect(worst <= 1, "largest difference \(worst)")
    }

    @Test func theShadowIsPartOfTheGraphicsStateAndNilTurnsItOff() throws {
        let cases: [(CGContext) -> Void] = [
            { ctx in ctx.saveGState(); ctx.setShadow(offset: CGSize(width: 5, height: 5), blur: 2); ctx.restoreGState() },
            { ctx in ctx.setShadow(offset: CGSize(width: 5, height: 5), blur: 2); ctx.setShadow(offset: CGSize(width: 5, height: 5), blur: 2, color: nil) },
            { ctx in ctx.setShadow(offset: CGSize(width: 5, height: 5), blur: 2, color: CGColor(red: 1, green: 0, blue: 0, alpha: 0)) },
        ]
        for (i, setUp) in cases.enumerated() {
            let ctx = try Self.context(40, 40)
            setUp(ctx)
            ctx.fill(CGRect(x: 10, y: 10, width: 10, height: 10))
            let inked = Self.alpha(ctx).joined().filter { $0 > 0 }.count
            #expect(inked == 100, "case \(i): \(inked) pixels drawn, the square's 100")
        }
        // And kept across a save when it was set before it.
        let ctx = try Self.context(40, 40)
        ctx.setShadow(offset: CGSize(width: 5, height: 5), blur: 0)
        ctx.saveGState(); ctx.restoreGState()
        ctx.fill(CGRect(x: 10, y: 10, width: 10, height: 10))
        #expect(Self.pixel(ctx, 22, 22) == [0, 0, 0, 85])
    }

    /// The clip cuts the shadow too, and the shadow is cast by the unclipped shape: a square
    /// filled outside the clip shows only its shadow inside it (Apple's "inner shadow" recipe).
    @Test func theClipCutsTheShadowOfTheUnclippedShape() throws {
        let ctx = try Self.context(60, 40)
        ctx.clip(to: CGRect(x: 30, y: 0, width: 30, height: 40))
        ctx.setShadow(offset: CGSize(width: 20, height: 0), blur: 0, color: CGColor(red: 0, green: 1, blue: 0, alpha: 1))
        ctx.fill(CGRect(x: 5, y: 10, width: 20, height: 20))   // outside the clip; its shadow x 25..<45
        for y in 0..<40 {
            for x in 0..<60 {
                let inShadow = (30..<45).contains(x) && (10..<30).contains(y)
                #expect(Self.pixel(ctx, x, y) == (inShadow ? [0, 255, 0, 255] : [0, 0, 0, 0]), "pixel (\(x), \(y))")
            }
        }
    }

    @Test func strokesImagesAndOtherLayoutsCastShadows() throws {
        // A stroke: the square's outline moved by (8, -8) in blue where the stroke is not.
        let stroked = try Self.context(60, 60)
        stroked.setShadow(offset: CGSize(width: 8, height: -8), blur: 0, color: CGColor(red: 0, green: 0, blue: 1, alpha: 1))
        stroked.setLineWidth(2)
        stroked.stroke(CGRect(x: 10, y: 20, width: 30, height: 30))
        #expect(Self.pixel(stroked, 48, 30) == [255, 0, 0, 255])   // the shadow's right side, x 47..<49
        #expect(Self.pixel(stroked, 10, 30) == [0, 0, 0, 255])     // the stroke itself, black
        #expect(Self.pixel(stroked, 30, 30) == [0, 0, 0, 0])       // inside both outlines

        // An image: a green 10 × 10 picture whose shadow is its square moved, red.
        let source = try Self.context(10, 10)
        source.setFillColor(CGColor(red: 0, green: 1, blue: 0, alpha: 1))
        source.fill(CGRect(x: 0, y: 0, width: 10, height: 10))
        let image = try #require(source.makeImage())
        let drawn = try Self.context(40, 40)
        drawn.setShadow(offset: CGSize(width: 12, height: 0), blur: 0, color: CGColor(red: 1, green: 0, blue: 0, alpha: 1))
        drawn.draw(image, in: CGRect(x: 5, y: 5, width: 10, height: 10))
        #expect(Self.pixel(drawn, 10, 10) == [0, 255, 0, 255])
        #expect(Self.pixel(drawn, 20, 10) == [0, 0, 255, 255])
        #expect(Self.pixel(drawn, 16, 10) == [0, 0, 0, 0])

        // RGBA memory (drawn by Cairo in its own surface and converted): the shadow's pixels,
        // outside the shape's own box, are written back too.
        let rgba = try Self.context(40, 40, info: CGImageAlphaInfo.premultipliedLast.rawValue)
        rgba.setShadow(offset: CGSize(width: 15, height: 15), blur: 0, color: CGColor(red: 1, green: 0, blue: 0, alpha: 1))
        rgba.fill(CGRect(x: 5, y: 5, width: 10, height: 10))
        #expect(Self.pixel(rgba, 25, 25) == [255, 0, 0, 255])   // RGBA bytes: red, opaque
        #expect(Self.pixel(rgba, 10, 10) == [0, 0, 0, 255])
    }

    /// A gradient's shape is the clip it fills: half-transparent red over the clip rect, its
    /// opaque black shadow 3 pixels right, visible through the gradient inside the clip only:
    /// alpha 1/2 + 1/2 × 1/2 where the shadow is, 1/2 where it is not.
    @Test func aGradientCastsTheShadowOfTheClipItFills() throws {
        let ctx = try Self.context(40, 40)
        let red = CGColor(red: 1, green: 0, blue: 0, alpha: 0.5)
        let gradient = try #require(CGGradient(colorsSpace: CGColorSpaceCreateDeviceRGB(), colors: [red, red] as CFArray, locations: [0, 1]))
        ctx.clip(to: CGRect(x: 10, y: 10, width: 20, height: 20))
        ctx.setShadow(offset: CGSize(width: 3, height: 0), blur: 0, color: CGColor(gray: 0, alpha: 1))
        ctx.drawLinearGradient(gradient, start: CGPoint(x: 0, y: 0), end: CGPoint(x: 40, y: 0),
                               options: [.drawsBeforeStartLocation, .drawsAfterEndLocation])
        for y in 0..<40 {
            for x in 0..<40 {
                let inClip = (10..<30).contains(x) && (10..<30).contains(y)
                let alpha = !inClip ? 0 : x >= 13 ? 191 : 128
                #expect(abs(Self.pixel(ctx, x, y)[3] - alpha) <= 1, "pixel (\(x), \(y)): \(Self.pixel(ctx, x, y))")
            }
        }
    }

    /// Any finite or non-finite offset and blur an app passes: no trap, bounded time (the blur's
    /// cost no longer grows with it) and a sensible picture. The shape is always drawn; a huge
    /// offset moves the shadow out of sight; a huge blur spreads it so thin that nothing shows,
    /// as a true Gaussian's would; non-finite numbers turn it off.
    @Test func hostileOffsetsAndBlursNeitherTrapNorTakeLong() throws {
        let cases: [(CGFloat, CGFloat)] = [
            (0, 1e6), (0, 1e19), (0, .greatestFiniteMagnitude), (1e19, 0), (-1e19, 5), (1e19, 1e19),
            (.nan, 3), (.infinity, 3), (0, .infinity), (0, .nan), (-.infinity, -.infinity),
        ]
        for (offset, blur) in cases {
            let ctx = try Self.context(1920, 1080)
            ctx.setShadow(offset: CGSize(width: offset, height: offset), blur: blur, color: CGColor(gray: 0, alpha: 1))
            let start = Date()
            ctx.fill(CGRect(x: 200, y: 200, width: 400, height: 300))
            ctx.fill(CGRect(x: 0, y: 0, width: 1920, height: 1080))   // the whole context
            let seconds = Date().timeIntervalSince(start)
            #expect(seconds < 5, "offset \(offset), blur \(blur): \(seconds) s")
            #expect(Self.pixel(ctx, 400, 300) == [0, 0, 0, 255] && Self.pixel(ctx, 1900, 1000) == [0, 0, 0, 255])
        }
        // Only the small fill, to see its shadow (or the lack of one) around it.
        for (offset, blur) in cases {
            let ctx = try Self.context(1920, 1080)
            ctx.setShadow(offset: CGSize(width: offset, height: offset), blur: blur, color: CGColor(gray: 0, alpha: 1))
            ctx.fill(CGRect(x: 200, y: 200, width: 400, height: 300))
            let outside = [(100, 100), (700, 600), (1500, 900), (150, 350), (400, 550)].map { Self.pixel(ctx, $0.0, $0.1)[3] }
            #expect(outside.allSatisfy { $0 <= 1 }, "offset \(offset), blur \(blur): \(outside)")
            #expect(Self.pixel(ctx, 400, 300) == [0, 0, 0, 255])
        }
    }

    /// A 1920 × 1080 fill with blur 1e6 (sigma 500,000): well under a second (the old separable
    /// Gaussian ran 3 sigma each side of every pixel).
    @Test func aHugeBlurCostsNoMoreThanASmallOne() throws {
        let ctx = try Self.context(1920, 1080)
        ctx.setShadow(offset: CGSize(width: 10, height: 10), blur: 1e6, color: CGColor(gray: 0, alpha: 1))
        let start = Date()
        ctx.fill(CGRect(x: 0, y: 0, width: 1920, height: 1080))
        let seconds = Date().timeIntervalSince(start)
        #expect(seconds < 5, "\(seconds) s")
    }

    /// A large blur (40: sigma 20, drawn 5 times smaller and scaled back) keeps the exact path's
    /// properties: the square's total alpha (within 3%), symmetry, and no ink past 2 × blur.
    @Test func aLargeBlurKeepsItsAlphaAndSymmetry() throws {
        let blur = 40
        let ctx = try Self.context(480, 200)
        ctx.setShadow(offset: CGSize(width: 200, height: 0), blur: CGFloat(blur), color: CGColor(gray: 0, alpha: 1))
        ctx.fill(CGRect(x: 20, y: 80, width: 40, height: 40))   // its shadow x 220..<260, y 80..<120
        let alpha = Self.alpha(ctx)
        let total = alpha.reduce(0) { $0 + $1[120...].reduce(0, +) }
        #expect(abs(Double(total) / 255 - 1600) <= 48, "total alpha \(Double(total) / 255), the square's 1600")
        var asymmetry = 0
        for y in 0..<200 { for x in 160..<320 { asymmetry = max(asymmetry, abs(alpha[y][x] - alpha[199 - y][479 - x])) } }
        #expect(asymmetry <= 3, "asymmetry \(asymmetry)")
        for y in 0..<200 {
            for x in 120..<480 where alpha[y][x] > 0 {
                let (ex, ey) = (max(0, max(220 - x, x - 259)), max(0, max(80 - y, y - 119)))
                #expect(ex <= 2 * blur && ey <= 2 * blur, "ink at (\(x), \(y))")
            }
        }
        #expect(alpha[100][240] > 100 && alpha[100][240] < 255 && alpha[100][262] > 20 && alpha[100][262] < alpha[100][240])
    }

    /// A small shadowed fill on a large context works on the shape's own box plus the blur, not
    /// the whole clip (16 M pixels here): fast, and the same pixels as on a small context.
    @Test func aSmallShadowOnALargeContextIsCheap() throws {
        let big = try Self.context(4000, 4000), small = try Self.context(40, 40)
        let start = Date()
        for i in 0..<20 {
            big.setShadow(offset: CGSize(width: 3, height: -2), blur: 4, color: CGColor(red: 0, green: 0, blue: 1, alpha: 0.8))
            big.fill(CGRect(x: 100 + 150 * i, y: 3000, width: 12, height: 9))
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(seconds < 1, "20 small shadowed fills on 4000 × 4000: \(seconds) s")
        small.setShadow(offset: CGSize(width: 3, height: -2), blur: 4, color: CGColor(red: 0, green: 0, blue: 1, alpha: 0.8))
        small.fill(CGRect(x: 10, y: 15, width: 12, height: 9))
        for y in 0..<40 {
            for x in 0..<40 {
                #expect(Self.pixel(big, 90 + 150 * 7 + x, 2985 + y) == Self.pixel(small, x, y), "pixel (\(x), \(y))")
            }
        }
    }

    /// On a context 32,767 pixels wide (Cairo's most) a blurred shadow is drawn: its surface is
    /// the shape's box plus the blur, not the whole width plus the blur (past Cairo's limit, so
    /// the shadow was dropped).
    @Test func aBlurredShadowOnTheWidestContextIsDrawn() throws {
        let ctx = try Self.context(32767, 24)
        ctx.setShadow(offset: CGSize(width: 0, height: -8), blur: 4, color: CGColor(gray: 0, alpha: 1))
        ctx.fill(CGRect(x: 16000, y: 14, width: 200, height: 6))   // its shadow y 6..<12
        let column = (0..<24).map { Self.pixel(ctx, 16100, $0)[3] }
        #expect(column[8] > 180 && column[9] > 180 && column[1] < 30, "\(column)")
    }
}
