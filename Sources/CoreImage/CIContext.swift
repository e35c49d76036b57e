import CKernels
import CoreVideo

/// CoreImage's `CIContext`: renders a ``CIImage`` recipe into a pixel buffer or a bitmap.
///
/// How it evaluates, honestly: on the CPU, on the stored values as they are, sRGB-encoded and
/// not linearized (Apple's default working space is linear; a colour matrix or a blur here
/// gives the numbers of its formula on the encoded values), premultiplied, in single-precision
/// floats. A pixel buffer's bytes are taken as premultiplied (as Apple takes BGRA); a 4:2:0
/// buffer's as BT.601 YCbCr (video or full range by its format), opaque. Colour filters clamp
/// their result to 0…1, and consecutive ones are fused into one matrix, so a chain of them
/// straight from a BGRA or RGBA buffer into one is a single pass of a C kernel (AVX2 where the
/// CPU has it) writing the destination directly. Anything else (transforms, blurs, crops,
/// compositing) is evaluated in bands of rows, in floats. Options are accepted and none is used.
public final class CIContext: Sendable {
    public init() {}

    /// The options are accepted and not used (``CIContextOption``).
    public init(options: [CIContextOption: Any]?) {}

    /// Rows a band of the general path holds (even, so 4:2:0 chroma rows stay whole).
    static let bandRows = 64

    /// Renders the image over the buffer: the buffer is the image's (0, 0, width, height), its
    /// first memory row the top; where the image is transparent the buffer is cleared. BGRA,
    /// RGBA, `420v` and `420f` buffers are written; others are left as they are.
    public func render(_ image: CIImage, to buffer: CVPixelBuffer) {
        render(image, to: buffer, bounds: CGRect(x: 0, y: 0, width: CVPixelBufferGetWidth(buffer), height: CVPixelBufferGetHeight(buffer)))
    }

    /// Renders the part of the image inside `bounds` to the same place in the buffer (the rest
    /// of the buffer is left as it is). Apple's `render(_:to:bounds:colorSpace:)` is this with a
    /// colour space, which is not used. False when not every pixel inside `bounds` was written:
    /// a buffer of a format not written, or an image that needs an intermediate larger than the
    /// renderer makes (2²⁴ pixels), whose rows from the band that needed it down are as they were.
    @discardableResult
    package func render(_ image: CIImage, to buffer: CVPixelBuffer, bounds: CGRect) -> Bool {
        CVPixelBufferLockBaseAddress(buffer, [])
        defer { CVPixelBufferUnlockBaseAddress(buffer, []) }
        guard let memory = PixelMemory(lockedBuffer: buffer) else { return false }
        let area = PixelRect(centresIn: bounds).intersection(PixelRect(x: 0, y: 0, width: memory.width, height: memory.height))
        guard !area.isEmpty else { return true }
        return draw(image.recipe, area: area, into: memory, column: area.x, row: memory.height - area.maxY,
                    destination: ObjectIdentifier(buffer))
    }

    /// Renders the part of the image inside `bounds` into `data`: `bounds.height` rows of
    /// `rowBytes` bytes, the first the top, in `format` (``CIFormat/RGBA8``, ``CIFormat/BGRA8``,
    /// ``CIFormat/ARGB8``, ``CIFormat/ABGR8``; nothing is written for another format, a
    /// `rowBytes` shorter than a row, or a size that overflows). Apple's
    /// `render(_:toBitmap:rowBytes:bounds:format:colorSpace:)` is this with a colour space.
    package func render(_ image: CIImage, toBitmap data: UnsafeMutableRawPointer, rowBytes: Int, bounds: CGRect, format: CIFormat) {
        let area = PixelRect(centresIn: bounds)
        guard !area.isEmpty, area.width <= 1 << 20, area.height <= 1 << 20, let order = format.byteOrder,
              rowBytes >= area.width * 4 else { return }
        let (last, overflow) = rowBytes.multipliedReportingOverflow(by: area.height - 1)
        guard !overflow, !last.addingReportingOverflow(area.width * 4).overflow else { return }
        let memory = PixelMemory(width: area.width, height: area.height, layout: .packed(base: data, rowBytes: rowBytes, byteOf: order))
        draw(image.recipe, area: area, into: memory, column: 0, row: 0, destination: nil)
    }

    /// Draws `area` of the recipe into `memory` with its top-left pixel at (`column`, `row`);
    /// false when a band could not be evaluated (it and the rows below it are left as they were).
    @discardableResult
    private func draw(_ recipe: Recipe, area: PixelRect, into memory: PixelMemory, column: Int, row: Int,
                      destination: ObjectIdentifier?) -> Bool {
        var buffers: [ObjectIdentifier: CVPixelBuffer] = [:]
        recipe.collectBuffers(into: &buffers)
        for b in buffers.values { CVPixelBufferLockBaseAddress(b, .readOnly) }
        defer { for b in buffers.values { CVPixelBufferUnlockBaseAddress(b, .readOnly) } }
        var sources: [ObjectIdentifier: PixelMemory] = [:]
        for (id, b) in buffers { sources[id] = PixelMemory(lockedBuffer: b) }
        if drawWithKernel(recipe, area: area, into: memory, column: column, row: row, sources: sources) { return true }

        let renderer = Renderer(sources: sources)
        // A buffer rendered onto itself is evaluated whole, so no band reads what another wrote.
        let inPlace = destination.map { buffers[$0] != nil } ?? false
        let band = inPlace ? area.height : Self.bandRows
        var top = row
        while top < row + area.height {
            let bottom = min(row + area.height, (top / band + 1) * band, inPlace ? row + area.height : Int.max)
            // Memory rows top..<bottom are image rows from area.maxY − 1 − (top − row) down.
            let rect = PixelRect(x: area.x, y: area.maxY - (bottom - row), width: area.width, height: bottom - top)
            guard let tile = renderer.evaluate(recipe, rect) else { return false }
            tile.pixels.withUnsafeBufferPointer { p in
                for r in top..<bottom {
                    let start = (area.maxY - 1 - (r - row) - rect.y) * rect.width
                    let line = UnsafeBufferPointer(rebasing: p[start..<start + rect.width])
                    memory.write(line, x: column, row: r)
                    guard case .biPlanar = memory.layout, r % 2 == 0 || r == top else { continue }
                    let below = r % 2 == 0 && r + 1 < bottom ? UnsafeBufferPointer(rebasing: p[start - rect.width..<start]) : nil
                    let skip = column % 2
                    guard line.count > skip else { continue }
                    memory.writeChroma(top: UnsafeBufferPointer(rebasing: line[skip...]), bottom: below.map { UnsafeBufferPointer(rebasing: $0[skip...]) },
                                       x: column + skip, row: r)
                }
            }
            top = bottom
        }
        return true
    }

    /// A chain of colour filters (or none) straight from a packed buffer into packed memory:
    /// the C kernel, a row at a time, no intermediate. False when the recipe is anything else.
    private func drawWithKernel(_ recipe: Recipe, area: PixelRect, into memory: PixelMemory, column: Int, row: Int,
                                sources: [ObjectIdentifier: PixelMemory]) -> Bool {
        let (source, matrix): (CVPixelBuffer, ColorMatrix)
        switch recipe {
        case .pixels(let pb): (source, matrix) = (pb, .identity)
        case .matrix(.pixels(let pb), let m): (source, matrix) = (pb, m)
        default: return false
        }
        guard let src = sources[ObjectIdentifier(source)], case .packed(let sBase, let sRowBytes, let sOrder) = src.layout,
              case .packed(let dBase, let dRowBytes, let dOrder) = memory.layout,
              area.x >= 0, area.y >= 0, area.maxX <= src.width, area.maxY <= src.height else { return false }
        var m = matrix.m.map { Float($0) }
        for c in 0..<4 { m[5 * c + 4] *= 255 }
        let sRow = src.height - area.maxY
        gk_ci_color_matrix(m, (sBase + sRow * sRowBytes + 4 * area.x).assumingMemoryBound(to: UInt8.self), sRowBytes, sOrder,
                           (dBase + row * dRowBytes + 4 * column).assumingMemoryBound(to: UInt8.self), dRowBytes, dOrder,
                           area.width, area.height)
        return true
    }

    /// Accepted; nothing is cached.
    public func clearCaches() {}
}

extension Recipe {
    /// Every pixel buffer the recipe reads.
    func collectBuffers(into found: inout [ObjectIdentifier: CVPixelBuffer]) {
        switch self {
        case .empty, .color: break
        case .pixels(let pb): found[ObjectIdentifier(pb)] = pb
        case .matrix(let r, _), .transform(let r, _), .crop(let r, _), .clamp(let r, _), .blur(let r, _): r.collectBuffers(into: &found)
        case .over(let a, let b):
            a.collectBuffers(into: &found)
            b.collectBuffers(into: &found)
        }
    }
}
