import CoreGraphics
import Testing

/// CGGradient drawn by a context, against the definition: colours interpolated linearly between
/// stops along the line (or between the circles), the clip filled only between the ends unless
/// the options extend them, the context's alpha applied.
@Suite struct CoreGraphicsGradientTests {
    static let rgba = CGImageAlphaInfo.premultipliedLast.rawValue

    static func context(_ width: Int, _ height: Int) throws -> CGContext {
        try #require(CGContext(data: nil, width: width, height: height, bitsPerComponent: 8, bytesPerRow: 0,
                               space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: rgba))
    }

    /// Pixel (x, y) in CoreGraphics' coordinates (origin bottom left), as RGBA bytes.
    static func pixel(_ ctx: CGContext, _ x: Int, _ y: Int) -> [Int] {
        let p = ctx.data!.assumingMemoryBound(to: UInt8.self) + (ctx.height - 1 - y) * ctx.bytesPerRow + x * 4
        return (0..<4).map { Int(p[$0]) }
    }

    static func near(_ a: [Int], _ b: [Int], within tolerance: Int = 2) -> Bool {
        zip(a, b).allSatisfy { abs($0 - $1) <= tolerance }
    }

    static let redToBlue = CGGradient(colorsSpace: CGColorSpaceCreateDeviceRGB(),
                                      colors: [CGColor(red: 1, green: 0, blue: 0, alpha: 1), CGColor(red: 0, green: 0, blue: 1, alpha: 1)] as CFArray,
                                      locations: nil)!

    @Test func aLinearGradientInterpolatesBetweenItsEnds() throws {
        let expected = { (x: Int) -> [Int] in
            let t = min(max((Double(x) + 0.5 - 10) / 80, 0), 1)
            return [Int((255 * (1 - t)).rounded()), 0, Int((255 * t).rounded()), 255]
        }
        for (options, before, after) in [(CGGradientDrawingOptions(), false, false), ([.drawsBeforeStartLocation, .drawsAfterEndLocation], true, true),
                                         (.drawsAfterEndLocation, false, true), (.drawsBeforeStartLocation, true, false)] {
            let ctx = try Self.context(100, 4)
            ctx.drawLinearGradient(Self.redToBlue, start: CGPoint(x: 10, y: 0), end: CGPoint(x: 90, y: 0), options: options)
            for x in [12, 30, 50, 70, 88] {
                #expect(Self.near(Self.pixel(ctx, x, 2), expected(x)), "x \(x): \(Self.pixel(ctx, x, 2)) against \(expected(x)), \(options)")
            }
            // Past the ends: the end colour when extended, else nothing drawn.
            #expect(Self.pixel(ctx, 3, 1) == (before ? [255, 0, 0, 255] : [0, 0, 0, 0]), "\(options)")
            #expect(Self.pixel(ctx, 96, 1) == (after ? [0, 0, 255, 255] : [0, 0, 0, 0]), "\(options)")
        }
    }

    /// Three stops at 0, 0.25 and 1 from components, through a clip and at half alpha.
    @Test func stopsFromComponentsClipAndAlpha() throws {
        let components: [CGFloat] = [0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]  // black, white, green
        let locations: [CGFloat] = [0, 0.25, 1]
        let gradient = try #require(CGGradient(colorSpace: CGColorSpaceCreateDeviceRGB(), colorComponents: components, locations: locations, count: 3))
        let ctx = try Self.context(100, 4)
        ctx.clip(to: CGRect(x: 0, y: 0, width: 60, height: 4))
        ctx.setAlpha(0.5)
        ctx.drawLinearGradient(gradient, start: .zero, end: CGPoint(x: 100, y: 0), options: [])
        // At 25.5%: just past white, at half alpha (premultiplied).
        #expect(Self.near(Self.pixel(ctx, 25, 1), [127, 127, 127, 128], within: 3), "\(Self.pixel(ctx, 25, 1))")
        // At 50.5%: two thirds of the way from white to green, premultiplied by 0.5.
        let t = (0.505 - 0.25) / 0.75
        let wg = [Int((127.5 * (1 - t)).rounded()), 128, Int((127.5 * (1 - t)).rounded()), 128]
        #expect(Self.near(Self.pixel(ctx, 50, 1), wg, within: 3), "\(Self.pixel(ctx, 50, 1)) against \(wg)")
        #expect(Self.pixel(ctx, 70, 1) == [0, 0, 0, 0], "the clip holds")
    }

    /// White at the centre to black at radius 40: the colour by the distance from the centre;
    /// outside the end circle nothing unless extended.
    @Test func aRadialGradientFollowsTheDistance() throws {
        let gradient = try #require(CGGradient(colorsSpace: nil, colors: [CGColor.white, CGColor.black] as CFArray, locations: nil))
        for options in [CGGradientDrawingOptions(), .drawsAfterEndLocation] {
            let ctx = try Self.context(100, 100)
            ctx.drawRadialGradient(gradient, startCenter: CGPoint(x: 50, y: 50), startRadius: 0,
                                   endCenter: CGPoint(x: 50, y: 50), endRadius: 40, options: options)
            for x in [50, 60, 70, 80] {
                let d = Double(x) + 0.5 - 50, level = Int((255 * (1 - d / 40)).rounded())
                #expect(Self.near(Self.pixel(ctx, x, 50), [level, level, level, 255], within: 3), "x \(x): \(Self.pixel(ctx, x, 50)), level \(level)")
            }
            #expect(Self.pixel(ctx, 95, 50) == (options.isEmpty ? [0, 0, 0, 0] : [0, 0, 0, 255]), "\(options)")
            #expect(Self.pixel(ctx, 2, 2) == (options.isEmpty ? [0, 0, 0, 0] : [0, 0, 0, 255]))
        }
    }

    @Test func whatCannotBeAGradientIsNil() {
        #expect(CGGradient(colorsSpace: nil, colors: [] as CFArray, locations: nil) == nil)
        #expect(CGGradient(colorsSpace: nil, colors: ["red"] as CFArray, locations: nil) == nil)
        let none: [CGFloat] = []
        #expect(CGGradient(colorSpace: CGColorSpaceCreateDeviceRGB(), colorComponents: none, locations: nil, count: 0) == nil)
    }
}
