@_spi(Engine) import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// An export of HDR video through an H.264 preset is SDR, as AVFoundation's H.264 presets give it:
/// tone-mapped (`effect.toneMap`) and tagged BT.709, its colours near the chart the HDR was made
/// from; an HEVC preset keeps the HDR tags and the 10 bits, as Apple's HEVC presets keep HDR.
@Suite(.media, .timeLimit(.minutes(5))) struct ExportHDRTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// The first frame of `file` as I420 bytes (ffmpeg's decode, tv range kept).
    func firstFrame(_ file: String) throws -> [UInt8] {
        let raw = folder.appendingPathComponent(UUID().uuidString + ".yuv")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", file, "-frames:v", "1", "-pix_fmt", "yuv420p", "-f", "rawvideo", raw.path])
        return [UInt8](try Data(contentsOf: raw))
    }

    func transfer(_ file: String) throws -> String {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=color_transfer,color_primaries",
                                          "-of", "csv=p=0", file]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An asset's export (a graph: decode → toneMap → encode) and a composition's (the reader
    /// decodes each piece and tone-maps it, CompositionTranscode encodes).
    /// Dolby Vision 8.4 (an iPhone's) is its HLG base layer to an SDR output: the same colours.
    @Test(arguments: [("hlg", false), ("pq", false), ("hlg", true), ("dv", false)]) func anH264PresetGivesSDR(_ kind: String, _ asComposition: Bool) async throws {
        let chart = try HDRTestMedia.makeChart(in: folder)
        let hdr = switch kind {
        case "hlg": try HDRTestMedia.makeHLG(from: chart, in: folder)
        case "dv": try HDRTestMedia.makeDolbyVision84(fromHLG: try HDRTestMedia.makeHLG(from: chart, in: folder), in: folder)
        default: try HDRTestMedia.makePQ(from: chart, in: folder)
        }
        let out = folder.appendingPathComponent("\(kind)-\(asComposition)-sdr.mp4").path
        let asset = try Asset(path: hdr)
        let session: AssetExportSession
        if asComposition {
            let composition = MutableComposition()
            let track = try #require(composition.addMutableTrack(withMediaType: .video))
            let source = try #require(asset.tracks(withMediaType: .video).first)
            try track.insertTimeRange(MediaTimeRange(start: .zero, duration: asset.duration), of: source, in: asset, at: .zero)
            session = try AssetExportSession(asset: composition.composition, preset: .highestQuality)
        } else {
            session = try AssetExportSession(asset: asset, preset: .highestQuality)
        }
        session.outputPath = out
        try await session.export()
        #expect(session.status == .completed)
        #expect(try transfer(out) == "bt709,bt709", "the SDR file says BT.709")
        let c = HDRTestMedia.compare(try firstFrame(out), with: try firstFrame(chart), width: HDRTestMedia.width, height: HDRTestMedia.height)
        let unmapped = HDRTestMedia.compare(try firstFrame(hdr), with: try firstFrame(chart), width: HDRTestMedia.width, height: HDRTestMedia.height)
        // Through H.264 at the preset's rate the chart's flat patches stay within a few ΔE00 of the
        // SDR chart; the HDR signal shown as if it were SDR is far off (6.9 HLG, 13.8 PQ).
        #expect(c.meanDeltaE < 2.5, "mean ΔE00 \(c.meanDeltaE) (unmapped \(unmapped.meanDeltaE)), luma PSNR \(c.psnr) dB")
        #expect(unmapped.meanDeltaE > 5)
        #expect(try dolbyVision(out) == nil, "an SDR file is no Dolby Vision")
    }

    /// The Dolby Vision configuration of `file`'s first track, as the MP4 index states it.
    func dolbyVision(_ file: String) throws -> DolbyVisionConfiguration? {
        IndexedTrack.all(in: try #require(FileBytes(path: file))).first?.dolbyVision
    }

    func packets(_ file: String) throws -> [Substring] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:v", "-c", "copy", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
    }

    /// Dolby Vision 8.4 copied as stored, whole and a range: the `dvvC` byte for byte, and every
    /// packet with its RPU (a whole copy's packets identical), as AVFoundation's passthrough keeps
    /// it; re-encoded by an HEVC preset, it is HLG Main 10 without the box (no RPUs are left).
    @Test func dolbyVisionIsKeptOnPassthroughAndDroppedByAReencode() async throws {
        let dv = try HDRTestMedia.makeDolbyVision84(fromHLG: try HDRTestMedia.makeHLG(from: try HDRTestMedia.makeChart(in: folder), in: folder), in: folder)
        let stated = try #require(try dolbyVision(dv))
        #expect(stated.body == HDRTestMedia.dolbyVision84 && stated.boxType == "dvvC")
        for (name, range) in [("whole.mp4", nil), ("range.mov", MediaTimeRange(start: .zero, duration: MediaTime(seconds: 0.1)))] {
            let out = folder.appendingPathComponent(name).path
            let session = try AssetExportSession(asset: try Asset(path: dv), preset: .passthrough)
            session.outputPath = out
            if let range { session.timeRange = range }
            try await session.export()
            #expect(session.status == .completed)
            #expect(try dolbyVision(out) == stated, "\(name)")
            // (ffprobe's CSV has a field more for the Dolby Vision side data.)
            #expect(try transfer(out).hasPrefix("arib-std-b67,bt2020"), "\(name)")
            if range == nil { #expect(try packets(out) == packets(dv)) }
        }
        let hevc = folder.appendingPathComponent("dv-hevc.mp4").path
        let session = try AssetExportSession(asset: try Asset(path: dv), preset: .hevcHighestQuality)
        session.outputPath = hevc
        try await session.export()
        #expect(try transfer(hevc) == "arib-std-b67,bt2020")
        #expect(try dolbyVision(hevc) == nil)
    }

    /// An asset's export, and a composition's: the chart twice, the second piece of another size
    /// (fitted to the first's, in 10 bits).
    @Test(arguments: [false, true]) func anHEVCPresetKeepsHDR(_ asComposition: Bool) async throws {
        let hdr = try HDRTestMedia.makeHLG(from: try HDRTestMedia.makeChart(in: folder), in: folder)
        let out = folder.appendingPathComponent("hlg-hevc-\(asComposition).mp4").path
        let asset = try Asset(path: hdr)
        let session: AssetExportSession
        if asComposition {
            let small = folder.appendingPathComponent("hlg-small.mkv").path
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", hdr, "-vf", "scale=160:120", "-c:v", "ffv1", "-pix_fmt", "yuv420p10le",
                                             "-color_primaries", "bt2020", "-color_trc", "arib-std-b67", "-colorspace", "bt2020nc", small])
            let composition = MutableComposition()
            let track = try #require(composition.addMutableTrack(withMediaType: .video))
            for (file, at) in [(hdr, MediaTime.zero), (small, asset.duration)] {
                let piece = try Asset(path: file)
                try track.insertTimeRange(MediaTimeRange(start: .zero, duration: piece.duration), of: try #require(piece.tracks(withMediaType: .video).first),
                                          in: piece, at: at)
            }
            session = try AssetExportSession(asset: composition.composition, preset: .hevcHighestQuality)
        } else {
            session = try AssetExportSession(asset: asset, preset: .hevcHighestQuality)
        }
        session.outputPath = out
        try await session.export()
        #expect(session.status == .completed)
        #expect(try transfer(out) == "arib-std-b67,bt2020")
        // And its 10 bits, decoded as 10-bit frames and encoded as HEVC Main 10 (TenBitVideoTests
        // shows that path keeps every level).
        let stream = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile,pix_fmt",
                                                       "-of", "csv=p=0", out]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stream == "Main 10,yuv420p10le", "\(stream)")
    }

    /// A composition of 10-bit pieces keeps their samples, not just the profile: the 10-bit ramp
    /// twice, exported by an HEVC preset at its bit rate, comes back within a level on average
    /// (0.77 here; through 8-bit frames, steps of 4: 1.4, TenBitVideoTests).
    @Test func aCompositionsHEVCExportKeepsTenBitSamples() async throws {
        let ramp = try Asset(path: try HDRTestMedia.makeTenBitRamp(in: folder))
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .video))
        let source = try #require(ramp.tracks(withMediaType: .video).first)
        for at in [MediaTime.zero, ramp.duration] {
            try track.insertTimeRange(MediaTimeRange(start: .zero, duration: ramp.duration), of: source, in: ramp, at: at)
        }
        let out = folder.appendingPathComponent("ramp-composition.mp4").path
        let session = try AssetExportSession(asset: composition.composition, preset: .hevcHighestQuality)
        session.outputPath = out
        try await session.export()
        #expect(session.status == .completed)
        let raw = folder.appendingPathComponent("ramp-composition.yuv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-y", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        var total = 0
        for y in 0..<64 {
            for x in 0..<1024 { total += abs(Int(bytes[2 * (y * 1024 + x)]) | Int(bytes[2 * (y * 1024 + x) + 1]) << 8 - x) }
        }
        let error = Double(total) / Double(64 * 1024)
        #expect(error < 1, "mean error \(error) levels")
    }

    /// The depth a file states decides, HDR or not: a 10-bit SDR HEVC file exports as Main 10,
    /// an 8-bit one as Main.
    @Test(arguments: [("yuv420p10le", "Main 10,yuv420p10le"), ("yuv420p", "Main,yuv420p")])
    func anHEVCPresetKeepsTheStatedDepth(_ pixels: String, _ expected: String) async throws {
        let source = folder.appendingPathComponent("sdr-\(pixels).mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=10:d=1", "-c:v", "libx265",
                                         "-x265-params", "log-level=none", "-pix_fmt", pixels, "-tag:v", "hvc1", "-y", source])
        let out = folder.appendingPathComponent("sdr-\(pixels)-hevc.mp4").path
        let session = try AssetExportSession(asset: try Asset(path: source), preset: .hevcHighestQuality)
        session.outputPath = out
        try await session.export()
        #expect(session.status == .completed)
        let stream = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=profile,pix_fmt",
                                                       "-of", "csv=p=0", out]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stream == expected, "\(pixels): \(stream)")
    }
}
