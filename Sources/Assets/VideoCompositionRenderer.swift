@_spi(Engine) import GraphKitCore

/// Draws a ``VideoComposition``'s frames from one track's decoded 4:2:0 (I420) frames: for each
/// output time, the track's frame showing then, cropped, moved through its layer's transform into
/// the render size, at its opacity over the background, as AVFoundation's compositor draws a
/// single-layer instruction. Each plane is drawn in its own resolution (chroma at half).
///
/// A frame whose transform is a whole-pixel move (the usual crop: a translation by minus the
/// crop's corner) is drawn by copying rows; a fade over an unmoved frame by one pass over each
/// row; any other transform (a turn, a scale) by bilinear sampling. Pixels outside the (cropped)
/// frame are the background. Frames keep the output's times (every ``VideoComposition/frameDuration``).
struct VideoCompositionRenderer {
    let composition: VideoComposition
    let trackID: Int
    let width: Int, height: Int

    init(_ composition: VideoComposition, trackID: Int) {
        self.composition = composition
        self.trackID = trackID
        (width, height) = composition.encodedSize
    }

    /// The 4:2:0 values of an RGB colour (BT.709, limited range, as the encoders tag HD).
    static func yuv(_ c: VideoComposition.RGB) -> (y: UInt8, u: UInt8, v: UInt8) {
        let r = min(1, max(0, c.red)), g = min(1, max(0, c.green)), b = min(1, max(0, c.blue))
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b
        let u = (b - y) / 1.8556, v = (r - y) / 1.5748
        return (UInt8((16 + 219 * y).rounded()), UInt8((128 + 224 * u).rounded()), UInt8((128 + 224 * v).rounded()))
    }

    /// The output frame for composition time `time` (stamped `stamp`, shown for `duration`),
    /// drawn from `source` (an I420 frame of the track); the background alone where the
    /// instruction does not show the track.
    func render(_ source: SampleBuffer, at time: MediaTime, duration: MediaTime, stampedAt stamp: MediaTime) throws(GraphError) -> SampleBuffer {
        guard case .rawVideo(let v)? = source.format, v.pixelFormat == .i420 else {
            throw GraphError(.runFailed, at: "videoComposition", "the compositor draws 4:2:0 (I420) frames, and was given \(source.format.map { "\($0)" } ?? "a buffer of no format")")
        }
        let format = MediaFormat.VideoFormat(pixelFormat: .i420, width: width, height: height,
                                             frameRate: FrameRate(Int(composition.frameDuration.timescale), Int(max(1, composition.frameDuration.value))))
        var out = SampleBuffer(format: .rawVideo(format), byteCount: width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2),
                               presentationTime: stamp, duration: duration)
        let (layer, background) = composition.layer(of: trackID, at: time)
        let bg = Self.yuv(background)
        let layout = source.planeLayout(v)
        let outLayout = out.planeLayout(format)
        let drawn: Drawing? = layer.flatMap { layer in
            let t = layer.transform.value(at: time)
            guard let inverse = t.inverted else { return nil }
            let full = VideoComposition.Rectangle(x: 0, y: 0, width: Double(v.width), height: Double(v.height))
            let crop = layer.crop?.value(at: time) ?? full
            let x0 = max(0, crop.x), y0 = max(0, crop.y)
            let visible = VideoComposition.Rectangle(x: x0, y: y0, width: min(Double(v.width), crop.x + crop.width) - x0,
                                                     height: min(Double(v.height), crop.y + crop.height) - y0)
            return Drawing(inverse: inverse, visible: visible, opacity: min(1, max(0, layer.opacity.value(at: time))))
        }
        source.withUnsafeBytes { src in
            out.withUnsafeMutableBytes { dst in
                for plane in 0..<3 {
                    let s = layout[plane], d = outLayout[plane]
                    let fill = plane == 0 ? bg.y : plane == 1 ? bg.u : bg.v
                    let scale = plane == 0 ? 1.0 : 2.0
                    let from = src.baseAddress! + s.offset, to = dst.baseAddress! + d.offset
                    guard let drawn, drawn.visible.width > 0, drawn.visible.height > 0 else {
                        for y in 0..<d.height { (to + y * d.stride).initializeMemory(as: UInt8.self, repeating: fill, count: d.width) }
                        continue
                    }
                    Self.draw(from: from, stride: s.stride, size: (s.width, s.height), into: to, stride: d.stride, size: (d.width, d.height),
                              scale: scale, drawing: drawn, background: fill)
                }
            }
        }
        return out
    }

    /// What is drawn of the layer: render coordinates to source coordinates, the part of the
    /// source that shows (cropped, in source pixels), the opacity.
    struct Drawing {
        var inverse: LayerTransform
        var visible: VideoComposition.Rectangle
        var opacity: Double
    }

    /// Draws one plane. `scale`: full-resolution pixels per plane pixel (2 for 4:2:0 chroma).
    static func draw(from src: UnsafeRawPointer, stride sStride: Int, size: (width: Int, height: Int),
                     into dst: UnsafeMutableRawPointer, stride dStride: Int, size out: (width: Int, height: Int),
                     scale: Double, drawing: Drawing, background: UInt8) {
        let m = drawing.inverse
        // The visible part in this plane's pixels: [left, right) × [top, bottom).
        let left = drawing.visible.x / scale, top = drawing.visible.y / scale
        let right = (drawing.visible.x + drawing.visible.width) / scale, bottom = (drawing.visible.y + drawing.visible.height) / scale
        let alpha = Int((drawing.opacity * 256).rounded())  // 0...256
        let bg = Int(background)
        @inline(__always) func blend(_ value: Int) -> UInt8 { UInt8(truncatingIfNeeded: bg + (((value - bg) * alpha) >> 8)) }

        // A move by whole plane pixels: rows copied (and blended), the rest background.
        let dx = -m.tx / scale, dy = -m.ty / scale
        if m.a == 1, m.b == 0, m.c == 0, m.d == 1, dx == dx.rounded(), dy == dy.rounded() {
            let sx = Int(-dx), sy = Int(-dy)  // source = output + (sx, sy)
            let l = Int(left.rounded(.up)), r = Int(right.rounded(.down)), t = Int(top.rounded(.up)), b = Int(bottom.rounded(.down))
            for y in 0..<out.height {
                let row = (dst + y * dStride).assumingMemoryBound(to: UInt8.self)
                let srcY = y + sy
                // Output columns whose source is visible: x + sx in [l, r).
                let x0 = max(0, l - sx), x1 = min(out.width, r - sx)
                guard srcY >= t, srcY < b, x1 > x0 else {
                    row.initialize(repeating: background, count: out.width)
                    continue
                }
                row.initialize(repeating: background, count: x0)
                (row + x1).initialize(repeating: background, count: out.width - x1)
                let from = (src + srcY * sStride + x0 + sx).assumingMemoryBound(to: UInt8.self)
                if alpha >= 256 {
                    (row + x0).update(from: from, count: x1 - x0)
                } else {
                    for x in 0..<(x1 - x0) { row[x0 + x] = blend(Int(from[x])) }
                }
            }
            return
        }
        // Anything else: each output pixel's centre taken back through the transform (in full
        // resolution pixels), sampled bilinearly where it falls inside the visible part.
        let lastX = size.width - 1, lastY = size.height - 1
        for y in 0..<out.height {
            let row = (dst + y * dStride).assumingMemoryBound(to: UInt8.self)
            let ry = (Double(y) + 0.5) * scale
            for x in 0..<out.width {
                let rx = (Double(x) + 0.5) * scale
                let fx = (m.a * rx + m.c * ry + m.tx) / scale, fy = (m.b * rx + m.d * ry + m.ty) / scale
                guard fx >= left, fx < right, fy >= top, fy < bottom else {
                    row[x] = background
                    continue
                }
                let px = fx - 0.5, py = fy - 0.5
                let ix = Int(px.rounded(.down)), iy = Int(py.rounded(.down))
                let wx = px - Double(ix), wy = py - Double(iy)
                let x0 = min(lastX, max(0, ix)), x1 = min(lastX, max(0, ix + 1))
                let y0 = min(lastY, max(0, iy)), y1 = min(lastY, max(0, iy + 1))
                let p = src.assumingMemoryBound(to: UInt8.self)
                let top = Double(p[y0 * sStride + x0]) * (1 - wx) + Double(p[y0 * sStride + x1]) * wx
                let low = Double(p[y1 * sStride + x0]) * (1 - wx) + Double(p[y1 * sStride + x1]) * wx
                let value = Int((top * (1 - wy) + low * wy).rounded())
                row[x] = alpha >= 256 ? UInt8(value) : blend(value)
            }
        }
    }
}
