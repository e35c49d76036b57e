@_spi(Engine) import GraphKitCore

/// Draws a ``VideoComposition``'s frames from one track's decoded frames, 4:2:0 (I420) or BGRA
/// (the output is of the source's format): for each
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
    /// The output frames, recycled once the encoder lets go of them: every byte of each is
    /// drawn, so none is zero-filled (a 1080p frame a frame time otherwise).
    private let pool = FramePool()

    init(_ composition: VideoComposition, trackID: Int) {
        self.composition = composition
        self.trackID = trackID
        (width, height) = composition.encodedSize
    }

    /// The 4:2:0 values of an RGB colour in limited range, in the matrix the encoder tags a
    /// frame of `height` lines with (GStreamer's default, as gkrgbtoi420's: BT.709 from 720
    /// lines up, BT.601 below).
    static func yuv(_ c: VideoComposition.RGB, height: Int) -> (y: UInt8, u: UInt8, v: UInt8) {
        let r = min(1, max(0, c.red)), g = min(1, max(0, c.green)), b = min(1, max(0, c.blue))
        let (kr, kb) = height >= 720 ? (0.2126, 0.0722) : (0.299, 0.114)
        let y = kr * r + (1 - kr - kb) * g + kb * b
        let u = (b - y) / (2 * (1 - kb)), v = (r - y) / (2 * (1 - kr))
        return (UInt8((16 + 219 * y).rounded()), UInt8((128 + 224 * u).rounded()), UInt8((128 + 224 * v).rounded()))
    }

    /// The output frame for composition time `time` (stamped `stamp`, shown for `duration`),
    /// drawn from `source` (an I420 frame of the track); the background alone where the
    /// instruction does not show the track.
    func render(_ source: SampleBuffer, at time: MediaTime, duration: MediaTime, stampedAt stamp: MediaTime) throws(GraphError) -> SampleBuffer {
        guard case .rawVideo(let v)? = source.format, v.pixelFormat == .i420 || v.pixelFormat == .bgra else {
            throw GraphError(.runFailed, at: "videoComposition", "the compositor draws 4:2:0 (I420) or BGRA frames, and was given \(source.format.map { "\($0)" } ?? "a buffer of no format")")
        }
        let packed = v.pixelFormat == .bgra
        let format = MediaFormat.VideoFormat(pixelFormat: v.pixelFormat, width: width, height: height,
                                             frameRate: FrameRate(Int(composition.frameDuration.timescale), Int(max(1, composition.frameDuration.value))))
        var out = try SampleBuffer(frameOf: format, from: pool, presentationTime: stamp, duration: duration)
        let (layer, background) = composition.layer(of: trackID, at: time)
        let bg = Self.yuv(background, height: height)
        let rgb = (b: Self.byte(background.blue), g: Self.byte(background.green), r: Self.byte(background.red))
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
                for plane in 0..<(packed ? 1 : 3) {
                    let s = layout[plane], d = outLayout[plane]
                    // Each byte of a pixel's background: one for a 4:2:0 plane, B G R A for BGRA.
                    let fill: [UInt8] = packed ? [rgb.b, rgb.g, rgb.r, 255] : [plane == 0 ? bg.y : plane == 1 ? bg.u : bg.v]
                    let scale = plane == 0 ? 1.0 : 2.0
                    let from = src.baseAddress! + s.offset, to = dst.baseAddress! + d.offset
                    guard let drawn, drawn.visible.width > 0, drawn.visible.height > 0 else {
                        for y in 0..<d.height { Self.fill(to + y * d.stride, fill, count: d.width) }
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

    static func byte(_ x: Double) -> UInt8 { UInt8((min(1, max(0, x)) * 255).rounded()) }

    /// `count` pixels of `background` (one byte each, or four) from `row` on.
    static func fill(_ row: UnsafeMutableRawPointer, _ background: [UInt8], count: Int) {
        if background.count == 1 {
            row.initializeMemory(as: UInt8.self, repeating: background[0], count: count)
        } else {
            let pixel = UInt32(background[0]) | UInt32(background[1]) << 8 | UInt32(background[2]) << 16 | UInt32(background[3]) << 24
            row.initializeMemory(as: UInt32.self, repeating: pixel.littleEndian, count: count)
        }
    }

    /// Draws one plane of `background.count` bytes a pixel (1: a 4:2:0 plane; 4: BGRA).
    /// `scale`: full-resolution pixels per plane pixel (2 for 4:2:0 chroma).
    static func draw(from src: UnsafeRawPointer, stride sStride: Int, size: (width: Int, height: Int),
                     into dst: UnsafeMutableRawPointer, stride dStride: Int, size out: (width: Int, height: Int),
                     scale: Double, drawing: Drawing, background: [UInt8]) {
        let m = drawing.inverse
        let n = background.count
        // The visible part in this plane's pixels: [left, right) × [top, bottom).
        let left = drawing.visible.x / scale, top = drawing.visible.y / scale
        let right = (drawing.visible.x + drawing.visible.width) / scale, bottom = (drawing.visible.y + drawing.visible.height) / scale
        let alpha = Int((drawing.opacity * 256).rounded())  // 0...256
        let bg = background.map(Int.init)
        @inline(__always) func blend(_ value: Int, _ channel: Int) -> UInt8 {
            UInt8(truncatingIfNeeded: bg[channel] + (((value - bg[channel]) * alpha) >> 8))
        }

        // A move by whole plane pixels: rows copied (and blended), the rest background.
        let dx = -m.tx / scale, dy = -m.ty / scale
        if m.a == 1, m.b == 0, m.c == 0, m.d == 1, dx == dx.rounded(), dy == dy.rounded() {
            let sx = Int(-dx), sy = Int(-dy)  // source = output + (sx, sy)
            let l = Int(left.rounded(.up)), r = Int(right.rounded(.down)), t = Int(top.rounded(.up)), b = Int(bottom.rounded(.down))
            for y in 0..<out.height {
                let row = dst + y * dStride
                let srcY = y + sy
                // Output columns whose source is visible: x + sx in [l, r).
                let x0 = max(0, l - sx), x1 = min(out.width, r - sx)
                guard srcY >= t, srcY < b, x1 > x0 else {
                    fill(row, background, count: out.width)
                    continue
                }
                fill(row, background, count: x0)
                fill(row + x1 * n, background, count: out.width - x1)
                let from = (src + srcY * sStride + (x0 + sx) * n).assumingMemoryBound(to: UInt8.self)
                let to = (row + x0 * n).assumingMemoryBound(to: UInt8.self)
                if alpha >= 256 {
                    to.update(from: from, count: (x1 - x0) * n)
                } else if n == 1 {
                    for x in 0..<(x1 - x0) { to[x] = blend(Int(from[x]), 0) }
                } else {
                    for i in 0..<((x1 - x0) * n) { to[i] = blend(Int(from[i]), i % n) }
                }
            }
            return
        }
        // Anything else: each output pixel's centre taken back through the transform (in full
        // resolution pixels), sampled bilinearly where it falls inside the visible part.
        let lastX = size.width - 1, lastY = size.height - 1
        let p = src.assumingMemoryBound(to: UInt8.self)
        for y in 0..<out.height {
            let row = (dst + y * dStride).assumingMemoryBound(to: UInt8.self)
            let ry = (Double(y) + 0.5) * scale
            for x in 0..<out.width {
                let rx = (Double(x) + 0.5) * scale
                let fx = (m.a * rx + m.c * ry + m.tx) / scale, fy = (m.b * rx + m.d * ry + m.ty) / scale
                guard fx >= left, fx < right, fy >= top, fy < bottom else {
                    for c in 0..<n { row[x * n + c] = background[c] }
                    continue
                }
                let px = fx - 0.5, py = fy - 0.5
                let ix = Int(px.rounded(.down)), iy = Int(py.rounded(.down))
                let wx = px - Double(ix), wy = py - Double(iy)
                let x0 = min(lastX, max(0, ix)) * n, x1 = min(lastX, max(0, ix + 1)) * n
                let y0 = min(lastY, max(0, iy)) * sStride, y1 = min(lastY, max(0, iy + 1)) * sStride
                for c in 0..<n {
                    let top = Double(p[y0 + x0 + c]) * (1 - wx) + Double(p[y0 + x1 + c]) * wx
                    let low = Double(p[y1 + x0 + c]) * (1 - wx) + Double(p[y1 + x1 + c]) * wx
                    let value = Int((top * (1 - wy) + low * wy).rounded())
                    row[x * n + c] = alpha >= 256 ? UInt8(value) : blend(value, c)
                }
            }
        }
    }
}
