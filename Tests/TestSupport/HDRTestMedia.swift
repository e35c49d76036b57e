import Foundation
import GraphKitTesting
import MediaContainers

/// HDR test media whose right SDR answer is known: ffmpeg's `smptehdbars` chart (SDR, BT.709) and
/// the same chart made HLG and PQ (BT.2020, 10-bit, SDR white at BT.2408's 203 nits), and the
/// measures that compare an SDR result with the chart (`effect.toneMap`, thumbnails).
public enum HDRTestMedia {
    public static let (width, height) = (320, 240)

    /// The chart as 8-bit BT.709 I420 in FFV1 (lossless), tagged.
    public static func makeChart(in folder: URL) throws -> String {
        let sdr = folder.appendingPathComponent("sdr.mkv").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "smptehdbars=size=\(width)x\(height):rate=10",
                                             "-frames:v", "2", "-vf", "format=yuv420p", "-c:v", "ffv1",
                                             "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709",
                                             "-color_range", "tv", sdr])
        return sdr
    }

    static let hdrTags = ["-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-color_range", "tv", "-c:v", "ffv1"]

    /// PQ: zscale all the way (PQ has no OOTF): SDR display light, SDR white at 203 nits.
    public static func makePQ(from sdr: String, in folder: URL) throws -> String {
        let pq = folder.appendingPathComponent("pq.mkv").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", sdr, "-vf",
                                             "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le",
                                             "-color_trc", "smpte2084"] + hdrTags + [pq])
        return pq
    }

    /// HLG: zscale takes the chart to linear display light in BT.2020 (SDR white 1) and from HLG
    /// R'G'B' to 10-bit Y'CbCr; the step between is BT.2100's, done here: display light at 203 of
    /// the nominal 1000 nits, the inverse OOTF on luminance (Ys = Yd^(1/1.2), E = Fd · Ys / Yd)
    /// and the HLG OETF. Not zscale's own: zimg 3.0.4 applies HLG's OOTF to each channel (a 75%
    /// red bar's E measured (0.1008, 0.0160, 0.0048), each channel's Fd^(1/1.2)), where BT.2100
    /// applies it on luminance, as phones' HLG is shown.
    public static func makeHLG(from sdr: String, in folder: URL) throws -> String {
        let linear = folder.appendingPathComponent("linear.gbrpf32"), signal = folder.appendingPathComponent("hlg.gbrpf32")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", sdr, "-vf",
                                             "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=linear:p=bt2020,format=gbrpf32le",
                                             "-f", "rawvideo", linear.path])
        var data = try Data(contentsOf: linear)
        let plane = width * height
        data.withUnsafeMutableBytes { raw in
            let f = raw.bindMemory(to: Float.self)
            for frame in 0..<(f.count / (3 * plane)) {
                let base = frame * 3 * plane
                for i in 0..<plane {
                    // gbrp: planes G, B, R
                    let (g, b, r) = (Double(f[base + i]) * 0.203, Double(f[base + plane + i]) * 0.203, Double(f[base + 2 * plane + i]) * 0.203)
                    let yd = max(0.2627 * r + 0.6780 * g + 0.0593 * b, 1e-12)
                    let k = pow(yd, 1 / 1.2) / yd
                    f[base + i] = Float(hlgOETF(g * k))
                    f[base + plane + i] = Float(hlgOETF(b * k))
                    f[base + 2 * plane + i] = Float(hlgOETF(r * k))
                }
            }
        }
        try data.write(to: signal)
        let hlg = folder.appendingPathComponent("hlg.mkv").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "gbrpf32le", "-s", "\(width)x\(height)",
                                             "-r", "10", "-i", signal.path, "-vf",
                                             "zscale=tin=arib-std-b67:pin=bt2020:t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv,format=yuv420p10le",
                                             "-color_trc", "arib-std-b67"] + hdrTags + [hlg])
        return hlg
    }

    /// What an iPhone records, Dolby Vision profile 8.4: `hlg` (from ``makeHLG(from:in:)``) as HEVC
    /// Main 10 (x265, HLG in its VUI), a stand-in RPU (a NAL unit of type 62, which a decoder
    /// without Dolby Vision skips) after each picture, in an MP4 whose `hvc1` entry has the `dvvC`
    /// ``dolbyVision84`` (profile 8, level 5, RPU and base layer, compatibility 4: HLG). ffmpeg
    /// 5.1 writes no `dvvC` of its own: the box is put into the sample entry here (the index is
    /// after the samples, so no offset moves).
    public static func makeDolbyVision84(fromHLG hlg: String, in folder: URL) throws -> String {
        let annexB = folder.appendingPathComponent("dv.hevc")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", hlg, "-c:v", "libx265", "-pix_fmt", "yuv420p10le",
                                             "-x265-params", "log-level=error:crf=10:keyint=10:bframes=0",
                                             "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc",
                                             "-color_range", "tv", "-f", "hevc", annexB.path])
        // After each VCL NAL unit (types 0 to 31), an unspecified one of type 62 (header 7C 01).
        let stream = [UInt8](try Data(contentsOf: annexB))
        var starts: [Int] = []
        var i = 0
        while i + 3 <= stream.count {
            if stream[i] == 0, stream[i + 1] == 0, stream[i + 2] == 1 { starts.append(i + 3); i += 3 } else { i += 1 }
        }
        var out: [UInt8] = []
        for (k, start) in starts.enumerated() {
            var end = k + 1 < starts.count ? starts[k + 1] - 3 : stream.count
            while end > start, stream[end - 1] == 0 { end -= 1 }  // a four-byte start code's leading zero
            out += [0, 0, 0, 1] + stream[start..<end]
            if (stream[start] >> 1) & 0x3F < 32 { out += [0, 0, 0, 1, 0x7C, 0x01, 0x19, 0x08, 0x09, 0x55, 0xAA, 0x80] }
        }
        try Data(out).write(to: annexB)
        let plain = folder.appendingPathComponent("dv-plain.mp4"), dv = folder.appendingPathComponent("dv84.mp4")
        // Each picture stamped N/10 s by setts: ffmpeg 7's raw HEVC demuxer gives a copy no
        // times at all (every packet at 0). No B-frames, so decode order is display order.
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-framerate", "10", "-f", "hevc", "-i", annexB.path, "-c", "copy",
                                             "-bsf:v", "setts=ts=N/TB/10:duration=1/TB/10", "-tag:v", "hvc1",
                                             "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc",
                                             "-color_range", "tv", plain.path])
        var boxes = try MP4Box.parse([UInt8](try Data(contentsOf: plain))[...])
        guard let m = boxes.firstIndex(where: { $0.type == "moov" }), boxes.lastIndex(where: { $0.type == "mdat" }).map({ $0 < m }) == true else {
            throw CPULoad.Failure(description: "ffmpeg wrote the index of \(plain.path) before its samples")
        }
        boxes[m].modify(["trak", "mdia", "minf", "stbl", "stsd"]) { stsd in
            var entries = stsd.children
            entries[0] = MP4Box(type: entries[0].type, body: entries[0].body + MP4Box(type: "dvvC", body: dolbyVision84).bytes)
            stsd.children = entries
        }
        try Data(boxes.flatMap(\.bytes)).write(to: dv)
        return dv.path
    }

    /// The DOVIDecoderConfigurationRecord of ``makeDolbyVision84(fromHLG:in:)``: version 1.0,
    /// profile 8, level 5, RPU and base layer present, no enhancement layer, compatibility ID 4.
    public static let dolbyVision84: [UInt8] = [1, 0, 0x10, 0x2D, 0x40] + [UInt8](repeating: 0, count: 19)

    /// A lossless 10-bit HEVC MP4 of 1024×64, 5 frames at 25 fps, whose luma rows are the ramp
    /// 0…1023 (x): every 10-bit level once a row, which any 8-bit step turns into steps of 4.
    public static func makeTenBitRamp(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("ramp10.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "nullsrc=s=1024x64:r=25,format=yuv420p10le,geq=lum='X':cb=512:cr=512",
                                         "-frames:v", "5", "-c:v", "libx265", "-x265-params", "lossless=1:log-level=none",
                                         "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-y", path])
        return path
    }

    public static func hlgOETF(_ e: Double) -> Double {
        let a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a)
        return e <= 1.0 / 12 ? (3 * max(e, 0)).squareRoot() : a * log(12 * e - b) + c
    }

    public struct Comparison {
        public var psnr: Double
        public var meanDeltaE: Double
        public var worstDeltaE: Double
        public var patches: Int
    }

    /// Luma PSNR over the frame; ΔE00 between the mean colours of each 8x8 block that is flat in
    /// the reference (every sample within 2 of the others) and a colour an SDR display can show
    /// (R'G'B' within 0...1: the chart's -I, +Q and PLUGE blacks are not).
    public static func compare(_ out: [UInt8], with ref: [UInt8], width w: Int, height h: Int) -> Comparison {
        let luma = w * h, chroma = (w / 2) * (h / 2)
        var squares = 0.0
        for i in 0..<luma { let d = Double(out[i]) - Double(ref[i]); squares += d * d }
        let psnr = squares == 0 ? .infinity : 10 * log10(255 * 255 / (squares / Double(luma)))
        var total = 0.0, worst = 0.0, patches = 0
        for by in stride(from: 0, to: h, by: 8) {
            for bx in stride(from: 0, to: w, by: 8) {
                func block(_ frame: [UInt8]) -> (y: [Double], u: [Double], v: [Double]) {
                    var y: [Double] = [], u: [Double] = [], v: [Double] = []
                    for dy in 0..<8 { for dx in 0..<8 { y.append(Double(frame[(by + dy) * w + bx + dx])) } }
                    for dy in 0..<4 {
                        for dx in 0..<4 {
                            let c = (by / 2 + dy) * (w / 2) + bx / 2 + dx
                            u.append(Double(frame[luma + c]))
                            v.append(Double(frame[luma + chroma + c]))
                        }
                    }
                    return (y, u, v)
                }
                let r = block(ref), o = block(out)
                let flat = [r.y, r.u, r.v].allSatisfy { ($0.max()! - $0.min()!) <= 2 }
                func mean(_ a: [Double]) -> Double { a.reduce(0, +) / Double(a.count) }
                let (ry, ru, rv) = (mean(r.y), mean(r.u), mean(r.v))
                let rgb = ColorDifference.rgb709(y: ry, cb: ru, cr: rv)
                guard flat, [rgb.r, rgb.g, rgb.b].allSatisfy({ $0 >= -0.01 && $0 <= 1.01 }) else { continue }
                let e = ColorDifference.deltaE2000(ColorDifference.lab709(y: ry, cb: ru, cr: rv),
                                                   ColorDifference.lab709(y: mean(o.y), cb: mean(o.u), cr: mean(o.v)))
                total += e
                worst = max(worst, e)
                patches += 1
            }
        }
        return Comparison(psnr: psnr, meanDeltaE: patches == 0 ? .infinity : total / Double(patches), worstDeltaE: worst, patches: patches)
    }

    /// The same measures on two BGRA pictures (packed rows): luma PSNR on BT.709's Y' of R'G'B',
    /// ΔE00 on the 8x8 blocks flat in the reference (every channel within 2).
    public static func compareBGRA(_ out: [UInt8], with ref: [UInt8], width w: Int, height h: Int) -> Comparison {
        func luma(_ p: [UInt8], _ i: Int) -> Double { 0.2126 * Double(p[4 * i + 2]) + 0.7152 * Double(p[4 * i + 1]) + 0.0722 * Double(p[4 * i]) }
        var squares = 0.0
        for i in 0..<(w * h) { let d = luma(out, i) - luma(ref, i); squares += d * d }
        let psnr = squares == 0 ? .infinity : 10 * log10(255 * 255 / (squares / Double(w * h)))
        var total = 0.0, worst = 0.0, patches = 0
        for by in stride(from: 0, to: h - 7, by: 8) {
            for bx in stride(from: 0, to: w - 7, by: 8) {
                func mean(_ p: [UInt8], _ c: Int) -> (Double, Double) {
                    var s = 0.0, lo = 255.0, hi = 0.0
                    for dy in 0..<8 { for dx in 0..<8 { let v = Double(p[4 * ((by + dy) * w + bx + dx) + c]); s += v; lo = min(lo, v); hi = max(hi, v) } }
                    return (s / 64, hi - lo)
                }
                let r = (0..<3).map { mean(ref, $0) }, o = (0..<3).map { mean(out, $0) }
                guard r.allSatisfy({ $0.1 <= 2 }) else { continue }
                let e = ColorDifference.deltaE2000(ColorDifference.labRGB(r: r[2].0, g: r[1].0, b: r[0].0),
                                                   ColorDifference.labRGB(r: o[2].0, g: o[1].0, b: o[0].0))
                total += e
                worst = max(worst, e)
                patches += 1
            }
        }
        return Comparison(psnr: psnr, meanDeltaE: patches == 0 ? .infinity : total / Double(patches), worstDeltaE: worst, patches: patches)
    }
}
