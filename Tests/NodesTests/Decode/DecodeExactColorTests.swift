import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// `decode`'s `exactColor` (issue 71): BGRA in the file's colours, and an RGB picture unchanged.
@Suite(.media) struct DecodeExactColorTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// The first frame of `file` decoded to BGRA, `exactColor` as given, with packed rows.
    func firstFrame(_ file: String, exactColor: Bool) throws -> SampleBuffer {
        let frames = try DecodeNodeTests.decodedFrames(file, params: #""pixelFormat": "bgra", "exactColor": \#(exactColor)"#)
        return try ThumbnailPicker.packed(try #require(frames.first), fittingIn: (0, 0), at: .zero)
    }

    /// Colour detail in BT.709 limited and BT.601 full range, at a size that is not a multiple of
    /// 16: at least 35 dB from ffmpeg's zscale of the frame with the file's matrix, range and
    /// chroma siting (the default fast path measured 24 dB).
    @Test(arguments: [("bt709", "tv"), ("bt601", "pc")]) func framesAreTheFilesColours(_ color: (String, String)) throws {
        let file = try ColorFidelity.video("testsrc2", width: 318, height: 178, matrix: color.0, range: color.1, in: folder)
        let reference = try ColorFidelity.anchor(file, at: 0, matrix: color.0, range: color.1, size: nil, in: folder)
        let exact = ColorFidelity.psnr(bgra: try firstFrame(file, exactColor: true).bytes, rgb: reference, width: 318) ?? 0
        let fast = ColorFidelity.psnr(bgra: try firstFrame(file, exactColor: false).bytes, rgb: reference, width: 318) ?? 0
        print("decode \(color): exactColor \(exact) dB, default \(fast) dB")
        #expect(exact >= 35, "\(color): \(exact) dB")
    }

    /// An RGB picture (a PNG) passes through exactColor's 16-bit RGB step byte for byte.
    @Test func anRGBPictureIsUnchanged() throws {
        let png = folder.appendingPathComponent("chart.png").path, raw = folder.appendingPathComponent("chart.bgra").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=318x178", "-frames:v", "1", png])
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "bgra", raw])
        let expected = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let got = try firstFrame(png, exactColor: true).bytes
        #expect(got.count == expected.count)
        // Alpha aside (the PNG has none; GStreamer and ffmpeg both make it opaque).
        let differing = zip(got, expected).enumerated().filter { $0.offset % 4 != 3 && $0.element.0 != $0.element.1 }.count
        #expect(differing == 0, "\(differing) bytes differ")
    }
}
