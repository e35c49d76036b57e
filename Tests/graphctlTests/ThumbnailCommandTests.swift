import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// `graphctl thumbnail IN OUT`: the same command for every photo format and for a movie, each
/// picture upright and fitted, checked against ffmpeg's own pictures of the same source; and
/// every refusal with its exit status, an earlier OUT left as it was.
@Suite(.media, .timeLimit(.minutes(5))) struct ThumbnailCommandTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func ffmpeg(_ arguments: [String]) throws { _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y"] + arguments) }

    /// BGRA pixels and size of a picture file, as ffmpeg reads it.
    func pixels(_ file: String) throws -> (bytes: [UInt8], width: Int, height: Int) {
        let size = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", file])
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        try ffmpeg(["-i", file, "-f", "rawvideo", "-pix_fmt", "bgra", file + ".bgra"])
        return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: file + ".bgra"))), size[0], size[1])
    }

    func largestDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return 256 }
        return zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    /// PSNR of the colour channels of two BGRA pictures of one size.
    func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return 0 }
        var sum = 0.0, n = 0.0
        for i in a.indices where i % 4 != 3 {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
            n += 1
        }
        return sum == 0 ? .infinity : 10 * log10(255 * 255 / (sum / n))
    }

    @Test func everyPhotoFormatGivesItsPictureUprightAndTheSameAsFFmpegs() throws {
        // The source: a 96 × 64 pattern; the reference: it turned a quarter clockwise (EXIF 6).
        let png = path("src.png"), turned = path("turned.png")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=96x64", "-frames:v", "1", png])
        try ffmpeg(["-i", png, "-vf", "transpose=1", turned])
        let reference = try pixels(turned)
        // Lossless files that say orientation 6: a TIFF (its tag), a WebP (its EXIF), a PNG (eXIf).
        let tif = path("o.tif"), webp = path("o.webp"), webpPlain = path("plain.webp"), exif = path("o.exif")
        try ffmpeg(["-i", png, "-pix_fmt", "rgb24", tif])
        _ = try TestMedia.runTool("tiffset", ["-s", "274", "6", tif])
        var tags = EXIFBuilder(little: true)
        tags.primary = [(0x0112, .shorts([6]))]
        try Data(tags.bytes()).write(to: URL(fileURLWithPath: exif))
        _ = try TestMedia.runTool("cwebp", ["-quiet", "-lossless", png, "-o", webpPlain])
        _ = try TestMedia.runTool("webpmux", ["-set", "exif", exif, webpPlain, "-o", webp])
        for input in [tif, webp] {
            let out = path(URL(fileURLWithPath: input).lastPathComponent + ".png")
            let r = try Graphctl.run("thumbnail", input, out, "--size", "96")
            #expect(r.status == 0, "\(input): \(r.stderr)")
            let got = try pixels(out)
            #expect(got.width == 64 && got.height == 96, "\(input)")
            #expect(largestDifference(got.bytes, reference.bytes) == 0, "\(input)")
        }
        // A JPEG saying orientation 6 (decoded by GStreamer, turned by its EXIF): within JPEG's loss.
        let jpeg = path("o.jpg")
        try ffmpeg(["-i", png, "-q:v", "2", jpeg])
        _ = try TestMedia.runTool("exiftool", ["-q", "-overwrite_original", "-Orientation#=6", jpeg])
        let r = try Graphctl.run("thumbnail", jpeg, path("jpeg.png"), "--size", "96")
        #expect(r.status == 0, "\(r.stderr)")
        let got = try pixels(path("jpeg.png"))
        #expect(got.width == 64 && got.height == 96)
        #expect(psnr(got.bytes, reference.bytes) > 30)
    }

    @Test func aHEICAGIFAndAMovieFitTheSizeAsked() throws {
        let png = path("p.png"), heic = path("p.heic"), gif = path("p.gif")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=640x480", "-frames:v", "1", png])
        _ = try TestMedia.runTool("heif-enc", ["-q", "60", "-t", "160", "-o", heic, png])
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=200x100:d=0.3", "-vf", "split[a][b];[a]palettegen[p];[b][p]paletteuse", gif])
        let movie = try RotatedVideo.make(90, in: folder)  // 160 × 120 stored, shown 120 × 160
        for (input, size, expected) in [(heic, "120", (120, 90)), (heic, "300", (300, 225)), (gif, "50", (50, 25)), (movie, "80", (60, 80))] {
            let out = path("t-\(size)-\(URL(fileURLWithPath: input).lastPathComponent).jpg")
            let r = try Graphctl.run("thumbnail", input, out, "--size", size)
            #expect(r.status == 0, "\(input): \(r.stderr)")
            let got = try pixels(out)
            #expect(got.width == expected.0 && got.height == expected.1, "\(input) at \(size): \(got.width) × \(got.height)")
        }
        // --at past the end takes the last picture, not a failure.
        #expect(try Graphctl.run("thumbnail", movie, path("late.jpg"), "--at", "99").status == 0)
    }

    @Test func refusalsNameTheFaultAndLeaveAnEarlierFileAsItWas() throws {
        let out = path("kept.jpg")
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: out))
        func refused(_ arguments: [String], _ status: Int32, _ said: String) throws {
            let r = try Graphctl.run(["thumbnail"] + arguments)
            #expect(r.status == status, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(said), "\(arguments): \(r.stderr)")
        }
        try refused([path("missing.heic"), out], 66, "no such file")
        try refused([folder.path, out], 66, "not a regular file")
        #expect(mkfifo(path("pipe.heic"), 0o600) == 0)
        try refused([path("pipe.heic"), out], 66, "not a regular file")
        try refused([path("missing.heic"), path("x.bmp")], 64, "does not end in .jpg, .jpeg or .png")
        try refused([path("missing.heic"), out, "--size", "0"], 64, "a size of 0")
        // A PNG of 66 bytes claiming 16000 × 16000: refused before GStreamer's decoder allocates.
        var bomb: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        bomb += [0, 0, 0x3E, 0x80, 0, 0, 0x3E, 0x80, 8, 6, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 33)
        try Data(bomb).write(to: URL(fileURLWithPath: path("bomb.png")))
        try refused([path("bomb.png"), out], 66, "more than its \(bomb.count) bytes can hold")
        // A damaged HEIC: the structure's reason, naming the file.
        try Data("....ftypheic".utf8 + [UInt8](repeating: 7, count: 64)).write(to: URL(fileURLWithPath: path("bad.heic")))
        try refused([path("bad.heic"), out], 66, "bad.heic")
        let png = path("same.png")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=32x32", "-frames:v", "1", png])
        try refused([png, png], 65, "is the file read")
        #expect(try String(contentsOf: URL(fileURLWithPath: out), encoding: .utf8) == "earlier")
        #expect(!FileManager.default.fileExists(atPath: path(".kept.jpg.partial")))
    }

    /// A signal while giflib decodes a large frame in its child (about 5 s): 130 at once, the
    /// child gone with graphctl, an earlier OUT as it was.
    @Test func aSignalStopsTheDecodeAndItsChildAtOnce() throws {
        let tif = path("big.gif"), out = path("big.jpg")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=8000x8000", "-frames:v", "1", tif])
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: out))
        let run = try Graphctl.start(["thumbnail", tif, out])
        // The decoding process: a child of graphctl with its command line (forked, not exec'd).
        let pid = run.processIdentifier
        let line = { (p: pid_t) in (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(p)/cmdline"))) ?? Data() }
        var children: [pid_t] = []
        for _ in 0..<500 where children.isEmpty {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            children = tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/children", encoding: .utf8) }
                .joined(separator: " ").split(separator: " ").compactMap { pid_t($0) }.filter { line($0) == line(pid) }
            if children.isEmpty { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(!children.isEmpty, "no decoding process within 5 s")
        let stop = run.stop(by: SIGINT)
        #expect(stop.result.status == 130, "\(stop.result.stderr)")
        #expect(stop.taken < 1, "\(stop.description)")
        Thread.sleep(forTimeInterval: 0.2)
        for child in children {
            // Gone, or dead and not yet reaped by whoever inherited it.
            let stat = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? ""
            let state = stat.split(separator: ")").last?.split(separator: " ").first
            #expect(stat.isEmpty || state == "Z", "the decoding process \(child) outlived graphctl: \(stat)")
        }
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "earlier")
    }
}
