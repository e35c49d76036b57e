import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct H264EncoderNodeTests {
    @Test func automaticBitrateFollowsTheCapturePresets() {
        #expect(H264EncoderNode.automaticBitrate(width: 720, height: 960) == 6_981_120)
        #expect(H264EncoderNode.automaticBitrate(width: 640, height: 480) == 3_102_720)
        #expect(H264EncoderNode.automaticBitrate(width: 320, height: 240) == 311_040)
    }

    @Test func encodesEveryFrameStartingWithAKeyframe() throws {
        let h = try NodeHarness(#"{ "type": "encode.h264", "params": { "keyframeInterval": 10, "profile": "main" } }"#)
        // The ball pattern predicts well; a tiny scrolling SMPTE makes x264 see a scene cut per frame.
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 1, "live": false, "pattern": "ball" } }"#)
        try h.push(try source.pullAll())
        let out = try h.pullAll()
        #expect(out.count == 30)
        #expect(out.first?.format == .h264(width: 64, height: 48))
        #expect(out.first?.flags.contains(.keyframe) == true)
        let keys = out.indices.filter { out[$0].flags.contains(.keyframe) }
        #expect(keys.first == 0)
        #expect(zip(keys, keys.dropFirst() + [out.count]).allSatisfy { $1 - $0 <= 10 })  // never more than 10 apart
        #expect(keys.count < out.count)  // and the rest predicted
        let times = out.compactMap(\.presentationTime)
        #expect(Set(times).count == 30)
    }

    /// One side given: the other follows from the frames' shape, even, in square pixels (it
    /// stayed, and 1280×720 with width 320 became 320×720, stretched).
    @Test(.timeLimit(.minutes(10)), arguments: [("width", 320, 320, 180), ("height", 90, 160, 90), ("width", 100, 100, 56)])
    func oneSideGivenKeepsTheShape(side: String, value: Int, width: Int, height: Int) throws {
        let h = try NodeHarness(#"{ "type": "encode.h264", "params": { "\#(side)": \#(value) } }"#)
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 1280, "height": 720, "duration": 0.2, "live": false, "pattern": "ball" } }"#)
        try h.push(try source.pullAll())
        let out = try h.pullAll()
        #expect(out.count == 6)
        #expect(out.first?.format == .h264(width: width, height: height))
    }

    /// Odd frames scaled to a size set here are encoded (AssetWriter's VideoSettings asks so):
    /// the advice to crop them first is for frames encoded at their own size.
    @Test(.timeLimit(.minutes(10)))
    func oddFramesScaledToAnEvenSizeAreEncoded() throws {
        let h = try NodeHarness(#"{ "type": "encode.h264", "params": { "width": 320, "height": 240 } }"#)
        let source = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 641, "height": 361, "duration": 0.2, "live": false } }"#)
        try h.push(try source.pullAll())
        let out = try h.pullAll()
        #expect(out.count == 6)
        #expect(out.first?.format == .h264(width: 320, height: 240))
    }

    /// `tune`: `auto` tunes a live camera's frames for zero latency and keeps x264's lookahead
    /// for frames that are not live; `none` and `zerolatency` say which. Seen in the options x264
    /// writes into the stream's first picture (its SEI).
    @Test(.timeLimit(.minutes(2)), arguments: [(true, "auto", true), (false, "auto", false), (false, "zerolatency", true), (true, "none", false)])
    func theTuneFollowsTheSource(live: Bool, tune: String, zeroLatency: Bool) throws {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "camera": { "type": "capture.video", "params": { "width": 160, "height": 120, "duration": 0.5, "live": \(live), "pattern": "ball" } },
                "h264": { "type": "encode.h264", "params": { "tune": "\(tune)" } }, "s": { "type": "sink.app" } },
              "edges": [ "camera.out -> h264.in", "h264.out -> s.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let first = try #require(try run.output("s").copyNextSampleBuffer(timeout: 30))
        let options = String(decoding: first.bytes.map { $0 < 32 || $0 > 126 ? 32 : $0 }, as: UTF8.self)
        // zerolatency: no lookahead (no macroblock tree, whose lookahead x264 then does not
        // write), slices for threads; otherwise veryfast's 10 frames of lookahead.
        #expect(options.contains(zeroLatency ? "sliced_threads=1" : "sliced_threads=0"), "x264's options: \(options.prefix(700))")
        #expect(options.contains(zeroLatency ? " mbtree=0" : " mbtree=1"))
        #expect(options.contains("rc_lookahead=10") == !zeroLatency)
        run.cancel()
        _ = run.wait()
    }

    @Test func baselineHasNoBFrames() {
        #expect(throws: GraphError.self) {
            try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "e": { "type": "encode.h264", "params": { "profile": "baseline", "bframes": 2 } } } }"#)
        }
    }

    /// x264 takes 4:2:0 only: an odd width or height is refused when the graph is loaded, at
    /// the parameter, where it passed and the run failed blaming the decoder.
    @Test func oddSizesAreRefusedAtTheParameter() throws {
        func problems(_ params: String, _ overrides: [GraphLoader.Override] = []) -> [String] {
            do {
                _ = try GraphLoader(registry: .builtIn).load(json: """
                    { "version": 1, "nodes": { "g": { "type": "generate.frames" }, "h264": { "type": "encode.h264", "params": { \(params) } },
                      "s": { "type": "sink.app" } }, "edges": [ "g.out -> h264.in", "h264.out -> s.in" ] }
                    """, overrides: overrides)
                return []
            } catch {
                #expect(error.code == .invalidGraph)
                return error.problems.map(\.description)
            }
        }
        #expect(problems(#""width": 7, "height": 64"#) == ["nodes.h264.params.width: 7 is odd; expected an even integer (2 to 7680, even)"])
        #expect(problems(#""height": 99"#) == ["nodes.h264.params.height: 99 is odd; expected an even integer (2 to 4320, even)"])
        #expect(problems("", [try GraphLoader.Override(parsing: "h264.width=7")]).first?.hasSuffix("7 is odd; expected an even integer (2 to 7680, even)") == true)
        #expect(problems(#""width": 1"#) == ["nodes.h264.params.width: 1 is out of range (2 to 7680, even)"])
        #expect(problems(#""width": 2, "height": 2"#).isEmpty)
    }
}
