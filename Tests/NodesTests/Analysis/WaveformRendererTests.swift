import CCairo
import Foundation
import FoundationXML
import GraphKit
import GraphKitTesting
import Nodes
import Testing
import TestSupport

/// Pixels as Cairo holds them (ARGB32, premultiplied, native-endian).
struct Pixels: Equatable {
    let width: Int
    let height: Int
    let argb: [UInt32]

    /// A PNG read back with Cairo (libpng underneath): a decoder other than the one that wrote it.
    init(png path: String) throws {
        let s = try #require(cairo_image_surface_create_from_png(path))
        defer { cairo_surface_destroy(s) }
        try #require(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS, "\(path) does not decode as PNG")
        self.init(surface: s)
    }

    init(surface s: OpaquePointer) {
        cairo_surface_flush(s)
        let (w, h) = (Int(cairo_image_surface_get_width(s)), Int(cairo_image_surface_get_height(s)))
        let stride = Int(cairo_image_surface_get_stride(s))
        let base = UnsafeRawPointer(cairo_image_surface_get_data(s)!)
        width = w
        height = h
        argb = Array(unsafeUninitializedCapacity: w * h) { out, count in
            for y in 0..<h { memcpy(out.baseAddress! + y * w, base + y * stride, w * 4) }
            count = w * h
        }
    }

    subscript(x: Int, y: Int) -> UInt32 { argb[y * width + x] }

    /// Each column's ink: its topmost and bottommost rows whose pixel is not `background`.
    func ink(background: UInt32) -> [ClosedRange<Int>?] {
        (0..<width).map { x in
            guard let top = (0..<height).first(where: { self[x, $0] != background }) else { return nil }
            return top...(0..<height).last(where: { self[x, $0] != background })!
        }
    }
}

/// Waveform pictures drawn a pixel column at a time (issue 16). Every column of a PNG or an SVG,
/// read back by other decoders, is checked against the picture's definition worked out from the
/// data, and against the picture as it was drawn before: one antialiased path point pair per bin.
@Suite(.media) struct WaveformRendererTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static let white: UInt32 = 0xFFFF_FFFF
    static let blue: UInt32 = 0xFF34_65A4  // the default wave colour, #3465a4

    enum Audio: String, Sendable, CaseIterable {
        /// 21.5 s at 16 frames a bin: 59,375 bins, more than the picture's columns.
        case long
        /// 0.5 s at 256 frames a bin: 86 bins, each wider than a pixel.
        case short
    }

    /// Decoded audio whose loudness changes from column to column: ten of GStreamer's test signals
    /// one after another (tones, noises, ticks, silence, a slow sawtooth) at different volumes,
    /// their lengths unrelated to any bin or column; 44.1 kHz stereo, in a WAV.
    func makeAudio(_ audio: Audio) throws -> String {
        let buffers = audio == .long ? [97, 131, 53, 149, 89, 71, 113, 67, 101, 79] : [3, 2, 1, 4, 2, 3, 1, 2, 3, 1]
        let caps = "audio/x-raw,format=S16LE,rate=44100,channels=2,layout=interleaved"
        let signals = ["wave=sine freq=220 volume=0.2", "wave=pink-noise volume=0.7", "wave=silence", "wave=ticks volume=1.0",
                       "wave=red-noise volume=0.4", "wave=square freq=50 volume=0.05", "wave=gaussian-noise volume=0.3",
                       "wave=sine freq=3000 volume=0.9", "wave=white-noise volume=0.15", "wave=saw freq=5 volume=0.6"]
        let wav = path("\(audio).wav")
        let parts = zip(signals, buffers).map { "audiotestsrc \($0) num-buffers=\($1) samplesperbuffer=1000 ! \(caps) ! c." }
        try TestMedia.gstLaunch("concat name=c ! \(caps) ! wavenc ! filesink location=\(wav) " + parts.joined(separator: " "))
        return wav
    }

    /// graphs/waveform.json as it ships, with these overrides, run to the end.
    func runShippedGraph(_ overrides: [String]) throws {
        let graph = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../graphs/waveform.json").standardized.path
        let loaded = try GraphLoader(registry: .builtIn).load(contentsOf: graph, overrides: overrides.map { try GraphLoader.Override(parsing: $0) })
        try GraphRun(loaded).run()
    }

    /// The waveform data a run wrote as JSON, back as values.
    func readData(_ json: String) throws -> WaveformData {
        let v = try JSONParser.parse(try String(contentsOfFile: json, encoding: .utf8))
        func int(_ key: String) throws -> Int {
            guard case .number(let n)? = v[key] else { throw GraphError(.runFailed, "no \(key) in \(json)") }
            return Int(n)
        }
        guard case .array(let values)? = v["data"] else { throw GraphError(.runFailed, "no data in \(json)") }
        return WaveformData(sampleRate: try int("sample_rate"), samplesPerPixel: try int("samples_per_pixel"), channels: try int("channels"),
                            bits: try int("bits"), data: values.map { value in if case .number(let n) = value { Int16(n) } else { .min } })
    }

    /// Bin i's footprint in a picture `width` wide, in units of 1 / (800 n) of a pixel, where
    /// every edge is a whole number: its slot for `filled`, its bar for `bars`.
    static func footprint(bins n: Int, width: Int, style: WaveformRenderer.Style) -> (unit: Int, slot: Int, origin: Int, from: Int, to: Int) {
        let unit = 800 * n, slot = 760 * width, origin = 20 * width * n  // a pixel; 0.95 of the width / n; the area's left edge
        let (from, to) = style == .filled ? (0, slot)
            : 7 * slot >= 10 * unit ? (slot * 15 / 100, slot * 85 / 100)  // a bar 70% of the slot, centred
            : (slot / 2 - unit / 2, slot / 2 + unit / 2)  // a bar one pixel wide
        return (unit, slot, origin, from, to)
    }

    static func amplitudes(_ w: WaveformData) -> [Int] {
        let per = 2 * w.channels
        return (0..<w.length).map { i in w.data[(i * per)..<((i + 1) * per)].map { abs(Int($0)) }.max()! }
    }

    /// The picture's definition (docs/GRAPH-FORMAT.md, `analysis.waveform`) worked out from the
    /// columns' side: for each column, the bins whose footprint overlaps it, by solving the overlap
    /// for the bin's index; then, row by row, the rows its scaled peak reaches into. Exact.
    static func expectedInk(_ w: WaveformData, width: Int, height: Int, style: WaveformRenderer.Style) -> [ClosedRange<Int>?] {
        let n = w.length
        guard n > 0 else { return Array(repeating: nil, count: width) }
        let amplitude = amplitudes(w), peak = amplitude.max()!
        let (unit, slot, origin, from, to) = footprint(bins: n, width: width, style: style)
        func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : -((-a + b - 1) / b) }  // b > 0
        // h = 0.425 · height · a / peak, in units of 1 / (40 peak); bars at least half a pixel.
        let scale = 40 * max(peak, 1), centre = 20 * height * max(peak, 1)
        return (0..<width).map { c -> ClosedRange<Int>? in
            // origin + i·slot + from < (c + 1)·unit, and origin + i·slot + to > c·unit.
            let first = max(0, floorDiv(c * unit - origin - to, slot) + 1)
            let last = min(n - 1, floorDiv((c + 1) * unit - origin - from - 1, slot))
            guard first <= last else { return nil }
            let a = amplitude[first...last].max()!
            let h = max(peak > 0 ? 17 * height * a : 0, style == .bars ? scale / 2 : 0)
            // Row r spans r ..< r + 1: inked when it overlaps centre − h ... centre + h.
            var rows = (0..<height).filter { r in r * scale < centre + h && (r + 1) * scale > centre - h }
            if style == .filled { rows += [height / 2 - 1, height / 2] }  // the centre line
            return rows.min().map { $0...rows.max()! }
        }
    }

    /// The picture as WaveformRenderer drew it before issue 16 (62297e4), kept here to compare:
    /// one antialiased Cairo path through every bin, in the default colours.
    static func drawBefore(_ data: WaveformData, on surface: OpaquePointer, width: Int, height: Int, style: WaveformRenderer.Style) {
        let cr = cairo_create(surface)!
        defer { cairo_destroy(cr) }
        cairo_set_source_rgba(cr, 1, 1, 1, 1)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
        cairo_set_source_rgba(cr, Double(0x34) / 255, Double(0x65) / 255, Double(0xa4) / 255, 1)
        let w = Double(width), h = Double(height)
        let drawWidth = w * 0.95, left = (w - drawWidth) / 2
        let halfHeight = h * 0.85 / 2, centre = h / 2
        let amplitudes = amplitudes(data).map(Double.init)
        let n = amplitudes.count
        guard n > 0 else { return }
        let peak = amplitudes.max() ?? 0
        let scale = peak > 0 ? halfHeight / peak : 0
        let step = drawWidth / Double(n)
        switch style {
        case .filled:
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

    static func pixelsBefore(_ data: WaveformData, width: Int, height: Int, style: WaveformRenderer.Style) -> Pixels {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height))!
        defer { cairo_surface_destroy(surface) }
        drawBefore(data, on: surface, width: width, height: height, style: style)
        return Pixels(surface: surface)
    }

    /// How much of pixel (column, row) the picture of before covered, as a fraction of the
    /// pixel's area: the sum over the bins drawn there (an upper bound where bars overlap).
    static func coverageBefore(_ amplitude: [Double], column: Int, row: Int, width: Int, height: Int, style: WaveformRenderer.Style) -> Double {
        let peak = amplitude.max()!, n = amplitude.count
        let step = Double(width) * 0.95 / Double(n), left = Double(width) * 0.025, centre = Double(height) / 2
        let barWidth = style == .bars ? max(1, step * 0.7) : step
        let near = max(0, Int((Double(column) - left) / step) - 2)...min(n - 1, max(0, Int((Double(column + 1) - left) / step) + 2))
        return near.reduce(0.0) { sum, i in
            let x0 = left + Double(i) * step + (step - barWidth) / 2
            let across = max(0, min(x0 + barWidth, Double(column + 1)) - max(x0, Double(column)))
            let half = max(style == .bars ? 0.5 : 0, peak > 0 ? amplitude[i] * Double(height) * 0.425 / peak : 0)
            return sum + across * max(0, min(centre + half, Double(row + 1)) - max(centre - half, Double(row)))
        }
    }

    /// Reads an SVG as XML (any syntax error fails), giving its elements' names and attributes.
    final class SVGReader: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            elements.append((name, attributes))
        }
        static func read(_ path: String) throws -> [(name: String, attributes: [String: String])] {
            let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
            let reader = SVGReader()
            parser.delegate = reader
            try #require(parser.parse(), "\(path) is not well-formed XML: \(String(describing: parser.parserError))")
            return reader.elements
        }
    }

    /// The pictures of decoded audio through the graph as it ships, at 1,000 and 20,000 pixels,
    /// with more bins than columns and fewer, in both styles.
    @Test(arguments: Audio.allCases, [1000, 20_000])
    func everyColumnShowsTheLoudestBinDrawnInIt(_ audio: Audio, _ width: Int) throws {
        let wav = try makeAudio(audio)
        for style in WaveformRenderer.Style.allCases {
            let (json, png, svg) = (path("\(style).json"), path("\(style).png"), path("\(style).svg"))
            try runShippedGraph(["src.path=\(wav)", "wave.json=\(json)", "wave.png=\(png)", "wave.svg=\(svg)",
                                 "wave.samplesPerPixel=\(audio == .long ? 16 : 256)", "wave.imageWidth=\(width)", "wave.style=\(style)"])
            let data = try readData(json)
            #expect(data.bits == 16)
            #expect(data.length == (audio == .long ? 59_375 : 86))
            let picture = try Pixels(png: png)
            #expect(picture.width == width && picture.height == 200)
            // Crisp: one colour or the other, nothing in between.
            #expect(picture.argb.allSatisfy { $0 == Self.white || $0 == Self.blue }, "\(style)")

            // Every column exactly as the definition says.
            let ink = picture.ink(background: Self.white)
            let expected = Self.expectedInk(data, width: width, height: 200, style: style)
            let wrong = (0..<width).filter { ink[$0] != expected[$0] }
            #expect(wrong.isEmpty, "\(style): columns \(wrong.prefix(5).map { "\($0): \(String(describing: ink[$0])), expected \(String(describing: expected[$0]))" })")

            // Against the picture drawn bin by bin: every row it inked is inked still, and every
            // row inked now and not then was covered then by less than antialiasing can show
            // (Cairo samples a pixel at 15 heights and rounds coverage to 1/255): where a bin
            // reached a row by a sliver, or overlapped the column by one.
            let before = Self.pixelsBefore(data, width: width, height: 200, style: style).ink(background: Self.white)
            let amplitude = Self.amplitudes(data).map(Double.init)
            var lost: [Int] = [], added: [(column: Int, row: Int, coverage: Double)] = []
            for c in 0..<width {
                if let old = before[c], !(ink[c].map { $0.contains(old.lowerBound) && $0.contains(old.upperBound) } ?? false) { lost.append(c) }
                for r in ink[c].map(Array.init) ?? [] where !(before[c]?.contains(r) ?? false) {
                    added.append((c, r, Self.coverageBefore(amplitude, column: c, row: r, width: width, height: 200, style: style)))
                }
            }
            #expect(lost.isEmpty, "\(style): ink drawn before and not now in columns \(lost.prefix(5))")
            let visible = added.filter { $0.coverage >= 1.0 / 15 }
            #expect(visible.isEmpty, "\(style): rows inked now that were covered visibly before: \(visible.prefix(5))")

            // The SVG: well-formed, one path along the columns' edges (a few commands a column,
            // whatever the number of bins), and drawn by librsvg it is the PNG, pixel for pixel.
            let elements = try SVGReader.read(svg)
            #expect(elements.map(\.name) == ["svg", "rect", "path"])
            #expect(elements.first?.attributes["width"] == "\(width)")
            let commands = (elements.last?.attributes["d"] ?? "").filter { "MHVZ".contains($0) }.count
            #expect(commands > 0 && commands <= 5 * width, "\(style): \(commands) path commands")
            let rendered = path("\(style)-rsvg.png")
            try TestMedia.runTool("rsvg-convert", ["--output", rendered, svg])
            #expect(try Pixels(png: rendered) == picture, "\(style)")
            if audio == .long {
                // Smaller than the SVG drawn bin by bin, which held a path point pair per bin.
                let old = path("\(style)-before.svg")
                let surface = cairo_svg_surface_create(old, Double(width), 200)!
                Self.drawBefore(data, on: surface, width: width, height: 200, style: style)
                cairo_surface_finish(surface)
                cairo_surface_destroy(surface)
                let (newSize, oldSize) = (try fileSize(svg), try fileSize(old))
                #expect(newSize < oldSize / 4, "\(style): \(newSize) bytes against \(oldSize)")
            }
        }
    }

    func fileSize(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
    }

    /// Pushes PCM through a waveform node with these parameters; gives its data and its PNG.
    func draw(_ pcm: [SampleBuffer], _ params: String, name: String) throws -> (data: WaveformData, png: Pixels, bytes: Data) {
        let h = try NodeHarness("""
            { "type": "analysis.waveform", "params": { \(params), "json": "\(path("\(name).json"))", "png": "\(path("\(name).png"))" } }
            """, outputs: [])
        try h.push(pcm)
        try h.finish()
        return (try readData(path("\(name).json")), try Pixels(png: path("\(name).png")),
                try Data(contentsOf: URL(fileURLWithPath: path("\(name).png"))))
    }

    /// `count` columns of `rows`, then `nil` up to `width`, after `start` columns of nil.
    func columns(_ start: Int, _ count: Int, _ rows: ClosedRange<Int>, width: Int = 1000) -> [ClosedRange<Int>?] {
        Array(repeating: nil, count: start) + Array(repeating: rows, count: count) + Array(repeating: nil, count: width - start - count)
    }

    @Test func oneBinFillsTheAreaOrMakesOneBar() throws {
        let tone = TestMedia.sine(amplitude: 0.5, seconds: 100.0 / 44_100)  // 100 frames, one bin of 256
        let filled = try draw(tone, #""style": "filled""#, name: "filled")
        #expect(filled.data.length == 1)
        // The area: x 25 ..< 975; the bin reaches 85 px above and below y = 100.
        #expect(filled.png.ink(background: Self.white) == columns(25, 950, 15...184))
        let bars = try draw(tone, #""style": "bars""#, name: "bars")
        // One bar, 70% of 950 px, centred: x 167.5 ..< 832.5.
        #expect(bars.png.ink(background: Self.white) == columns(167, 666, 15...184))
    }

    @Test func silenceIsTheCentreLineOrFlatBars() throws {
        let silence = TestMedia.pcm(frames: 1000) { _, _ in 0 }
        let filled = try draw(silence, #""samplesPerPixel": 100"#, name: "filled")
        #expect(filled.png.ink(background: Self.white) == columns(25, 950, 99...100))
        let bars = try draw(silence, #""samplesPerPixel": 100, "style": "bars""#, name: "bars")
        // Ten bins 95 px apart, bars 66.5 px wide and a pixel high about y = 100: rows 99 and 100.
        let ink = bars.png.ink(background: Self.white)
        #expect(ink == Self.expectedInk(bars.data, width: 1000, height: 200, style: .bars))
        #expect(Array(ink[38...106]) == [nil] + Array(repeating: 99...100, count: 67) + [nil])  // the first bar, x 39.25 ..< 105.75
    }

    @Test func splitChannelsShowTheLouderChannelOfEachBin() throws {
        // Left loud in the first half, right louder in the second; opposite halves quiet.
        let stereo = TestMedia.pcm(channels: 2, frames: 1000) { f, ch in
            let v: Int16 = f < 500 ? (ch == 0 ? 20_000 : 1000) : (ch == 0 ? 1000 : 30_000)
            return f % 2 == 0 ? v : -v
        }
        let split = try draw(stereo, #""samplesPerPixel": 100, "splitChannels": true"#, name: "split")
        #expect(split.data.channels == 2)
        let ink = split.png.ink(background: Self.white)
        #expect(ink == Self.expectedInk(split.data, width: 1000, height: 200, style: .filled))
        // 20,000 of 30,000 reaches 56.67 px: rows 43.33 ..< 156.67; 30,000 the whole 85.
        #expect(ink[300] == 43...156 && ink[700] == 15...184)
        let combined = try draw(stereo, #""samplesPerPixel": 100"#, name: "combined")
        #expect(combined.png.ink(background: Self.white)[300] != ink[300])  // (20,000 + 1,000) / 2 of 15,500
    }

    @Test func eightBitDataDrawsTheSamePicture() throws {
        let tone = TestMedia.sine(frequency: 3, amplitude: 0.8, seconds: 0.5)  // a slow swell, 87 bins
        let sixteen = try draw(tone, #""bits": 16"#, name: "16")
        let eight = try draw(tone, #""bits": 8"#, name: "8")
        #expect(eight.data.bits == 8 && eight.data.data != sixteen.data.data)
        #expect(eight.bytes == sixteen.bytes)  // drawn from the 16-bit values either way
        #expect(sixteen.png.ink(background: Self.white) == Self.expectedInk(sixteen.data, width: 1000, height: 200, style: .filled))
    }

    @Test func translucentColoursAreCompositedOnce() throws {
        let tone = TestMedia.sine(amplitude: 0.5, seconds: 0.1)
        let svg = path("t.svg")
        let h = try NodeHarness("""
            { "type": "analysis.waveform", "params": { "png": "\(path("t.png"))", "svg": "\(svg)",
              "waveColor": "#ff000080", "backgroundColor": "#00ff0040" } }
            """, outputs: [])
        try h.push(tone)
        try h.finish()
        let png = try Pixels(png: path("t.png"))
        // Background (0, 255, 0) at alpha 64; the wave, (255, 0, 0) at 128 over it: (204, 51, 0) at
        // 160. Cairo hands them back premultiplied: 0x40004000 and 0xA0802000.
        #expect(png[0, 0] == 0x4000_4000)
        #expect(png[500, 100] == 0xA080_2000)
        #expect(Set(png.argb) == [0x4000_4000, 0xA080_2000])
        let elements = try SVGReader.read(svg)
        #expect(elements[1].attributes["fill"] == "#00ff00" && elements[1].attributes["fill-opacity"] == "\(64.0 / 255)")
        #expect(elements[2].attributes["fill"] == "#ff0000" && elements[2].attributes["fill-opacity"] == "\(128.0 / 255)")
    }
}
