import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct AV1EncoderNodeTests {
    /// In MP4: AV1 Main, every frame decoded (a tiny clip: libaom is slow).
    @Test(.timeLimit(.minutes(10))) func inMP4IsMainWithEveryFrame() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mp4 = folder.appendingPathComponent("av1.mp4").path
        let report = try EncodedMediaChecks.encodeVideo(with: "encode.av1", params: #""keyframeInterval": 5, "speed": 10"#,
                                                        width: 64, height: 48, frames: 12, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(mp4, "v")
        #expect(facts["codec_name"] == "av1" && facts["profile"] == "Main" && facts["codec_tag_string"] == "av01", "\(facts)")
        #expect(facts["nb_read_frames"] == "12", "\(facts)")
        #expect(abs((facts["duration"].flatMap(Double.init) ?? 0) - 0.4) < 0.001, "\(facts)")
    }

    /// Each profile: libaom is given frames of the profile's layout, and ffprobe reads the
    /// profile and pixel format back from the MP4 (av1C) and the WebM, every frame there.
    @Test(.timeLimit(.minutes(10)), arguments: [("main", "Main", "yuv420p"), ("high", "High", "yuv444p"), ("professional", "Professional", "yuv422p")])
    func eachProfileCodesItsLayout(profile: String, name: String, pixelFormat: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for file in ["av1.mp4", "av1.webm"] {
            let out = folder.appendingPathComponent(file).path
            let report = try EncodedMediaChecks.encodeVideo(with: "encode.av1", params: #""speed": 10, "profile": "\#(profile)""#,
                                                            width: 64, height: 48, frames: 6, into: file.hasSuffix(".webm") ? "sink.webm" : "sink.mp4", path: out)
            try #require(report.status == .completed, "\(file): \(report.error?.description ?? "")")
            let facts = try EncodedMediaChecks.probe(out, "v")
            #expect(facts["codec_name"] == "av1" && facts["profile"] == name && facts["pix_fmt"] == pixelFormat, "\(file): \(facts)")
            #expect(facts["nb_read_frames"] == "6", "\(file): \(facts)")
        }
    }

    @Test func parametersOutOfRangeAreRefusedAtTheirPath() {
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "a": { "type": "encode.av1", "params": { "profile": "extended" } } } }"#)
                    .contains { $0.hasPrefix("nodes.a.params.profile: ") })
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "a": { "type": "encode.av1", "params": { "speed": 11 } } } }"#)
                    .contains("nodes.a.params.speed: 11 is out of range (0 to 10)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "a": { "type": "encode.av1", "params": { "width": 640 } } } }"#)
                    .contains { $0.hasPrefix("nodes.a.params.") && $0.contains("height") })
    }
}
