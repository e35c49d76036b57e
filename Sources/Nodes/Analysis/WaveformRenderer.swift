import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// Draws waveform data as a picture (PNG or SVG), one pixel column at a time: the mirrored
/// waveform, its peaks above the centre line and mirrored below, scaled so that the loudest bin
/// reaches the drawing height, inside 95% of the width and 85% of the height, centred.
///
/// The bins are first reduced to the picture's columns, each column keeping the largest
/// amplitude among the bins drawn in it (exact: the max of maxes is the max); then each column
/// inks, in one colour, the rows its peak reaches into. Work and memory grow with the picture's
/// width, never with the number of bins, and the files are written as they are made (the PNG a
/// row at a time). docs/GRAPH-FORMAT.md defines the picture; `ink(_:)` is that definition in
/// whole numbers.
public struct WaveformRenderer: Sendable {
    public enum Style: String, Sendable, CaseIterable, ParameterEnum {
        /// One filled outline through every bin.
        case filled
        /// One bar per bin.
        case bars
    }

    public struct Color: Sendable, Equatable {
        public var red, green, blue, alpha: Double
        public static let black = Color(red: 0, green: 0, blue: 0, alpha: 1)
        public init(red: Double, green: Double, blue: Double, alpha: Double) {
            self.red = red
            self.green = green
            self.blue = blue
            self.alpha = alpha
        }
        /// `#rrggbb` or `#rrggbbaa`.
        public init?(hex: String) {
            guard hex.hasPrefix("#"), hex.count == 7 || hex.count == 9,
                  let v = UInt32(hex.dropFirst(), radix: 16) else { return nil }
            let hasAlpha = hex.count == 9
            let rgba = hasAlpha ? v : (v << 8 | 0xFF)
            red = Double(rgba >> 24 & 0xFF) / 255
            green = Double(rgba >> 16 & 0xFF) / 255
            blue = Double(rgba >> 8 & 0xFF) / 255
            alpha = Double(rgba & 0xFF) / 255
        }

        /// 8-bit red, green, blue, alpha (straight, not premultiplied).
        var bytes: [UInt8] { [red, green, blue, alpha].map { UInt8(($0 * 255).rounded().clamped(0, 255)) } }

        /// This colour composited over `below` (Porter-Duff over, straight alpha).
        func over(_ below: Color) -> Color {
            let a = alpha + below.alpha * (1 - alpha)
            guard a > 0 else { return Color(red: 0, green: 0, blue: 0, alpha: 0) }
            let mix = { (top: Double, bottom: Double) in (top * self.alpha + bottom * below.alpha * (1 - self.alpha)) / a }
            return Color(red: mix(red, below.red), green: mix(green, below.green), blue: mix(blue, below.blue), alpha: a)
        }
    }

    public var width: Int
    public var height: Int
    public var waveColor: Color
    public var backgroundColor: Color
    public var style: Style

    public init(width: Int, height: Int, waveColor: Color, backgroundColor: Color, style: Style) {
        self.width = width
        self.height = height
        self.waveColor = waveColor
        self.backgroundColor = backgroundColor
        self.style = style
    }

    /// The rows one pixel column inks, top and bottom included; none when `top > bottom`.
    struct Ink: Equatable {
        var top: Int32
        var bottom: Int32
        static let none = Ink(top: 1, bottom: 0)
        var isEmpty: Bool { top > bottom }
    }

    /// Each pixel column's ink: the bins reduced to the largest amplitude drawn in each column,
    /// then scaled to rows. O(bins + width) time, O(width) memory.
    func ink(_ data: WaveformData) -> [Ink] {
        let n = data.length
        guard n > 0, width > 0 else { return Array(repeating: .none, count: max(0, width)) }
        // Positions in units of 1 / (800·n) pixel, where every edge below is a whole number:
        // the area's left edge W/40, a slot 0.95·W/n wide, a bar's 15% inset, half a pixel.
        let w = width, unit = 800 * n
        let slot = 760 * w, left = 20 * w * n
        let wideBars = 532 * w >= unit  // 0.7 of a slot is at least a pixel
        var amplitude = [Int32](repeating: -1, count: w)  // -1: no bin is drawn in this column
        let perBin = 2 * data.channels
        let (from, to) = style == .filled ? (0, slot)
            : wideBars ? (114 * w, 646 * w)  // a bar 70% of the slot, centred
            : (380 * w - 400 * n, 380 * w + 400 * n)  // a bar one pixel wide, centred
        data.data.withUnsafeBufferPointer { values in
            amplitude.withUnsafeMutableBufferPointer { columns in
                var x = left  // the slot's left edge
                for i in 0..<n {
                    var a: Int32 = 0
                    for v in values[(i * perBin)..<((i + 1) * perBin)] { a = max(a, abs(Int32(v))) }
                    // Every column the footprint x + from ..< x + to overlaps (at the smallest
                    // widths a narrow bar can start left of the picture: its first column is 0).
                    let first = max(0, x + from) / unit, end = min(w, (x + to + unit - 1) / unit)
                    for c in first..<max(first, end) where columns[c] < a { columns[c] = a }
                    x += slot
                }
            }
        }
        let peak = Int(amplitude.max() ?? 0)
        // h = 0.425·H·a / peak = 17·H·a / (40·peak): rows in units of 1 / (40·peak) (1/40 in silence).
        let denominator = 40 * max(peak, 1)
        let centre = 20 * height * max(peak, 1)
        let minimum = style == .bars ? denominator / 2 : 0  // bars are at least a pixel high
        let line = height / 2
        return amplitude.map { a in
            guard a >= 0 else { return .none }
            let h = max(minimum, peak > 0 ? 17 * height * Int(a) : 0)
            // centre − h > 0: 17·H·a ≤ 17·H·peak, and a bar's half pixel is under 20·H·peak.
            var top = (centre - h) / denominator
            var bottom = (centre + h + denominator - 1) / denominator - 1
            if style == .filled { (top, bottom) = (min(top, line - 1), max(bottom, line)) }
            return Ink(top: Int32(max(0, top)), bottom: Int32(min(height - 1, bottom)))
        }
    }

    /// Hands out the picture as an indexed PNG (two colours, one bit a pixel: the background, and
    /// the wave composited over it), in chunks, written row by row: memory is one row and
    /// zlib's state, whatever the picture's size.
    public func encodePNG<E: Error>(_ data: WaveformData, _ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        let columns = ink(data)
        let palette = [backgroundColor.bytes, waveColor.over(backgroundColor).bytes]
        let png = PNGEncoder(width: width, height: height, palette: palette)
        try png.start(flush)
        // Each row is the one above with the columns that start on it set and those that ended
        // above it cleared: two sorts of the columns, and then each column's bit is set once and
        // cleared once, however tall the picture.
        let inked = columns.indices.filter { !columns[$0].isEmpty }
        let starts = inked.sorted { columns[$0].top < columns[$1].top }
        let ends = inked.sorted { columns[$0].bottom < columns[$1].bottom }
        var (started, ended) = (0, 0)
        for y in 0..<Int32(height) {
            try png.appendRow({ bits in
                while ended < ends.count, columns[ends[ended]].bottom < y {
                    bits[ends[ended] >> 3] &= ~(0x80 >> UInt8(ends[ended] & 7))
                    ended += 1
                }
                while started < starts.count, columns[starts[started]].top == y {
                    bits[starts[started] >> 3] |= 0x80 >> UInt8(starts[started] & 7)
                    started += 1
                }
            }, flush)
        }
        try png.finish(flush)
    }

    /// Hands out the picture as SVG: the background, then one path along the inked columns'
    /// edges (one closed outline per run of adjacent inked columns), on whole pixels. Its size
    /// grows with the picture's width, never with the number of bins.
    public func encodeSVG<E: Error>(_ data: WaveformData, _ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        let columns = ink(data)
        var out: [UInt8] = []
        out.reserveCapacity(WaveformData.chunk + 64)
        func emit(_ s: String) { out += s.utf8 }
        /// A path command and its coordinate (never negative), written without making a string.
        func command(_ letter: Unicode.Scalar, _ v: Int32) {
            out.append(UInt8(ascii: letter))
            var divisor: Int32 = 1
            while divisor <= v / 10 { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(truncatingIfNeeded: 48 + v / divisor % 10))
                divisor /= 10
            }
        }
        func flushFull() throws(E) {
            guard out.count >= WaveformData.chunk else { return }
            try flush(out)
            out.removeAll(keepingCapacity: true)
        }
        emit("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        emit("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">\n")
        emit("<rect width=\"\(width)\" height=\"\(height)\" \(Self.fill(backgroundColor))/>\n")
        if columns.contains(where: { !$0.isEmpty }) {
            emit("<path \(Self.fill(waveColor)) d=\"")
            var x = 0
            while x < columns.count {
                guard !columns[x].isEmpty else { x += 1; continue }
                var end = x
                while end + 1 < columns.count, !columns[end + 1].isEmpty { end += 1 }
                // Along the tops left to right, then the bottoms back: a step wherever a row changes.
                command("M", Int32(x))
                command(" ", columns[x].top)
                for c in (x + 1)..<(end + 1) where columns[c].top != columns[c - 1].top {
                    command("H", Int32(c))
                    command("V", columns[c].top)
                    try flushFull()
                }
                command("H", Int32(end + 1))
                command("V", columns[end].bottom + 1)
                for c in stride(from: end, to: x, by: -1) where columns[c - 1].bottom != columns[c].bottom {
                    command("H", Int32(c))
                    command("V", columns[c - 1].bottom + 1)
                    try flushFull()
                }
                command("H", Int32(x))
                emit("Z")
                try flushFull()
                x = end + 1
            }
            emit("\"/>\n")
        }
        emit("</svg>\n")
        try flush(out)
    }

    /// `fill="#rrggbb"`, with `fill-opacity` when the colour is not opaque.
    static func fill(_ color: Color) -> String {
        let b = color.bytes
        let hex = b[0..<3].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        return "fill=\"#\(hex)\"" + (b[3] == 255 ? "" : " fill-opacity=\"\(Double(b[3]) / 255)\"")
    }
}

private extension Double {
    func clamped(_ lo: Double, _ hi: Double) -> Double { Swift.min(hi, Swift.max(lo, self)) }
}
