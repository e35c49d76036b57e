import CCairo
import CoreGraphics
import Testing

/// CGContext's drawing against the same drawn by Cairo directly, y flipped by hand: the largest
/// difference of any channel of any pixel is stated for each picture and asserted.
@Suite struct CoreGraphicsCairoTests {
    static let (w, h) = (64, 48)

    /// A picture drawn by Cairo in a BGRA surface, the same picture a test draws through CGContext:
    /// `draw` receives a context whose user space is y-down with origin at the top-left, so it
    /// flips Apple's coordinates itself.
    static func cairoPicture(_ draw: (OpaquePointer) -> Void) -> [UInt8] {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(w), Int32(h))!
        let cr = cairo_create(surface)!
        draw(cr)
        cairo_surface_flush(surface)
        let stride = Int(cairo_image_surface_get_stride(surface)), data = cairo_image_surface_get_data(surface)!
        var out: [UInt8] = []
        for y in 0..<h { out += UnsafeBufferPointer(start: data + y * stride, count: w * 4) }
        cairo_destroy(cr); cairo_surface_destroy(surface)
        return out
    }

    static func contextPicture(_ draw: (CGContext) -> Void) throws -> [UInt8] {
        let ctx = try #require(CGContext(data: nil, width: w, height: h, bitsPerComponent: 8, bytesPerRow: 0, space: CGColorSpaceCreateDeviceRGB(),
                                         bitmapInfo: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue))
        draw(ctx)
        return Array(UnsafeBufferPointer(start: ctx.data!.assumingMemoryBound(to: UInt8.self), count: w * h * 4))
    }

    static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int { zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0 }

    @Test func axisAlignedRectanglesAreExact() throws {
        let ours = try Self.contextPicture { ctx in
            ctx.setFillColor(CGColor(red: 0.2, green: 0.4, blue: 0.6, alpha: 1))
            ctx.fill(CGRect(x: 4, y: 6, width: 20, height: 10))
            ctx.setFillColor(red: 1, green: 0, blue: 0, alpha: 0.5)
            ctx.fill(CGRect(x: 10, y: 10, width: 30, height: 30))
        }
        let theirs = Self.cairoPicture { cr in
            cairo_set_source_rgba(cr, 0.2, 0.4, 0.6, 1)
            cairo_rectangle(cr, 4, Double(Self.h) - 16, 20, 10); cairo_fill(cr)
            cairo_set_source_rgba(cr, 1, 0, 0, 0.5)
            cairo_rectangle(cr, 10, Double(Self.h) - 40, 30, 30); cairo_fill(cr)
        }
        #expect(Self.maxDifference(ours, theirs) == 0)
    }

    /// Antialiased curves: our arcs are Béziers of our own (as CoreGraphics'), Cairo's its own;
    /// with Cairo 1.16 they give the same pixels (difference 0), and another Cairo's arcs may
    /// split differently, so the bound is 2 of 255 on any channel.
    @Test func ellipsesArcsAndStrokesAreClose() throws {
        let ours = try Self.contextPicture { ctx in
            ctx.setFillColor(CGColor(red: 0, green: 0.5, blue: 1, alpha: 1))
            ctx.fillEllipse(in: CGRect(x: 8, y: 8, width: 30, height: 20))
            ctx.setStrokeColor(CGColor(red: 1, green: 1, blue: 0, alpha: 1))
            ctx.setLineWidth(3)
            ctx.setLineCap(.round)
            ctx.addArc(center: CGPoint(x: 44, y: 24), radius: 12, startAngle: 0, endAngle: .pi, clockwise: false)
            ctx.strokePath()
            ctx.rotate(by: .pi / 6)
            ctx.stroke(CGRect(x: 30, y: 0, width: 10, height: 10), width: 2)
        }
        let theirs = Self.cairoPicture { cr in
            let H = Double(Self.h)
            cairo_translate(cr, 0, H); cairo_scale(cr, 1, -1)   // Apple's space by hand
            cairo_save(cr)
            cairo_translate(cr, 23, 18); cairo_scale(cr, 15, 10)
            cairo_arc(cr, 0, 0, 1, 0, 2 * .pi)
            cairo_restore(cr)
            cairo_set_source_rgba(cr, 0, 0.5, 1, 1); cairo_fill(cr)
            cairo_set_source_rgba(cr, 1, 1, 0, 1)
            cairo_set_line_width(cr, 3); cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
            cairo_arc(cr, 44, 24, 12, 0, .pi); cairo_stroke(cr)
            cairo_rotate(cr, .pi / 6)
            cairo_set_line_width(cr, 2)
            cairo_rectangle(cr, 30, 0, 10, 10); cairo_stroke(cr)
        }
        let difference = Self.maxDifference(ours, theirs)
        #expect(difference <= 2, "largest channel difference \(difference)")
        #expect(ours.contains { $0 != 0 })
    }

    /// The same picture in RGBA memory (drawn in a surface of Cairo's and converted) has the same
    /// pixels as in BGRA memory, channels swapped.
    @Test func rgbaMemoryMatchesBGRA() throws {
        func draw(_ ctx: CGContext) {
            ctx.setFillColor(CGColor(red: 0.9, green: 0.3, blue: 0.1, alpha: 0.7))
            ctx.fillEllipse(in: CGRect(x: 5, y: 5, width: 50, height: 30))
            ctx.setBlendMode(.multiply)
            ctx.setFillColor(CGColor(red: 0.5, green: 1, blue: 1, alpha: 1))
            ctx.fill(CGRect(x: 0, y: 0, width: 32, height: 48))
        }
        let bgra = try Self.contextPicture(draw)
        let ctx = try #require(CGContext(data: nil, width: Self.w, height: Self.h, bitsPerComponent: 8, bytesPerRow: 0,
                                         space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue))
        draw(ctx)
        let rgba = Array(UnsafeBufferPointer(start: ctx.data!.assumingMemoryBound(to: UInt8.self), count: Self.w * Self.h * 4))
        var swapped = rgba
        for i in stride(from: 0, to: swapped.count, by: 4) { (swapped[i], swapped[i + 2]) = (rgba[i + 2], rgba[i]) }
        #expect(Self.maxDifference(bgra, swapped) == 0)
    }
}
