import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// Draws `generate.frames`'s patterns into a frame's planes, in any of the four pixel formats.
///
/// Every pattern but the gradient is rectangles of two colours (a background and white), filled
/// a row at a time; the gradient is separable (red and blue follow x, green follows y), so each
/// frame computes one table across the width and each row is a single pass over it. Tables are
/// made once: drawing a frame allocates nothing. YUV values use the matrix GStreamer assumes for
/// caps without colorimetry (GStreamer 1.22's gst_video_info_from_caps, measured: BT.601 up to
/// 576 lines, BT.709 above, also at 2160), limited range; chroma is taken at the top-left pixel
/// of each 2×2 block.
///
/// Used by one source, on its streaming thread, one frame at a time: its tables are not shared.
final class FramePainter: @unchecked Sendable {
    // @unchecked: its scratch tables are unsafe pointers the compiler cannot follow; one streaming
    // thread draws with it, one frame at a time (the generator's callback is never re-entered).
    struct RGB: Equatable, Sendable {
        var r: UInt8, g: UInt8, b: UInt8
        static let white = RGB(r: 255, g: 255, b: 255)

        /// `#rrggbb`, as the parameter's format guarantees.
        init?(hex: String) {
            guard hex.count == 7, hex.first == "#", let v = UInt32(hex.dropFirst(), radix: 16) else { return nil }
            self.init(r: UInt8(v >> 16 & 255), g: UInt8(v >> 8 & 255), b: UInt8(v & 255))
        }

        init(r: UInt8, g: UInt8, b: UInt8) {
            self.r = r
            self.g = g
            self.b = b
        }
    }

    /// A rectangle in pixels, `[x0, x1) × [y0, y1)`.
    struct Rect: Equatable, Sendable {
        var x0: Int, y0: Int, x1: Int, y1: Int
        init(x: Int, y: Int, width: Int, height: Int) {
            (x0, y0, x1, y1) = (x, y, x + width, y + height)
        }
    }

    /// Where the counter's digits are: `digits` seven-segment digits, white, centred, with leading
    /// zeros. A test reads them back from these numbers.
    struct CounterLayout: Sendable {
        var digits: Int
        var digitWidth: Int
        var digitHeight: Int
        /// Segment thickness.
        var thickness: Int
        var gap: Int
        var originX: Int
        var originY: Int

        init(width: Int, height: Int, digits: Int) {
            self.digits = digits
            // Digits are w wide and 2w high, w/2 apart; together at most 80% of the width and
            // 60% of the height.
            let byWidth = width * 8 / (10 * digits + 10 * (digits - 1) / 2)
            digitWidth = max(3, min(byWidth, height * 3 / 10) & ~1)
            digitHeight = digitWidth * 2
            thickness = max(1, digitWidth / 5)
            gap = digitWidth / 2
            let total = digits * digitWidth + (digits - 1) * gap
            originX = max(0, (width - total) / 2)
            originY = max(0, (height - digitHeight) / 2)
        }

        /// The cell of digit `i` (0: the most significant).
        func cell(_ i: Int) -> Rect {
            Rect(x: originX + i * (digitWidth + gap), y: originY, width: digitWidth, height: digitHeight)
        }

        /// Segment `i` of a digit cell, 0…6 for a … g (top, upper right, lower right, bottom,
        /// lower left, upper left, middle).
        func segment(_ i: Int, of cell: Rect) -> Rect {
            let (w, h, t) = (digitWidth, digitHeight, thickness), half = h / 2
            let (x, y) = (cell.x0, cell.y0)
            switch i {
            case 0: return Rect(x: x, y: y, width: w, height: t)
            case 1: return Rect(x: x + w - t, y: y, width: t, height: half)
            case 2: return Rect(x: x + w - t, y: y + half, width: t, height: h - half)
            case 3: return Rect(x: x, y: y + h - t, width: w, height: t)
            case 4: return Rect(x: x, y: y + half, width: t, height: h - half)
            case 5: return Rect(x: x, y: y, width: t, height: half)
            default: return Rect(x: x, y: y + half - t / 2, width: w, height: t)
            }
        }

        /// Which segments light for each decimal digit (bit 0: a … bit 6: g).
        static let segmentsOfDigit: [UInt8] = [0x3F, 0x06, 0x5B, 0x4F, 0x66, 0x6D, 0x7D, 0x07, 0x7F, 0x6F]
    }

    /// The moving box of frame `n`: a white square, a quarter of the shorter side, travelling
    /// diagonally and bouncing off the edges (x moves twice as fast as y).
    static func box(frame n: Int, width: Int, height: Int) -> Rect {
        let side = max(2, min(width, height) / 4 & ~1)
        let step = max(2, min(width, height) / 45 & ~1)
        func bounce(_ p: Int, _ range: Int) -> Int {
            guard range > 0 else { return 0 }
            let q = p % (2 * range)
            return q <= range ? q : 2 * range - q
        }
        return Rect(x: bounce(n * step, width - side), y: bounce(n * step / 2, height - side), width: side, height: side)
    }

    /// The gradient's colour at (x, y) in frame `n`: red ramps across and scrolls 3 levels a frame,
    /// blue is its complement, green ramps down and scrolls 1 level a frame.
    static func gradient(x: Int, y: Int, frame n: Int, width: Int, height: Int) -> RGB {
        let r = UInt8((x * 256 / width + 3 * n) & 255)
        return RGB(r: r, g: UInt8((y * 256 / height + n) & 255), b: 255 - r)
    }

    /// Limited-range YUV of a colour, under the matrix of a frame `height` lines high.
    static func yuv(_ c: RGB, height: Int) -> (y: UInt8, u: UInt8, v: UInt8) {
        let m = Matrix(height: height)
        let (r, g, b) = (Double(c.r), Double(c.g), Double(c.b))
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, v.rounded()))) }
        return (byte(16 + m.y(r, g, b)), byte(128 + m.u(r, g, b)), byte(128 + m.v(r, g, b)))
    }

    /// R'G'B' to Y'CbCr coefficients, scaled to limited range (Y 16–235, C 16–240).
    struct Matrix {
        let kr: Double, kb: Double
        var kg: Double { 1 - kr - kb }
        init(height: Int) {
            (kr, kb) = height > 576 ? (0.2126, 0.0722) : (0.299, 0.114)
        }
        func y(_ r: Double, _ g: Double, _ b: Double) -> Double { (kr * r + kg * g + kb * b) * 219 / 255 }
        func u(_ r: Double, _ g: Double, _ b: Double) -> Double { (b - (kr * r + kg * g + kb * b)) / (2 * (1 - kb)) * 224 / 255 }
        func v(_ r: Double, _ g: Double, _ b: Double) -> Double { (r - (kr * r + kg * g + kb * b)) / (2 * (1 - kr)) * 224 / 255 }
    }

    /// One colour ready to write: a packed pixel, or its Y, U and V bytes.
    struct Ink {
        var word: UInt32
        var y: UInt8, u: UInt8, v: UInt8
    }

    let pattern: FrameGeneratorNode.Pattern
    let width: Int
    let height: Int
    let pixelFormat: PixelFormat
    let counter: CounterLayout
    private let background: Ink
    private let foreground: Ink
    /// Byte shifts of red, green and blue in a packed pixel (BGRA or RGBA).
    private let shifts: (r: UInt32, g: UInt32, b: UInt32)
    /// Gradient tables, made once: x·256/width and y·256/height; then, per frame, the row of
    /// packed pixels without green (packed) or the x parts of Y, U and V in 1/256 (YUV).
    private let rampX: UnsafeMutableBufferPointer<Int32>
    private let rampY: UnsafeMutableBufferPointer<Int32>
    private let rowWords: UnsafeMutableBufferPointer<UInt32>
    private let lumaX: UnsafeMutableBufferPointer<Int32>
    private let chromaUX: UnsafeMutableBufferPointer<Int32>
    private let chromaVX: UnsafeMutableBufferPointer<Int32>

    init(pattern: FrameGeneratorNode.Pattern, format: MediaFormat.VideoFormat, color: RGB, digits: Int) {
        self.pattern = pattern
        width = format.width
        height = format.height
        pixelFormat = format.pixelFormat
        counter = CounterLayout(width: width, height: height, digits: digits)
        shifts = format.pixelFormat == .rgba ? (0, 8, 16) : (16, 8, 0)
        func ink(_ c: RGB, _ shifts: (r: UInt32, g: UInt32, b: UInt32), height: Int) -> Ink {
            let yuv = Self.yuv(c, height: height)
            let word = UInt32(c.r) << shifts.r | UInt32(c.g) << shifts.g | UInt32(c.b) << shifts.b | 0xFF00_0000
            return Ink(word: word, y: yuv.y, u: yuv.u, v: yuv.v)
        }
        background = ink(color, shifts, height: height)
        foreground = ink(.white, shifts, height: height)
        let chromaWidth = (width + 1) / 2
        let gradient = pattern == .gradient
        let packed = pixelFormat == .bgra || pixelFormat == .rgba
        rampX = .allocate(capacity: gradient ? width : 0)
        rampY = .allocate(capacity: gradient ? height : 0)
        rowWords = .allocate(capacity: gradient && packed ? width : 0)
        lumaX = .allocate(capacity: gradient && !packed ? width : 0)
        chromaUX = .allocate(capacity: gradient && !packed ? chromaWidth : 0)
        chromaVX = .allocate(capacity: gradient && !packed ? chromaWidth : 0)
        if gradient {
            for x in 0..<width { rampX[x] = Int32(x * 256 / width) }
            for y in 0..<height { rampY[y] = Int32(y * 256 / height) }
        }
    }

    deinit {
        for table in [rampX, rampY, lumaX, chromaUX, chromaVX] { table.deallocate() }
        rowWords.deallocate()
    }

    /// Draws frame `n` into `planes` (one packed plane, I420's three, or NV12's two), every
    /// visible pixel.
    func draw(_ n: Int, _ planes: [SampleBuffer.PixelPlane]) {
        let whole = Rect(x: 0, y: 0, width: width, height: height)
        switch pattern {
        case .solid:
            fill(whole, background, planes)
        case .box:
            fill(whole, background, planes)
            fill(Self.box(frame: n, width: width, height: height), foreground, planes)
        case .counter:
            fill(whole, background, planes)
            var value = n
            for place in stride(from: counter.digits - 1, through: 0, by: -1) {
                let lit = CounterLayout.segmentsOfDigit[value % 10], cell = counter.cell(place)
                for i in 0..<7 where lit & (1 << i) != 0 { fill(counter.segment(i, of: cell), foreground, planes) }
                value /= 10
            }
        case .gradient:
            if pixelFormat == .bgra || pixelFormat == .rgba {
                packedGradient(n, planes[0])
            } else {
                yuvGradient(n, planes)
            }
        }
    }

    /// Fills `rect` (clipped to the frame) with white, or with the background colour: for a
    /// drawing of its own over frames of this painter's format (capture.video's clock stamp).
    func paint(_ rect: Rect, white: Bool, _ planes: [SampleBuffer.PixelPlane]) {
        fill(rect, white ? foreground : background, planes)
    }

    // MARK: Rectangles

    private func fill(_ rect: Rect, _ ink: Ink, _ planes: [SampleBuffer.PixelPlane]) {
        let x0 = max(0, rect.x0), x1 = min(width, rect.x1), y0 = max(0, rect.y0), y1 = min(height, rect.y1)
        guard x0 < x1, y0 < y1 else { return }
        switch pixelFormat {
        case .bgra, .rgba:
            let p = planes[0]
            for y in y0..<y1 {
                (p.baseAddress + y * p.bytesPerRow).assumingMemoryBound(to: UInt32.self).advanced(by: x0)
                    .update(repeating: ink.word, count: x1 - x0)
            }
        case .i420, .nv12:
            let luma = planes[0]
            for y in y0..<y1 {
                (luma.baseAddress + y * luma.bytesPerRow + x0).initializeMemory(as: UInt8.self, repeating: ink.y, count: x1 - x0)
            }
            let cx0 = x0 / 2, cx1 = (x1 + 1) / 2, cy0 = y0 / 2, cy1 = (y1 + 1) / 2
            if pixelFormat == .i420 {
                for y in cy0..<cy1 {
                    (planes[1].baseAddress + y * planes[1].bytesPerRow + cx0).initializeMemory(as: UInt8.self, repeating: ink.u, count: cx1 - cx0)
                    (planes[2].baseAddress + y * planes[2].bytesPerRow + cx0).initializeMemory(as: UInt8.self, repeating: ink.v, count: cx1 - cx0)
                }
            } else {
                let uv = planes[1], pair = UInt16(ink.u) | UInt16(ink.v) << 8
                for y in cy0..<cy1 {
                    UnsafeMutableRawPointer(uv.baseAddress + y * uv.bytesPerRow + 2 * cx0)
                        .initializeMemory(as: UInt16.self, repeating: pair.littleEndian, count: cx1 - cx0)
                }
            }
        case .i420_10le, .p010_10le:
            break  // generate.frames's rule refuses it: it draws 8-bit frames
        }
    }

    // MARK: Gradient

    private func packedGradient(_ n: Int, _ p: SampleBuffer.PixelPlane) {
        let scrollR = Int32(truncatingIfNeeded: 3 * n), scrollG = Int32(truncatingIfNeeded: n)
        let words = rowWords.baseAddress!, ramp = rampX.baseAddress!
        for x in 0..<width {
            let r = UInt32(truncatingIfNeeded: (ramp[x] &+ scrollR) & 255)
            words[x] = r << shifts.r | (255 - r) << shifts.b | 0xFF00_0000
        }
        for y in 0..<height {
            let g = UInt32(truncatingIfNeeded: (rampY[y] &+ scrollG) & 255) << shifts.g
            let row = (p.baseAddress + y * p.bytesPerRow).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width { row[x] = words[x] | g }
        }
    }

    private func yuvGradient(_ n: Int, _ planes: [SampleBuffer.PixelPlane]) {
        // Fixed point, 1/256: Y = (Y_x[x] + Y_y[y]) >> 8, each part rounded once. The result
        // stays in 16…235 (C in 16…240), so no clamping is needed.
        let m = Matrix(height: height)
        let scrollR = Int32(truncatingIfNeeded: 3 * n), scrollG = Int32(truncatingIfNeeded: n)
        func fixed(_ v: Double) -> Int32 { Int32((v * 256).rounded()) }
        let luma = lumaX.baseAddress!, ux = chromaUX.baseAddress!, vx = chromaVX.baseAddress!
        for x in 0..<width {
            let r = Double((rampX[x] &+ scrollR) & 255)
            luma[x] = fixed(16 + m.y(r, 0, 255 - r)) + 128
        }
        for cx in 0..<(width + 1) / 2 {
            let r = Double((rampX[2 * cx] &+ scrollR) & 255)
            ux[cx] = fixed(128 + m.u(r, 0, 255 - r)) + 128
            vx[cx] = fixed(128 + m.v(r, 0, 255 - r)) + 128
        }
        let lumaPlane = planes[0]
        for y in 0..<height {
            let g = Double((rampY[y] &+ scrollG) & 255)
            let part = fixed(m.y(0, g, 0))
            let row = (lumaPlane.baseAddress + y * lumaPlane.bytesPerRow).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width { row[x] = UInt8(truncatingIfNeeded: (luma[x] &+ part) >> 8) }
        }
        for cy in 0..<(height + 1) / 2 {
            let g = Double((rampY[2 * cy] &+ scrollG) & 255)
            let partU = fixed(m.u(0, g, 0)), partV = fixed(m.v(0, g, 0))
            if pixelFormat == .i420 {
                let u = (planes[1].baseAddress + cy * planes[1].bytesPerRow).assumingMemoryBound(to: UInt8.self)
                let v = (planes[2].baseAddress + cy * planes[2].bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for cx in 0..<(width + 1) / 2 {
                    u[cx] = UInt8(truncatingIfNeeded: (ux[cx] &+ partU) >> 8)
                    v[cx] = UInt8(truncatingIfNeeded: (vx[cx] &+ partV) >> 8)
                }
            } else {
                let uv = (planes[1].baseAddress + cy * planes[1].bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for cx in 0..<(width + 1) / 2 {
                    uv[2 * cx] = UInt8(truncatingIfNeeded: (ux[cx] &+ partU) >> 8)
                    uv[2 * cx + 1] = UInt8(truncatingIfNeeded: (vx[cx] &+ partV) >> 8)
                }
            }
        }
    }
}
