import CCairo

// How the 8-bit pixel layouts CoreGraphics names (CGBitmapInfo's alpha info and byte order, a
// colour space's model) sit in memory, and their conversion to and from Cairo's own layout, in
// which CGContext draws: CAIRO_FORMAT_ARGB32 (RGB24 when there is no alpha), a 32-bit word per
// pixel in the machine's order, premultiplied. On a little-endian machine that is B, G, R, A in
// memory: `premultipliedFirst | byteOrder32Little` (or `noneSkipFirst`), which Cairo draws in place.

/// A pixel layout CoreGraphics names and GraphKit draws: where each component is in a pixel.
package struct BitmapLayout: Sendable, Equatable {
    /// Bytes a pixel: 4 (RGB with alpha or a skipped byte) or 1 (gray, no alpha).
    package let bytesPerPixel: Int
    /// The byte offsets of red, green, blue and alpha in a pixel; alpha nil when skipped or
    /// absent; for gray all three colour offsets are 0.
    package let red: Int, green: Int, blue: Int
    package let alpha: Int?
    /// Whether colour is stored multiplied by alpha (what Cairo and CGContext draw in).
    package let premultiplied: Bool
    package var isGray: Bool { bytesPerPixel == 1 }

    /// Cairo's format for the same pixels: ARGB32 with alpha, RGB24 without.
    var cairoFormat: cairo_format_t { alpha == nil ? CAIRO_FORMAT_RGB24 : CAIRO_FORMAT_ARGB32 }

    /// Whether the bytes are Cairo's own (B, G, R, A in memory on a little-endian machine), so Cairo
    /// can draw in them directly.
    var isCairoNative: Bool {
        bytesPerPixel == 4 && premultiplied && (red, green, blue) == Self.native.rgb && (alpha == nil || alpha == Self.native.a)
    }

    private static let native: (rgb: (Int, Int, Int), a: Int) = {
        let word: UInt32 = 0x0302_0100 // A=3 R=2 G=1 B=0 in the word's bytes from high to low
        let bytes = withUnsafeBytes(of: word) { Array($0) }
        return ((bytes.firstIndex(of: 2)!, bytes.firstIndex(of: 1)!, bytes.firstIndex(of: 0)!), bytes.firstIndex(of: 3)!)
    }()

    /// The layout of 8-bit components `bitmapInfo` names for a colour space of `model`, or nil
    /// when GraphKit does not draw it: RGB with premultiplied or skipped alpha, first or last, in
    /// the default (big-endian), 32-bit big or 32-bit little byte order; gray without alpha. With
    /// `straightAlpha` (images, not contexts) non-premultiplied `.first` and `.last` too.
    package init?(bitmapInfo: UInt32, model: CGColorSpaceModel, bitsPerComponent: Int, straightAlpha: Bool = false) {
        let info = CGBitmapInfo(rawValue: bitmapInfo)
        let known = CGBitmapInfo.alphaInfoMask.rawValue | CGBitmapInfo.byteOrderMask.rawValue
        guard bitsPerComponent == 8, bitmapInfo & ~known == 0,
              let alphaInfo = CGImageAlphaInfo(rawValue: bitmapInfo & CGBitmapInfo.alphaInfoMask.rawValue) else { return nil }
        let order = info.intersection(.byteOrderMask)
        switch model {
        case .monochrome:
            guard alphaInfo == .none, order.isEmpty else { return nil }
            (bytesPerPixel, red, green, blue, alpha, premultiplied) = (1, 0, 0, 0, nil, true)
        case .rgb:
            guard order.isEmpty || order == .byteOrder32Big || order == .byteOrder32Little else { return nil }
            // The components from the word's most significant byte, as CoreGraphics names them.
            let word: [Character]
            switch alphaInfo {
            case .premultipliedFirst, .noneSkipFirst: word = ["a", "r", "g", "b"]
            case .premultipliedLast, .noneSkipLast: word = ["r", "g", "b", "a"]
            case .first where straightAlpha: word = ["a", "r", "g", "b"]
            case .last where straightAlpha: word = ["r", "g", "b", "a"]
            default: return nil
            }
            let bytes = order == .byteOrder32Little ? Array(word.reversed()) : word
            bytesPerPixel = 4
            (red, green, blue) = (bytes.firstIndex(of: "r")!, bytes.firstIndex(of: "g")!, bytes.firstIndex(of: "b")!)
            let hasAlpha = [.premultipliedFirst, .premultipliedLast, .first, .last].contains(alphaInfo)
            alpha = hasAlpha ? bytes.firstIndex(of: "a")! : nil
            premultiplied = alphaInfo != .first && alphaInfo != .last
        default:
            return nil
        }
    }

    /// `count` pixels from `src` (this layout) to `dst` (Cairo's, 32-bit words), premultiplying
    /// straight alpha; a skipped or absent alpha reads as opaque.
    func toCairo(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt32>, count: Int) {
        for i in 0..<count {
            let p = src + i * bytesPerPixel
            var (r, g, b) = (UInt32(p[red]), UInt32(p[green]), UInt32(p[blue]))
            let a = alpha.map { UInt32(p[$0]) } ?? 255
            if !premultiplied {
                (r, g, b) = ((r * a + 127) / 255, (g * a + 127) / 255, (b * a + 127) / 255)
            }
            dst[i] = a << 24 | r << 16 | g << 8 | b
        }
    }

    /// `count` pixels from Cairo's `src` to `dst` in this layout (a context's layouts are
    /// premultiplied). A skipped byte is written 255; gray is the pixel's luma (Rec. 601 weights
    /// that sum to 256, so a grey written as r = g = b comes back exactly).
    func fromCairo(_ src: UnsafePointer<UInt32>, _ dst: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count {
            let w = src[i], p = dst + i * bytesPerPixel
            let (r, g, b) = (UInt8(truncatingIfNeeded: w >> 16), UInt8(truncatingIfNeeded: w >> 8), UInt8(truncatingIfNeeded: w))
            if isGray {
                p[0] = UInt8((UInt32(r) * 77 + UInt32(g) * 150 + UInt32(b) * 29) >> 8)
                continue
            }
            (p[red], p[green], p[blue]) = (r, g, b)
            let a = UInt8(truncatingIfNeeded: w >> 24)
            let skipped = 6 - red - green - blue
            if let alpha { p[alpha] = a } else { p[skipped] = 255 }
        }
    }
}

extension BitmapLayout {
    /// The bytes of a row of `width` pixels, or nil when it overflows.
    static func rowBytes(width: Int, bytesPerPixel: Int) -> Int? {
        let (n, overflow) = width.multipliedReportingOverflow(by: bytesPerPixel)
        return overflow ? nil : n
    }
}
