import GraphKit

/// Small synthetic BGRA frames with known pixels, for exact effect tests.
enum VideoTestFrames {
    static func format(_ w: Int, _ h: Int, _ pf: PixelFormat = .bgra) -> MediaFormat.VideoFormat {
        .init(pixelFormat: pf, width: w, height: h, frameRate: FrameRate(30))
    }

    /// A frame whose pixel (x, y) is `pixel(x, y)` as (b, g, r, a) bytes; rows padded to
    /// `bytesPerRow` (padding filled with 0xEE, which effects must leave alone).
    static func frame(_ w: Int, _ h: Int, bytesPerRow: Int? = nil, _ pf: PixelFormat = .bgra,
                      pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) throws -> SampleBuffer {
        let stride = bytesPerRow ?? w * 4
        var b = SampleBuffer(video: format(w, h, pf), bytesPerRow: stride, presentationTime: .zero)
        b.withUnsafeMutableBytes { raw in
            for i in raw.indices { raw[i] = 0xEE }
            for y in 0..<h {
                for x in 0..<w {
                    let p = pixel(x, y)
                    let o = y * stride + x * 4
                    (raw[o], raw[o + 1], raw[o + 2], raw[o + 3]) = (p.0, p.1, p.2, p.3)
                }
            }
        }
        return b
    }

    /// Pixels as (b, g, r, a), row by row, and the padding bytes separately; rows as far apart
    /// as the frame says (an effect given a frame it may not write in place, one from outside
    /// the pipeline, writes into a pooled frame, whose rows may be spaced differently).
    static func pixels(_ b: SampleBuffer) -> (pixels: [[UInt8]], padding: [UInt8]) {
        guard case .rawVideo(let v)? = b.format else { return ([], []) }
        let stride = (try? b.withPixelPlanes { $0[0].bytesPerRow }) ?? v.width * 4
        return b.withUnsafeBytes { raw in
            var px: [[UInt8]] = [], pad: [UInt8] = []
            for y in 0..<v.height {
                for x in 0..<v.width { let o = y * stride + x * 4; px.append([raw[o], raw[o + 1], raw[o + 2], raw[o + 3]]) }
                for o in (y * stride + v.width * 4)..<((y + 1) * stride) where o < raw.count { pad.append(raw[o]) }
            }
            return (px, pad)
        }
    }

    /// A deterministic spread of values, edge cases first.
    static func value(_ x: Int, _ y: Int, _ c: Int) -> UInt8 {
        let edges: [UInt8] = [0, 255, 1, 254, 127, 128]
        let i = (y * 31 + x) * 4 + c
        return i < edges.count ? edges[i] : UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7)
    }
}
