import Foundation
import Testing
import GraphKitTesting
import MediaContainers
import TestSupport

/// Picture sizes claimed inside the 16384-a-side limit that the decoders refuse (issue 73, class
/// 1): a 10-bit HEVC MP4 whose sample entry and `tkhd` claimed 16384×16300 crashed probe,
/// export and thumbnails (libavcodec refused the caps, decodebin fell back to libde265dec, which
/// corrupted the heap); the same claim in H.264 was called a decoder not installed; an MJPEG
/// whose frames' own headers claimed 37786² or 16385² took 4–5 GB. Each claim is now checked
/// against what the decoders take, wherever it is made (sample entry, Matroska track, JPEG
/// frame), before a decoder sees it.
extension HostileClaimsTests {
    /// The most memory a probe or thumbnails run of a claimed-size file may take.
    static let claimMemoryLimit = 300 << 20

    /// The sweep's codecs, each as ffmpeg's encoder arguments and the container it goes in.
    static let sweptCodecs: [(name: String, arguments: [String], container: String)] = [
        ("h264", ["-c:v", "libx264", "-pix_fmt", "yuv420p"], "mp4"),
        ("hevc8", ["-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p"], "mp4"),
        ("hevc10", ["-c:v", "libx265", "-x265-params", "log-level=none", "-pix_fmt", "yuv420p10le"], "mp4"),
        ("av1", ["-c:v", "libaom-av1", "-cpu-used", "8", "-pix_fmt", "yuv420p"], "mp4"),
        ("vp9", ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-pix_fmt", "yuv420p"], "mp4"),
        ("mjpeg", ["-c:v", "mjpeg", "-pix_fmt", "yuvj420p"], "mov"),
    ]

    /// 2 s of 320×256 video of `codec` (one of ``sweptCodecs``), a key frame a second.
    func encoded(_ codec: String, container: String? = nil) throws -> String {
        let spec = Self.sweptCodecs.first { $0.name == codec }!
        let out = path("\(codec).\(container ?? spec.container)")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x256:rate=25:duration=2", "-g", "25"]
                                        + spec.arguments + [out])
        return out
    }

    /// `good`'s copy at `bad` whose video track's sample entry and `tkhd` claim `width`×`height`.
    static func claimingSize(_ good: String, to bad: String, width: Int, height: Int) throws {
        try CraftedMP4.edited(good, to: bad) { movie in
            try CraftedMP4.track("vide", of: &movie) { track in
                track.box.modify(["mdia", "minf", "stbl", "stsd"]) { stsd in
                    var body = stsd.children[0].body  // the visual sample entry's width and height, at 24 and 26
                    body.replaceSubrange(24..<28, with: [UInt8(width >> 8), UInt8(width & 0xFF), UInt8(height >> 8), UInt8(height & 0xFF)])
                    stsd.children[0].body = body
                }
                track.box.modify(["tkhd"]) { tkhd in  // 16.16 width and height, its last 8 bytes
                    let at = tkhd.body.count - 8
                    tkhd.body.replaceSubrange(at..<(at + 8), with: [UInt8(width >> 8), UInt8(width & 0xFF), 0, 0, UInt8(height >> 8), UInt8(height & 0xFF), 0, 0])
                }
            }
        }
    }

    /// probe and the thumbnails graph on `file`, measured.
    func probeAndThumbnails(_ file: String) throws -> [(name: String, result: Graphctl.Result, peak: Int)] {
        let commands: [(String, [String])] = [
            ("probe", ["probe", file]),
            ("thumbnails", ["run", Graphctl.graph("thumbnails.json"), "--quiet", "--set", "thumbs.path=\(file)",
                            "--set", "thumbs.count=3", "--set", "thumbs.folder=\(file).th", "--set", "thumbs.sprite=\(file).th/s.jpg",
                            "--set", "thumbs.vtt=\(file).th/s.vtt"]),
        ]
        return try commands.map { name, arguments in
            let (result, peak) = try measured(arguments)
            print("\(name) on \((file as NSString).lastPathComponent): exit \(result.status), \(peak >> 20) MiB")
            return (name, result, peak)
        }
    }

    /// The window swept for each codec: a claim every decoder takes (16000², the pictures
    /// being 320×256) is decoded; 16384×16300 and 16384² (past libavcodec's (w+128)(h+128) <
    /// 2²⁸) and 16385 wide (past the side limit) are refused by name (66 from probe, 70 from the
    /// graph). Never a crash, never "not installed", never more than 300 MB.
    @Test(arguments: ["h264", "hevc8", "hevc10", "av1", "vp9", "mjpeg"])
    func aClaimedSizeIsDecodedOrRefusedByNameNeverCrashing(_ codec: String) throws {
        let good = try encoded(codec)
        let sizes: [(Int, Int, String?)] = [
            (16000, 16000, nil),
            (16384, 16300, "more than the video decoders here take"),
            (16384, 16384, "more than the video decoders here take"),
            (16385, 256, "exceeds the limit of 16384x16384"),
        ]
        for (width, height, refusal) in sizes {
            let bad = path("\(codec)-\(width)x\(height).\((good as NSString).pathExtension)")
            try Self.claimingSize(good, to: bad, width: width, height: height)
            for (command, r, peak) in try probeAndThumbnails(bad) {
                let what = "\(codec) claiming \(width)x\(height), \(command)"
                #expect(r.status < 128, "\(what): killed: \(r.stderr)")
                #expect(!r.stderr.contains("not installed"), "\(what): \(r.stderr)")
                #expect(peak < Self.claimMemoryLimit, "\(what): \(peak >> 20) MiB")
                if let refusal {
                    #expect([66, 70].contains(r.status) && r.stderr.contains("claims frames of \(width)x\(height)") && r.stderr.contains(refusal),
                            "\(what): exit \(r.status): \(r.stderr)")
                } else {
                    #expect(r.status == 0, "\(what): exit \(r.status): \(r.stderr)")
                }
            }
        }
    }

    /// An MJPEG whose sample entry says 320×256 and whose frames' own headers (SOF) claim
    /// 37786² (past the side limit), 16384² (past the decoders' bound) or 8000² (inside both, but
    /// more than a frame of a few KB can hold): refused at the decoder's input, by name, small
    /// (66: the thumbnails node and probe read the file's streams before anything else).
    @Test(arguments: [(37786, "exceeds the limit of 16384x16384"), (16384, "more than the video decoders here take"),
                      (8000, "cannot hold")])
    func aJPEGFrameClaimingMoreThanItCanHoldIsRefused(_ side: Int, _ refusal: String) throws {
        let good = try encoded("mjpeg"), bad = path("sof-\(side).mov")
        // Each frame's SOF0: FF C0, length 17, 8 bits, height 256, width 320.
        let sof: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0x00, 0x01, 0x40]
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        var patched = 0, i = 0
        while i + sof.count <= bytes.count {
            if bytes[i] == 0xFF, Array(bytes[i..<(i + sof.count)]) == sof {
                bytes.replaceSubrange((i + 5)..<(i + 9), with: [UInt8(side >> 8), UInt8(side & 0xFF), UInt8(side >> 8), UInt8(side & 0xFF)])
                patched += 1
            }
            i += 1
        }
        #expect(patched == 50, "frames whose SOF was found: \(patched)")
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        let runs = try probeAndThumbnails(bad)
        for (command, r, peak) in runs {
            #expect(r.status < 128, "\(command): killed: \(r.stderr)")
            #expect(peak < Self.claimMemoryLimit, "\(command): \(peak >> 20) MiB")
        }
        let thumbnails = try #require(runs.last)
        #expect([66, 70].contains(thumbnails.result.status) && thumbnails.result.stderr.contains("claims frames of \(side)x\(side)")
                && thumbnails.result.stderr.contains(refusal), "exit \(thumbnails.result.status): \(thumbnails.result.stderr)")
    }

    /// A Matroska H.264 whose track claims 16384×16300 (its PixelWidth and PixelHeight): the
    /// parser takes the container's word, and the decoder's input refuses it by name; it was
    /// "decoder not installed".
    @Test func aMatroskaTrackClaimPastTheDecodersIsRefusedByName() throws {
        let good = try encoded("h264", container: "mkv"), bad = path("claim.mkv")
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        // PixelWidth (B0) 320 and PixelHeight (BA) 256, each two bytes.
        func patch(_ element: [UInt8], to value: Int) throws {
            let at = try #require((0..<(bytes.count - element.count)).first { Array(bytes[$0..<($0 + element.count)]) == element })
            bytes[at + 2] = UInt8(value >> 8)
            bytes[at + 3] = UInt8(value & 0xFF)
        }
        try patch([0xB0, 0x82, 0x01, 0x40], to: 16384)
        try patch([0xBA, 0x82, 0x01, 0x00], to: 16300)
        try Data(bytes).write(to: URL(fileURLWithPath: bad))
        for (command, r, peak) in try probeAndThumbnails(bad) {
            #expect(r.status < 128, "\(command): killed: \(r.stderr)")
            #expect(peak < Self.claimMemoryLimit, "\(command): \(peak >> 20) MiB")
            #expect([66, 70].contains(r.status) && r.stderr.contains("claims frames of 16384x16300")
                    && r.stderr.contains("more than the video decoders here take") && !r.stderr.contains("not installed"),
                    "\(command): exit \(r.status): \(r.stderr)")
        }
    }
}
