import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite struct HEVCEncoderNodeTests {
    @Test(.media) func encodesEveryFrameStartingWithAKeyframe() throws {
        let h = try NodeHarness(#"{ "type": "encode.hevc", "params": { "keyframeInterval": 10, "preset": "ultrafast" } }"#)
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 1, "live": false, "pattern": "ball" } }"#)
        try h.push(try source.pullAll())
        let out = try h.pullAll()
        #expect(out.count == 30)
        #expect(out.first?.format == .video(.hevc, width: 64, height: 48))
        // In presentation order (x265 reorders for B-frames; the output is in decode order).
        let shown = out.sorted { ($0.presentationTime ?? .zero) < ($1.presentationTime ?? .zero) }
        let keys = shown.indices.filter { shown[$0].flags.contains(.keyframe) }
        #expect(keys.first == 0)
        #expect(zip(keys, keys.dropFirst() + [out.count]).allSatisfy { $1 - $0 <= 10 }, "\(keys)")
        #expect(keys.count < out.count)
        #expect(Set(out.compactMap(\.presentationTime)).count == 30)
    }

    /// A stream shorter than x265's B-frame delay (two pictures): x265 never measures the delay
    /// and subtracts what its memory held, giving decode times hours or years off, different each
    /// run (a file of such a stream once held no picture at all). Each encode's decode times
    /// come before their presentation, within seconds, a picture's time apart.
    @Test(.media, .timeLimit(.minutes(10))) func aStreamShorterThanTheBFrameDelayHasSoundDecodeTimes() throws {
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 0.2, "fps": 10, "live": false } }"#)
        let frames = try source.pullAll()
        try #require(frames.count == 2)
        for run in 0..<12 {
            let h = try NodeHarness(#"{ "type": "encode.hevc", "params": { "preset": "medium" } }"#)
            try h.push(frames)
            let out = try h.pullAll()
            try #require(out.count == 2, "run \(run)")
            let times = out.map { ($0.decodeTime?.seconds ?? .nan, $0.presentationTime?.seconds ?? .nan) }
            #expect(times.allSatisfy { $0.0 <= $0.1 && $0.1 - $0.0 < 2 }, "run \(run): (decode, presentation) \(times)")
            #expect(abs((times[1].0 - times[0].0) - 0.1) < 1e-6, "run \(run): \(times)")
            // x265enc's own offset (1,000 hours, so that a decode time can come before 0) aside.
            let first = times.map(\.1).min() ?? 0
            #expect(Set(times.map { (($0.1 - first) * 1000).rounded() }) == [0, 100], "run \(run): \(times)")
        }
    }

    /// In MP4: HEVC tagged hvc1 (Apple's players refuse hev1), Main profile, every frame decoded.
    @Test(.media, .timeLimit(.minutes(10)), arguments: [("main", "Main"), ("main10", "Main 10")])
    func inMP4IsHvc1OfTheProfileWithEveryFrame(profile: String, named: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mp4 = folder.appendingPathComponent("hevc.mp4").path
        let report = try EncodedMediaChecks.encodeVideo(with: "encode.hevc", params: #""profile": "\#(profile)", "preset": "ultrafast""#,
                                                        width: 96, height: 64, frames: 45, path: mp4)
        try #require(report.status == .completed, "\(report.error?.description ?? "")")
        let facts = try EncodedMediaChecks.probe(mp4, "v")
        #expect(facts["codec_name"] == "hevc" && facts["codec_tag_string"] == "hvc1" && facts["profile"] == named, "\(facts)")
        #expect(facts["width"] == "96" && facts["height"] == "64", "\(facts)")
        #expect(facts["nb_read_frames"] == "45", "\(facts)")
        #expect(abs((facts["duration"].flatMap(Double.init) ?? 0) - 1.5) < 0.001, "\(facts)")
    }

    /// A set size scales; quality (CRF) is a rate control of its own and excludes a bit rate.
    @Test(.media, .timeLimit(.minutes(10))) func qualityAndSizeAreTaken() throws {
        let h = try NodeHarness(#"{ "type": "encode.hevc", "params": { "quality": 30, "width": 32, "height": 32, "preset": "ultrafast" } }"#)
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 641, "height": 361, "duration": 0.2, "live": false } }"#)
        try h.push(try source.pullAll())
        let out = try h.pullAll()
        #expect(out.count == 6)
        #expect(out.first?.format == .video(.hevc, width: 32, height: 32))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "h": { "type": "encode.hevc", "params": { "quality": 30, "bitrate": 1000000 } } } }"#)
                    .contains { $0.hasPrefix("nodes.h.params.") && $0.contains("bitrate") && $0.contains("quality") })
    }

    @Test(.media) func parametersOutOfRangeAreRefusedAtTheirPath() {
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "h": { "type": "encode.hevc", "params": { "quality": 52 } } } }"#)
                    .contains("nodes.h.params.quality: 52 is out of range (0 to 51)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "h": { "type": "encode.hevc", "params": { "keyframeInterval": 0 } } } }"#)
                    .contains("nodes.h.params.keyframeInterval: 0 is out of range (1 to 1000)"))
        #expect(EncodedMediaChecks.problems(#"{ "version": 1, "nodes": { "h": { "type": "encode.hevc", "params": { "preset": "placebo" } } } }"#)
                    .contains { $0.hasPrefix("nodes.h.params.preset: ") })
    }

    /// Odd frames at their own size: HEVC in 4:2:0 needs even sides; the run fails naming the
    /// node and saying what to do.
    @Test(.media, .timeLimit(.minutes(10))) func oddFramesFailNamingTheNode() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mp4 = folder.appendingPathComponent("odd.mp4").path
        let report = try EncodedMediaChecks.encodeVideo(with: "encode.hevc", width: 65, height: 49, frames: 3, path: mp4)
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains(#"node "enc" (encode.hevc"#) && message.contains("65x49 video cannot be encoded: HEVC (4:2:0) needs an even width and height"),
                "\(message)")
        #expect(!FileManager.default.fileExists(atPath: mp4))
    }
}
