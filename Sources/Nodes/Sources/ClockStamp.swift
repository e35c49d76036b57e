import Glibc
import GraphKitCore
import MediaContainers

/// `capture.video`'s `clock` pattern: the wall clock (CLOCK_REALTIME) in milliseconds, written
/// into each frame as it leaves the source, as a row of cells that survive encoding, so that
/// whoever receives the frame on the same machine (after an encoder, a network, a decoder) can
/// read when it left the camera and subtract that from when it arrived: glass to glass.
///
/// The row is 52 square cells of `side` pixels, white for 1 and black for 0, on a black band
/// (the frame's top-left 54 × 3 cells), from one cell in from the corner: the marker 1011, then the low 40 bits of the milliseconds (most
/// significant first; they wrap every 34.8 years, so a reader takes the time nearest its own
/// clock), then a CRC-8 of those bits as 5 bytes, most significant first (polynomial 0x07,
/// x⁸ + x² + x + 1, initial value 0), most significant bit first. `side` is the width over 54 or
/// the height over 3, the smaller, at most 16, rounded down to even; the pattern needs at least
/// 2 (a width of 108 and a height of 6). A cell is read at its centre: brighter than mid-grey
/// is 1. `scripts/srt-latency.py` reads it with the same rule.
struct ClockStamp: Sendable {
    static let marker: [Bool] = [true, false, true, true]
    static let valueBits = 40
    static let checkBits = 8
    static let cells = marker.count + valueBits + checkBits
    static let mask: UInt64 = (1 << UInt64(valueBits)) - 1

    /// The side of a cell in a frame of `width` × `height`; nil when the row does not fit.
    static func side(width: Int, height: Int) -> Int? {
        let side = min(16, width / (cells + 2), height / 3) & ~1
        return side >= 2 ? side : nil
    }

    /// Cell `i`'s square (0: the marker's first).
    static func cell(_ i: Int, side: Int) -> FramePainter.Rect {
        FramePainter.Rect(x: side * (1 + i), y: side, width: side, height: side)
    }

    /// The black band the row is drawn on: one cell around it.
    static func band(side: Int) -> FramePainter.Rect {
        FramePainter.Rect(x: 0, y: 0, width: side * (cells + 2), height: side * 3)
    }

    /// CRC-8 (polynomial 0x07, initial 0) of the 40 bits as 5 bytes, most significant first.
    static func check(_ value: UInt64) -> UInt8 {
        var crc: UInt8 = 0
        for shift in stride(from: valueBits - 8, through: 0, by: -8) {
            crc ^= UInt8(truncatingIfNeeded: value >> UInt64(shift))
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? crc << 1 ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// The cells of `milliseconds`, in order: marker, value, check.
    static func cells(of milliseconds: UInt64) -> [Bool] {
        let value = milliseconds & mask, crc = check(value)
        return marker + (0..<valueBits).map { value >> UInt64(valueBits - 1 - $0) & 1 == 1 }
            + (0..<checkBits).map { crc >> UInt8(checkBits - 1 - $0) & 1 == 1 }
    }

    /// Reads the stamp of a frame of `width` × `height` whose brightness at a pixel (0 black …
    /// 255 white: a luma byte, or green in RGB) is `brightness(x, y)`: the 40 bits, or nil when
    /// the row is not there (the marker or the check does not match).
    static func read(width: Int, height: Int, brightness: (_ x: Int, _ y: Int) -> UInt8) -> UInt64? {
        guard let side = side(width: width, height: height) else { return nil }
        let bits = (0..<cells).map { i in
            let r = cell(i, side: side)
            return brightness((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2) >= 128
        }
        guard Array(bits[0..<marker.count]) == marker else { return nil }
        let value = bits[marker.count..<marker.count + valueBits].reduce(UInt64(0)) { $0 << 1 | ($1 ? 1 : 0) }
        let crc = bits[(marker.count + valueBits)...].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        return crc == check(value) ? value : nil
    }

    /// The milliseconds a stamp's 40 bits stand for: the time nearest `now` with those low bits.
    static func milliseconds(_ stamp: UInt64, near now: UInt64) -> UInt64 {
        let behind = (now &- stamp) & mask
        return behind <= mask / 2 ? now - behind : now + (mask + 1 - behind)
    }

    /// CLOCK_REALTIME in milliseconds.
    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_REALTIME, &t)
        return UInt64(t.tv_sec) * 1000 + UInt64(t.tv_nsec) / 1_000_000
    }

    let side: Int
    private let painter: FramePainter

    /// A stamp for frames of `format`; nil when the row does not fit them.
    init?(format: MediaFormat.VideoFormat) {
        guard let side = Self.side(width: format.width, height: format.height) else { return nil }
        self.side = side
        painter = FramePainter(pattern: .solid, format: format, color: FramePainter.RGB(r: 0, g: 0, b: 0), digits: 1)
    }

    /// Draws `milliseconds` (its low 40 bits) into a frame's planes: the black band, then the
    /// white cells.
    func draw(_ milliseconds: UInt64, _ planes: [SampleBuffer.PixelPlane]) {
        painter.paint(Self.band(side: side), white: false, planes)
        for (i, white) in Self.cells(of: milliseconds).enumerated() where white {
            painter.paint(Self.cell(i, side: side), white: true, planes)
        }
    }
}
