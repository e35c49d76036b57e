import Foundation
import CCairo

/// A drawing destination, as CoreGraphics' `CGContext`: here a bitmap context over memory
/// (`CGContext(data:width:height:bitsPerComponent:bytesPerRow:space:bitmapInfo:)`), drawn by Cairo.
///
/// As on Apple's platforms the origin is the bottom-left corner and y grows upwards: the first
/// row in memory is the top of the picture, so `fill(CGRect(x: 0, y: 0, width: 10, height: 10))`
/// in a context 50 high fills memory rows 40 to 49. Cairo's own space is y-down; the flip is its
/// base matrix, and ``ctm`` reports Apple's values (identity for a new context).
///
/// Layouts (8 bits a component): RGB with premultiplied or skipped alpha, first or last, in the
/// default, 32-bit big or 32-bit little byte order; gray without alpha. Others make the
/// initializer return nil, as Apple's does for a combination it does not support. Cairo draws
/// directly in `premultipliedFirst | byteOrder32Little` and `noneSkipFirst | byteOrder32Little`
/// memory (its own ARGB32 and RGB24) when the rows are 4-byte aligned; any other layout is drawn in a
/// Cairo surface of the same size and converted: before a drawing call the rows it can touch are
/// read from memory, after it they are written back, so the memory is always the picture, and
/// the caller may read or write it between any two calls, as with Apple's.
///
/// No colour management (``CGColorSpace``); text is CoreText's (`CTLineDraw`). Not thread-safe, as Apple's is not: one
/// thread draws in a context at a time.
public final class CGContext {
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    public let bitsPerPixel: Int
    public let bytesPerRow: Int
    public let bitmapInfo: CGBitmapInfo
    public let colorSpace: CGColorSpace?
    /// The pixels: the memory given, or what the context allocated (zeroed; freed with it).
    public var data: UnsafeMutableRawPointer? { memory }
    public var alphaInfo: CGImageAlphaInfo { CGImageAlphaInfo(rawValue: bitmapInfo.rawValue & CGBitmapInfo.alphaInfoMask.rawValue) ?? .none }

    let layout: BitmapLayout
    let memory: UnsafeMutableRawPointer
    private let ownsMemory: Bool
    let surface: OpaquePointer
    /// Replaced only when a call left it in Cairo's error state (``adopt(_:)``).
    private(set) var cr: OpaquePointer
    /// Whether Cairo draws in ``memory`` itself (else in ``surface``'s own, converted).
    let drawsInPlace: Bool
    var state = GState()
    private var saved: [GState] = []
    private var allowsAntialiasing = true
    /// The text matrix (CGContextText.swift): not part of the graphics state, as Apple's.
    var textTransform = CGAffineTransform.identity

    /// What saveGState keeps besides Cairo's own (its matrix, clip, line attributes, operator).
    struct GState {
        var ctm = CGAffineTransform.identity
        var fill = CGColor(gray: 0, alpha: 1)
        var stroke = CGColor(gray: 0, alpha: 1)
        var alpha: CGFloat = 1
        var shouldAntialias = true
        var interpolationQuality = CGInterpolationQuality.default
        /// The image of the last `clip(to:mask:)`, in Cairo's alpha, and where it is.
        var mask: ClipMask?
        /// What every drawing call casts, set by `setShadow` (CGContextShadow.swift); nil: none.
        var shadow: Shadow?
    }

    /// A mask's surface (Cairo A8), freed when no state holds it any more.
    final class ClipMask {
        let surface: OpaquePointer
        var matrix: cairo_matrix_t
        init(surface: OpaquePointer, matrix: cairo_matrix_t) { (self.surface, self.matrix) = (surface, matrix) }
        deinit { cairo_surface_destroy(surface) }
    }

    /// A bitmap context over `data` (nil: the context allocates zeroed memory), as CoreGraphics'.
    /// `bytesPerRow` 0 means the least for `width` (rounded up to 4 bytes). Nil for a layout it
    /// does not draw (see the type's notes), a zero or negative size, rows shorter than a row of
    /// pixels, a size past Cairo's 32,767 pixels a side or whose bytes overflow, or memory it
    /// cannot allocate.
    public init?(data: UnsafeMutableRawPointer?, width: Int, height: Int, bitsPerComponent: Int, bytesPerRow: Int,
                 space: CGColorSpace, bitmapInfo: UInt32) {
        guard width > 0, height > 0, width <= 32767, height <= 32767, bytesPerRow >= 0,
              let layout = BitmapLayout(bitmapInfo: bitmapInfo, model: space.model, bitsPerComponent: bitsPerComponent),
              let least = BitmapLayout.rowBytes(width: width, bytesPerPixel: layout.bytesPerPixel) else { return nil }
        let rowBytes = bytesPerRow == 0 ? (least + 3) & ~3 : bytesPerRow
        guard rowBytes >= least else { return nil }
        let (total, overflow) = rowBytes.multipliedReportingOverflow(by: height)
        guard !overflow else { return nil }
        let memory: UnsafeMutableRawPointer
        if let data { memory = data } else {
            guard let zeroed = calloc(total, 1) else { return nil }
            memory = zeroed
        }
        let inPlace = layout.isCairoNative && rowBytes % 4 == 0 && rowBytes <= Int(Int32.max) && Int(bitPattern: memory) % 4 == 0
        let surface = inPlace
            ? cairo_image_surface_create_for_data(memory.assumingMemoryBound(to: UInt8.self), layout.cairoFormat, Int32(width), Int32(height), Int32(rowBytes))
            : cairo_image_surface_create(layout.cairoFormat, Int32(width), Int32(height))
        guard let surface, cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let cr = cairo_create(surface),
              cairo_status(cr) == CAIRO_STATUS_SUCCESS else {
            if let surface { cairo_surface_destroy(surface) }
            if data == nil { free(memory) }
            return nil
        }
        (self.width, self.height, self.bitsPerComponent, bitsPerPixel) = (width, height, bitsPerComponent, layout.bytesPerPixel * 8)
        (self.bytesPerRow, self.bitmapInfo, colorSpace, self.layout) = (rowBytes, CGBitmapInfo(rawValue: bitmapInfo), space, layout)
        (self.memory, ownsMemory, self.surface, self.cr, drawsInPlace) = (memory, data == nil, surface, cr, inPlace)
        cairo_set_line_width(cr, 1)   // CoreGraphics' default; Cairo's is 2
        applyMatrix()
    }

    deinit {
        cairo_destroy(cr)
        cairo_surface_destroy(surface)
        if ownsMemory { free(memory) }
    }

    /// A Cairo context on the surface with ``cr``'s state (matrix, line, fill rule, source,
    /// operator; the clip as its rectangles, their bounding box for another clip): made before a
    /// call that might leave ``cr`` in Cairo's error state, which no later call clears.
    func spareCairo() -> OpaquePointer? {
        guard let s = cairo_create(surface), cairo_status(s) == CAIRO_STATUS_SUCCESS else { return nil }
        copyDrawingState(to: s)
        cairo_new_path(s)
        copyClipRectangles(to: s)
        cairo_set_operator(s, cairo_get_operator(cr))
        return s
    }

    /// `spare` (``spareCairo()``) in place of ``cr`` when ``cr`` is in an error state, with as many
    /// saved levels (each coming back as this state); else `spare` is released.
    func adopt(_ spare: OpaquePointer?) {
        guard let spare else { return }
        guard cairo_status(cr) != CAIRO_STATUS_SUCCESS else { return cairo_destroy(spare) }
        for _ in saved { cairo_save(spare) }
        cairo_destroy(cr)
        cr = spare
    }

    // MARK: Graphics state

    public func saveGState() {
        saved.append(state)
        cairo_save(cr)
    }

    /// Back to the state of the last ``saveGState()``; nothing when none is saved, as CoreGraphics
    /// (which logs it).
    public func restoreGState() {
        guard let last = saved.popLast() else { return }
        state = last
        cairo_restore(cr)
        applyMatrix()   // the same, but after ``adopt(_:)``'s levels, which kept a later one
    }

    /// The current transform from user space to Apple's device space (y up): identity for a new
    /// context, as a bitmap context's is on Apple's platforms.
    public var ctm: CGAffineTransform { state.ctm }
    public var userSpaceToDeviceSpaceTransform: CGAffineTransform { state.ctm }

    public func translateBy(x: CGFloat, y: CGFloat) { concatenate(CGAffineTransform(translationX: x, y: y)) }
    public func scaleBy(x: CGFloat, y: CGFloat) { concatenate(CGAffineTransform(scaleX: x, y: y)) }
    public func rotate(by angle: CGFloat) { concatenate(CGAffineTransform(rotationAngle: angle)) }
    /// `transform` then the current one. A product with non-finite numbers or none that inverts
    /// (its determinant 0, or so large or small that it or its inverse overflows) is ignored
    /// (Cairo refuses those for good; CoreGraphics then draws nothing).
    public func concatenate(_ transform: CGAffineTransform) {
        let t = transform.concatenating(state.ctm)
        guard t.concatenating(CGAffineTransform(a: 1, b: 0, c: 0, d: -1, tx: 0, ty: CGFloat(height))).isCairoInvertible else { return }
        state.ctm = t
        applyMatrix()
    }

    /// Cairo's matrix: the user transform, then the flip to rows from the top. The current path
    /// stays where it was drawn, as in both libraries.
    private func applyMatrix() {
        let t = state.ctm.concatenating(CGAffineTransform(a: 1, b: 0, c: 0, d: -1, tx: 0, ty: CGFloat(height)))
        var m = cairo_matrix_t(xx: Double(t.a), yx: Double(t.b), xy: Double(t.c), yy: Double(t.d), x0: Double(t.tx), y0: Double(t.ty))
        cairo_set_matrix(cr, &m)
    }

    public func setLineWidth(_ width: CGFloat) { if width.isFinite, width >= 0 { cairo_set_line_width(cr, Double(width)) } }
    public func setLineCap(_ cap: CGLineCap) { cairo_set_line_cap(cr, cap.cairo) }
    public func setLineJoin(_ join: CGLineJoin) { cairo_set_line_join(cr, join.cairo) }
    public func setMiterLimit(_ limit: CGFloat) { if limit.isFinite { cairo_set_miter_limit(cr, Double(limit)) } }
    /// Dashes of `lengths` starting `phase` into the pattern; an empty list draws solid lines.
    public func setLineDash(phase: CGFloat, lengths: [CGFloat]) {
        let dashes = lengths.map(Double.init)
        guard dashes.allSatisfy({ $0.isFinite && $0 >= 0 }), phase.isFinite else { return }
        cairo_set_dash(cr, dashes, Int32(dashes.count), Double(phase))
    }
    public func setFlatness(_ flatness: CGFloat) { if flatness.isFinite, flatness > 0 { cairo_set_tolerance(cr, Double(flatness)) } }

    public func setFillColor(_ color: CGColor) { state.fill = color }
    public func setStrokeColor(_ color: CGColor) { state.stroke = color }
    public func setFillColor(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) { state.fill = CGColor(red: red, green: green, blue: blue, alpha: alpha) }
    public func setStrokeColor(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) { state.stroke = CGColor(red: red, green: green, blue: blue, alpha: alpha) }
    /// A colour of the context's space from `components`: gray and alpha, or red, green, blue
    /// and alpha.
    public func setFillColor(_ components: UnsafePointer<CGFloat>) { if let c = color(components) { state.fill = c } }
    public func setStrokeColor(_ components: UnsafePointer<CGFloat>) { if let c = color(components) { state.stroke = c } }
    private func color(_ components: UnsafePointer<CGFloat>) -> CGColor? {
        CGColor(colorSpace: colorSpace ?? CGColorSpaceCreateDeviceRGB(), components: components)
    }
    public func setFillColor(gray: CGFloat, alpha: CGFloat) { state.fill = CGColor(gray: gray, alpha: alpha) }
    public func setStrokeColor(gray: CGFloat, alpha: CGFloat) { state.stroke = CGColor(gray: gray, alpha: alpha) }
    /// The alpha everything drawn is multiplied by (0…1).
    public func setAlpha(_ alpha: CGFloat) { state.alpha = alpha.isNaN ? 1 : min(1, max(0, alpha)) }
    public func setBlendMode(_ mode: CGBlendMode) { cairo_set_operator(cr, mode.cairo) }

    /// Whether edges are antialiased (part of the graphics state); it takes effect only while
    /// ``setAllowsAntialiasing(_:)`` allows it, as CoreGraphics.
    public func setShouldAntialias(_ should: Bool) { state.shouldAntialias = should }
    /// Whether antialiasing is allowed at all (not part of the graphics state).
    public func setAllowsAntialiasing(_ allows: Bool) { allowsAntialiasing = allows }
    public var interpolationQuality: CGInterpolationQuality {
        get { state.interpolationQuality }
        set { state.interpolationQuality = newValue }
    }

    /// Cairo's antialias for the next drawing call.
    var antialias: cairo_antialias_t { state.shouldAntialias && allowsAntialiasing ? CAIRO_ANTIALIAS_DEFAULT : CAIRO_ANTIALIAS_NONE }

    /// Nothing is queued here: every call has drawn into memory when it returns.
    public func flush() {}
    public func synchronize() {}

    // MARK: Images

    /// A copy of the pixels as an image of the context's layout, as CoreGraphics' `makeImage()`
    /// (drawing afterwards does not change it); nil when the copy cannot be allocated.
    public func makeImage() -> CGImage? {
        guard let bytes = NSData(bytes: memory, length: bytesPerRow * height) as Data? else { return nil }
        return CGImage(width: width, height: height, bitsPerComponent: bitsPerComponent, bitsPerPixel: bitsPerPixel,
                       bytesPerRow: bytesPerRow, space: colorSpace ?? CGColorSpaceCreateDeviceRGB(), bitmapInfo: bitmapInfo,
                       provider: CGDataProvider(data: bytes as CFData), decode: nil, shouldInterpolate: true, intent: .defaultIntent)
    }
}
