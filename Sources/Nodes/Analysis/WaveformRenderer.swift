import CCairo
import GraphKit

/// Draws waveform data as a picture with Cairo (PNG or SVG): the mirrored waveform, its peaks
/// above the centre line and mirrored below, scaled so that the loudest bin reaches the drawing
/// height, inside 95% of the width and 85% of the height, centred.
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

    /// Cairo's functions, loaded on first use.
    static func cairo() throws(GraphError) -> GkCairo {
        var error: UnsafePointer<CChar>?
        guard let table = gk_cairo(&error) else {
            throw GraphError(.missingPlugin, "cannot draw waveform pictures: \(error.map { String(cString: $0) } ?? "libcairo.so.2 did not load"); install the Debian package libcairo2")
        }
        return table.pointee
    }

    public func writePNG(_ data: WaveformData, to path: String) throws(GraphError) {
        let cairo = try Self.cairo()
        // Cairo returns an error surface rather than NULL; NULL would mean it could not even do that.
        guard let surface = cairo.image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else {
            throw GraphError(.runFailed, at: path, "cannot draw a \(width)×\(height) picture: out of memory")
        }
        defer { cairo.surface_destroy(surface) }
        draw(data, on: surface, with: cairo)
        let status = cairo.surface_write_to_png(surface, path)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw GraphError(.outputUnwritable, at: path, "cannot write PNG: \(String(cString: cairo.status_to_string(status)))")
        }
    }

    public func writeSVG(_ data: WaveformData, to path: String) throws(GraphError) {
        let cairo = try Self.cairo()
        guard let surface = cairo.svg_surface_create(path, Double(width), Double(height)) else {
            throw GraphError(.runFailed, at: path, "cannot draw a \(width)×\(height) picture: out of memory")
        }
        draw(data, on: surface, with: cairo)
        cairo.surface_finish(surface)
        let status = cairo.surface_status(surface)
        cairo.surface_destroy(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw GraphError(.outputUnwritable, at: path, "cannot write SVG: \(String(cString: cairo.status_to_string(status)))")
        }
    }

    private func draw(_ data: WaveformData, on surface: OpaquePointer, with cairo: GkCairo) {
        guard let cr = cairo.create(surface) else { return }  // never NULL: an error context instead
        defer { cairo.destroy(cr) }
        cairo.set_source_rgba(cr, backgroundColor.red, backgroundColor.green, backgroundColor.blue, backgroundColor.alpha)
        cairo.set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo.paint(cr)
        cairo.set_operator(cr, CAIRO_OPERATOR_OVER)
        cairo.set_source_rgba(cr, waveColor.red, waveColor.green, waveColor.blue, waveColor.alpha)

        let w = Double(width), h = Double(height)
        let drawWidth = w * 0.95, left = (w - drawWidth) / 2
        let halfHeight = h * 0.85 / 2, centre = h / 2
        let amplitudes = Self.amplitudes(data)
        let n = amplitudes.count
        guard n > 0 else { return }
        let peak = amplitudes.max() ?? 0
        let scale = peak > 0 ? halfHeight / peak : 0
        let step = drawWidth / Double(n)

        switch style {
        case .filled:
            // The centre line, so that silence still shows: two whole pixel rows.
            cairo.rectangle(cr, left, centre.rounded(.down) - 1, drawWidth, 2)
            cairo.fill(cr)
            cairo.move_to(cr, left, centre)
            for (i, a) in amplitudes.enumerated() {
                cairo.line_to(cr, left + Double(i) * step, centre - a * scale)
                cairo.line_to(cr, left + Double(i + 1) * step, centre - a * scale)
            }
            cairo.line_to(cr, left + drawWidth, centre)
            for (i, a) in amplitudes.enumerated().reversed() {
                cairo.line_to(cr, left + Double(i + 1) * step, centre + a * scale)
                cairo.line_to(cr, left + Double(i) * step, centre + a * scale)
            }
            cairo.close_path(cr)
            cairo.fill(cr)
        case .bars:
            let barWidth = max(1, step * 0.7)
            for (i, a) in amplitudes.enumerated() {
                let half = max(0.5, a * scale)
                cairo.rectangle(cr, left + Double(i) * step + (step - barWidth) / 2, centre - half, barWidth, 2 * half)
            }
            cairo.fill(cr)
        }
    }
}
