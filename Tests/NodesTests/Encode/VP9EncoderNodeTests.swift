import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct VP9EncoderNodeTests {
    /// In MP4: VP9 profile 0, every frame decoded, keyframes no further apart than asked.
    @Test(.timeLimit(.minutes(10))) func inMP4IsProfile0WithEveryFrame() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mp4 = folder.appendingPathComponent("vp9.mp4").path
        let report = try EncodedMediaChecks.encodeVideo(with: "encode.vp9", params: #""keyframeInterval": 15, "speed": 8"#,
                                                        width: 96, height: 64, frames: 45, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(mp4, "v")
        #expect(facts["codec_name"] == "vp9" && facts["profile"] == "Profile 0" && facts["codec_tag_string"] == "vp09", "\(facts)")
        #expect(facts["nb_read_frames"] == "45", "\(facts)")
        let keys = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags", "-of", "csv=p=0", mp4])
            .split(separator: "\n").enumerated().filter { $0.element.hasPrefix("K") }.map(\.offset)
        #expect(keys.first == 0 && zip(keys, keys.dropFirst() + [45]).allSatisfy { $1 - $0 <= 15 }, "\(keys)")
    }

    /// Every frame reaches the file, the last ones included: with libvpx's lookahead GStreamer
    /// 1.22's vp9enc lost some at the end (42 of 45 moving-ball frames in MP4 at 256 kb/s).
    @Test(.timeLimit(.minutes(10)), arguments: ["ball", "smpte"])
    func everyFrameReachesTheFile(pattern: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mp4 = folder.appendingPathComponent("vp9.mp4").path
        let report = try EncodedMediaChecks.encodeVideo(with: "encode.vp9", params: #""speed": 8, "bitrate": 256000"#, width: 96, height: 64, frames: 45,
                                                        pattern: pattern, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        #expect(try EncodedMediaChecks.probe(mp4, "v")["nb_read_frames"] == "45")
    }

    @Test(.timeLimit(.minutes(10))) func qualityEncodesEveryFrame() throws {
        let h = try NodeHarness(#"{ "type": "encode.vp9", "params": { "quality": 40, "speed": 8 } }"#)
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 0.5, "live": false, "pattern": "ball" } }"#)
        try h.push(try source.pullAll())
        let out = try h.pullAll()
        #expect(out.count == 15)
        #expect(out.first?.format == .video(.vp9, width: 64, height: 48))
        #expect(out.first?.flags.contains(.keyframe) == true)
    }

    /// Each profile: the frames libvpx is given are the profile's layout and depth, and ffprobe
    /// reads the profile and pixel format back from the MP4 (vpcC) and the WebM, every frame there.
    @Test(.timeLimit(.minutes(10)), arguments: [
        (0, nil, "Profile 0", "yuv420p"), (1, nil, "Profile 1", "yuv444p"), (2, nil, "Profile 2", "yuv420p10le"),
        (2, 12, "Profile 2", "yuv420p12le"), (3, nil, "Profile 3", "yuv444p10le"), (3, 12, "Profile 3", "yuv444p12le"),
    ] as [(Int, Int?, String, String)])
    func eachProfileCodesItsLayoutAndDepth(profile: Int, bitDepth: Int?, name: String, pixelFormat: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let depth = bitDepth.map { #", "bitDepth": \#($0)"# } ?? ""
        for file in ["vp9.mp4", "vp9.webm"] {
            let out = folder.appendingPathComponent(file).path
            let report = try EncodedMediaChecks.encodeVideo(with: "encode.vp9", params: #""speed": 8, "profile": \#(profile)\#(depth)"#,
                                                            width: 96, height: 64, frames: 15, into: file.hasSuffix(".webm") ? "sink.webm" : "sink.mp4", path: out)
            try #require(report.status == .completed, "\(file): \(report.error?.description ?? "")")
            let facts = try EncodedMediaChecks.probe(out, "v")
            #expect(facts["codec_name"] == "vp9" && facts["profile"] == name && facts["pix_fmt"] == pixelFormat, "\(file): \(facts)")
            #expect(facts["nb_read_frames"] == "15", "\(file): \(facts)")
        }
    }

    /// 4:4:4 halves no side: an odd frame size encodes (4:2:0 refuses it, saying how to crop).
    @Test(.timeLimit(.minutes(10))) func anOddSizeEncodesIn444() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("odd.webm").path
        let report = try EncodedMediaChecks.encodeVideo(with: "encode.vp9", params: #""speed": 8, "profile": 1"#, width: 65, height: 49, frames: 5,
                                                        into: "sink.webm", path: out)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(out, "v")
        #expect(facts["width"] == "65" && facts["height"] == "49" && facts["pix_fmt"] == "yuv444p", "\(facts)")
        let refused = try EncodedMediaChecks.encodeVideo(with: "encode.vp9", params: #""speed": 8"#, width: 65, height: 49, frames: 5,
                                                         into: "sink.webm", path: out)
        #expect(refused.status == .failed)
        #expect(refused.error?.description.contains("65x49 video cannot be encoded: VP9 (4:2:0) needs an even width and height here") == true,
                "\(refused.error?.description ?? "")")
    }

    @Test func parametersOutOfRangeAreRefusedAtTheirPath() {
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "v": { "type": "encode.vp9", "params": { "profile": 1, "bitDepth": 10 } } } }"#)
                    .contains { $0.hasPrefix("nodes.v.params.bitDepth: ") && $0.contains("profiles 0 and 1 are 8-bit") })
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "v": { "type": "encode.vp9", "params": { "profile": 4 } } } }"#)
                    .contains("nodes.v.params.profile: 4 is out of range (0 to 3)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "v": { "type": "encode.vp9", "params": { "profile": 2, "bitDepth": 11 } } } }"#)
                    .contains { $0.hasPrefix("nodes.v.params.bitDepth: 11 ") })
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "v": { "type": "encode.vp9", "params": { "speed": 9 } } } }"#)
                    .contains("nodes.v.params.speed: 9 is out of range (0 to 8)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "v": { "type": "encode.vp9", "params": { "quality": 64 } } } }"#)
                    .contains("nodes.v.params.quality: 64 is out of range (0 to 63)"))
    }
}
