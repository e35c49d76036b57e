import CCairo
import GraphKit

/// Draws waveform data as a picture with Cairo (PNG or SVG): the mirrored waveform, its peaks
/// above the centre line and mirrored below, scaled so that the loudest bin reaches the drawing
/// height, inside 95% of the width and 85% of the height, centred.
public struct WaveformRenderer: Sendable {
    public enum Style: String, Sendable, CaseIterable {
        /// One filled outline through every bin.
        case filled
        /// One bar per bin.
        case bars
    }

    public struct Color: Sendable, Equatable {
        public var red, green, blue, alpha: Double
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

    /// The amplitude drawn for each bin: the largest magnitude of any channel's min or max.
    static func amplitudes(_ w: WaveformData) -> [Double] {
        let perBin = 2 * w.channels
        return (0..<w.length).map { bin in
            var a = 0
            for i in 0..<perBin { a = max(a, abs(Int(w.data[bin * perBin + i]))) }
            return Double(a)
        }
    }

    public func writePNG(_ data: WaveformData, to path: String) throws {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        draw(data, on: surface)
        let status = cairo_surface_write_to_png(surface, path)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw GraphError(.outputUnwritable, at: path, "cannot write PNG: \(String(cString: cairo_status_to_string(status)))")
        }
    }

    public func writeSVG(_ data: WaveformData, to path: String) throws {
        let surface = cairo_svg_surface_create(path, Double(width), Double(height))!
        draw(data, on: surface)
        cairo_surface_finish(surface)
        let status = cairo_surface_status(surface)
        cairo_surface_destroy(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw GraphError(.outputUnwritable, at: path, "cannot write SVG: \(String(cString: cairo_status_to_string(status)))")
        }
    }

    private func draw(_ data: WaveformData, on surface: OpaquePointer) {
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        cairo_set_source_rgba(cr, backgroundColor.red, backgroundColor.green, backgroundColor.blue, backgroundColor.alpha)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
        cairo_set_source_rgba(cr, waveColor.red, waveColor.green, waveColor.blue, waveColor.alpha)

        let w = Double(width), h = Double(height)
        let drawWidth = w * 0.95, left = (w - drawWidth) / 2
        let halfHeight = h * 0.85 / 2, centre = h / 2
        let amplitudes = Self.amplitudes(data)
        let n = amplitudes.count
        guard n > 0 else { return }
        let peak = amplitudes.max()!
        let scale = peak > 0 ? halfHeight / peak : 0
        let step = drawWidth / Double(n)

        switch style {
        case .filled:
            // The centre line, so that silence still shows: two whole pixel rows.
            cairo_rectangle(cr, left, centre.rounded(.down) - 1, drawWidth, 2)
            cairo_fill(cr)
            cairo_move_to(cr, left, centre)
            for (i, a) in amplitudes.enumerated() {
                cairo_line_to(cr, left + Double(i) * step, centre - a * scale)
                cairo_line_to(cr, left + Double(i + 1) * step, centre - a * scale)
            }
            cairo_line_to(cr, left + drawWidth, centre)
            for (i, a) in amplitudes.enumerated().reversed() {
                cairo_line_to(cr, left + Double(i + 1) * step, centre + a * scale)
                cairo_line_to(cr, left + Double(i) * step, centre + a * scale)
            }
            cairo_close_path(cr)
            cairo_fill(cr)
        case .bars:
            let barWidth = max(1, step * 0.7)
            for (i, a) in amplitudes.enumerated() {
                let half = max(0.5, a * scale)
                cairo_rectangle(cr, left + Double(i) * step + (step - barWidth) / 2, centre - half, barWidth, 2 * half)
            }
            cairo_fill(cr)
        }
    }
}
