import Foundation
import Testing
import CKernels
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// Exact pixels on small frames, with widths that are not a multiple of the 16-pixel vectors
/// and rows padded past the width.
@Suite struct PixelEffectsTests {
    static let shapes: [(Int, Int, Int?)] = [(5, 3, nil), (21, 2, nil), (17, 3, 17 * 4 + 12), (1, 1, nil)]

    func run(_ node: String, _ frame: SampleBuffer) throws -> SampleBuffer {
        let h = try NodeHarness(node)
        try h.push(frame)
        let out = try #require(h.pull())
        #expect(try !h.finish().hasLeftovers)
        return out
    }

    @Test(.media, arguments: ["red", "green", "blue"])
    func dropChannelZeroesExactlyOneChannel(_ channel: String) throws {
        let index = ["blue": 0, "green": 1, "red": 2][channel]!
        for (w, h, stride) in Self.shapes {
            let frame = try VideoTestFrames.frame(w, h, bytesPerRow: stride) { x, y in
                (VideoTestFrames.value(x, y, 0), VideoTestFrames.value(x, y, 1), VideoTestFrames.value(x, y, 2), VideoTestFrames.value(x, y, 3))
            }
            let before = VideoTestFrames.pixels(frame)
            let out = try run(#"{ "type": "effect.dropChannel", "params": { "channel": "\#(channel)" } }"#, frame)
            let after = VideoTestFrames.pixels(out)
            let expected = before.pixels.map { p in var q = p; q[index] = 0; return q }
            #expect(after.pixels == expected, "\(w)x\(h)")
            #expect(after.padding.allSatisfy { $0 == 0xEE })  // row padding untouched (where written in place)
        }
    }

    @Test(.media) func dropChannelOnRGBAFindsTheChannelByFormat() throws {
        let frame = try VideoTestFrames.frame(3, 1, .rgba) { _, _ in (10, 20, 30, 40) }  // R, G, B, A bytes
        let out = try run(#"{ "type": "effect.dropChannel", "params": { "channel": "red" } }"#, frame)
        #expect(VideoTestFrames.pixels(out).pixels == Array(repeating: [0, 20, 30, 40], count: 3))
    }

    @Test(.media) func grayscaleIsBT601RoundedToNearest() throws {
        for (w, h, stride) in Self.shapes {
            let frame = try VideoTestFrames.frame(w, h, bytesPerRow: stride) { x, y in
                (VideoTestFrames.value(x, y, 0), VideoTestFrames.value(x, y, 1), VideoTestFrames.value(x, y, 2), VideoTestFrames.value(x, y, 3))
            }
            let before = VideoTestFrames.pixels(frame)
            let out = VideoTestFrames.pixels(try run(#"{ "type": "effect.grayscale" }"#, frame))
            let expected = before.pixels.map { p -> [UInt8] in
                let s = 299 * Int(p[2]) + 587 * Int(p[1]) + 114 * Int(p[0])
                let y = UInt8((s + 500) / 1000)  // round half up of 0.299 R + 0.587 G + 0.114 B
                return [y, y, y, p[3]]
            }
            #expect(out.pixels == expected, "\(w)x\(h)")
            #expect(out.padding.allSatisfy { $0 == 0xEE })
        }
    }

    /// Both vector paths, AVX2 in C (where the CPU has it) and Swift's, give BT.601 rounded to
    /// nearest for every value of every channel, in both byte orders; 67 pixels a row, so a
    /// scalar tail too.
    @Test(arguments: [PixelFormat.bgra, .rgba])
    func grayscaleVectorPathsMatchTheFormula(_ pf: PixelFormat) throws {
        let frame = try Self.everyValue(pf)
        let order = pf == .bgra ? (r: 2, g: 1, b: 0) : (r: 0, g: 1, b: 2)
        let expected = VideoTestFrames.pixels(frame).pixels.map { p -> [UInt8] in
            let (r, g, b) = (Int(p[order.r]), Int(p[order.g]), Int(p[order.b]))
            let sum: Int = 299 * r + 587 * g + 114 * b
            let y = UInt8((sum + 500) / 1000)
            return [y, y, y, p[3]]
        }
        let node = try makeNode(#"{ "type": "effect.grayscale" }"#) as! GrayscaleNode
        try expectBothPaths(of: node, { node.usesAVX2Kernel = $0 }, on: frame, give: expected)
    }

    /// Every value of every channel: 256 rows of 67 pixels (whole vectors, then a scalar tail).
    static func everyValue(_ pf: PixelFormat) throws -> SampleBuffer {
        try VideoTestFrames.frame(67, 256, pf) { x, y in
            (UInt8(y), UInt8((y + x) & 255), UInt8((y + 3 * x) & 255), UInt8((255 - y + 5 * x) & 255))
        }
    }

    /// Runs `node` on `frame` with its AVX2 kernel off (the Swift vector path), then on, and
    /// expects `expected` from both.
    func expectBothPaths(of node: some ProcessingNode, _ useAVX2: (Bool) -> Void, on frame: SampleBuffer,
                         give expected: [[UInt8]]) throws {
        try node.formatDidChange(to: frame.format!)
        guard case .rawVideo(let v) = frame.format else { Issue.record("not a video frame"); return }
        let width = v.width
        for avx2 in [false, true] {
            useAVX2(avx2)
            var copy = frame
            _ = try node.process(&copy)
            let out = VideoTestFrames.pixels(copy).pixels
            let wrong = out.indices.filter { out[$0] != expected[$0] }
            #expect(wrong.count == 0, "AVX2 \(avx2): \(wrong.count) pixels differ, the first at \(wrong.first.map { ($0 % width, $0 / width) }.map { "\($0)" } ?? "")")
        }
    }

    @Test(.media) func grayscaleDivisionIsExactForEverySum() {
        let wrong = (UInt32(0)...255_500).filter { GrayscaleNode.divide1000($0) != $0 / 1000 }
        #expect(wrong.isEmpty)
    }

    @Test(.media) func grayscaleTies() throws {
        // 0.299·255 + 0.587·0 + 0.114·1 = 76.359 → 76; pure grey stays; (1, 1, 0) → 0.886 → 1.
        let frame = try VideoTestFrames.frame(3, 1) { x, _ in [(1, 0, 255, 9), (77, 77, 77, 255), (0, 1, 1, 0)][x] }
        #expect(VideoTestFrames.pixels(try run(#"{ "type": "effect.grayscale" }"#, frame)).pixels
                == [[76, 76, 76, 9], [77, 77, 77, 255], [1, 1, 1, 0]])
    }

    @Test(.media) func colorMatrixFollowsCIColorMatrix() throws {
        let node = #"{ "type": "effect.colorMatrix", "params": { "r": [0.5, 0.5, 0, 0], "g": [0, 0, 2, 0], "b": [0, 0, 0, 1], "a": [0, 0, 0, 0], "bias": [0.1, 0, -0.2, 1] } }"#
        for (w, h, stride) in Self.shapes {
            let frame = try VideoTestFrames.frame(w, h, bytesPerRow: stride) { x, y in
                (VideoTestFrames.value(x, y, 0), VideoTestFrames.value(x, y, 1), VideoTestFrames.value(x, y, 2), VideoTestFrames.value(x, y, 3))
            }
            let before = VideoTestFrames.pixels(frame)
            let out = VideoTestFrames.pixels(try run(node, frame))
            func q(_ v: Double) -> UInt8 { UInt8(min(255, max(0, (255 * v).rounded()))) }
            let expected = before.pixels.map { p -> [UInt8] in
                let (b, g, r, a) = (Double(p[0]) / 255, Double(p[1]) / 255, Double(p[2]) / 255, Double(p[3]) / 255)
                return [q(a - 0.2), q(2 * b), q(0.5 * r + 0.5 * g + 0.1), q(1)]
            }
            #expect(out.pixels == expected, "\(w)x\(h)")
            #expect(out.padding.allSatisfy { $0 == 0xEE })
        }
    }

    /// Both vector paths, AVX2 in C (8 pixels at a time, where the CPU has it) and Swift's
    /// (16 at a time), give the scalar path's bytes in every lane: every value of every channel,
    /// in both byte orders, with alpha computed and passed through, with and without bias and
    /// weights of A, with sums that can and cannot overflow (`everyLoop` reaches each of the C
    /// kernel's loops), and at exact halves (0.5 × odd values), where rounding half up differs from half to even.
    /// 67 pixels a row: whole vectors, then a scalar tail.
    @Test(arguments: [PixelFormat.bgra, .rgba], [
        #"{ "r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0] }"#,
        #"{ "r": [0.5, 0, 0, 0], "g": [0, 0.5, 0, 0], "b": [0, 0, 0.5, 0], "a": [0, 0, 0, 0.5], "bias": [0.25, -0.1, 0, 0] }"#,
        #"{ "r": [-1, 0, 0, 0.2], "g": [0, 1.5, 0, 0], "b": [0, 0, 1, 0], "a": [0.3, 0.3, 0.3, 0], "bias": [1, 0, 0, 0.1] }"#,
        #"{ "r": [1, 0, 0, 0.25], "bias": [0, 0.5, 0, 0] }"#,
        #"{ "a": [0.1, 0.2, 0.3, 0] }"#,
        // Sums past Int32 and infinities of both signs, and where they meet, NaN.
        #"{ "r": [1e7, 0, 0, 0], "g": [0, -1e7, 0, 0], "b": [3e38, -3e38, 0, 0] }"#,
    ])
    func colorMatrixVectorLanesMatchTheScalarPath(_ pf: PixelFormat, _ params: String) throws {
        let frame = try Self.everyValue(pf)
        let node = try makeNode(#"{ "type": "effect.colorMatrix", "params": \#(params) }"#) as! ColorMatrixNode
        let order = pf == .bgra ? (r: 2, g: 1, b: 0) : (r: 0, g: 1, b: 2)
        let expected = VideoTestFrames.pixels(frame).pixels.map { p -> [UInt8] in
            let (r, g, b, a) = node.matrix.apply(r: Float(p[order.r]), g: Float(p[order.g]), b: Float(p[order.b]), a: Float(p[3]))
            var q = [UInt8](repeating: 0, count: 4)
            (q[order.r], q[order.g], q[order.b], q[3]) = (r, g, b, a)
            return q
        }
        try expectBothPaths(of: node, { node.usesAVX2Kernel = $0 }, on: frame, give: expected)
    }

    /// One matrix for each of the C kernel's 16 loops: alpha kept or computed, A weighed or not,
    /// a bias or none, sums bounded or able to pass 2^30.
    static let everyLoop: [String] = [true, false].flatMap { keep in [true, false].flatMap { alphaIn in
        [true, false].flatMap { bias in [true, false].map { bounded in
            let r = "[0.4, 0.3, 0.2, \(alphaIn ? 0.25 : 0)]", g = "[0.1, \(bounded ? 0.8 : 2e7), 0.1, 0]"
            let a = keep ? "[0, 0, 0, 1]" : "[0.1, 0.2, 0.3, 0]"
            return #"{ "r": \#(r), "g": \#(g), "b": [0.2, 0.2, 0.5, 0], "a": \#(a), "bias": [\#(bias ? 0.1 : 0), 0, 0, 0] }"#
        } }
    } }

    @Test func theLoopCasesReachEveryLoopOfTheKernel() throws {
        var loops = Set<Int32>()
        for params in Self.everyLoop {
            let m = (try makeNode(#"{ "type": "effect.colorMatrix", "params": \#(params) }"#) as! ColorMatrixNode).matrix
            var plan = gk_color_matrix_plan()
            gk_color_matrix_plan_make(&plan, m.m.flatMap { $0 }, m.k, [2, 1, 0, 3], m.keepsAlpha ? 1 : 0)
            loops.insert(plan.variant)
        }
        #expect(loops == Set(0..<16))
    }

    @Test(arguments: [PixelFormat.bgra, .rgba], everyLoop)
    func colorMatrixEveryKernelLoopMatchesTheScalarPath(_ pf: PixelFormat, _ params: String) throws {
        try colorMatrixVectorLanesMatchTheScalarPath(pf, params)
    }

    /// Where the CPU has AVX2 (this project's machines do), the C kernel takes every whole group
    /// of 8 pixels and leaves the rest; elsewhere it takes none and Swift does the row.
    @Test func colorMatrixKernelTakesWholeGroupsOfEight() {
        let pixels = [UInt32](repeating: 0x8040_2010, count: 21)
        var out = [UInt32](repeating: 0, count: 21)
        let identity: [Float] = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
        var plan = gk_color_matrix_plan()
        gk_color_matrix_plan_make(&plan, identity, [0, 0, 0, 0], [2, 1, 0, 3], 0)
        let done = gk_color_matrix_avx2(&plan, pixels, &out, 21)
        #expect(done == (gk_cpu_has_avx2() == 1 ? 16 : 0))
        #expect(out[..<done].allSatisfy { $0 == 0x8040_2010 })
        #expect(out[done...].allSatisfy { $0 == 0 })
    }

    /// Every row width from 1 to 80 (vectors from both ends, then a middle of each length and
    /// parity), in place and into a pooled frame when the frame is also held elsewhere.
    @Test(.media) func horizontalMirrorOfEveryWidth() throws {
        let node = try makeNode(#"{ "type": "effect.mirror", "params": { "axis": "horizontal" } }"#)
        for w in 1...80 {
            func make() throws -> SampleBuffer { try VideoTestFrames.frame(w, 2) { x, y in (UInt8(x), UInt8(y), UInt8(w), 255) } }
            let expected: [[UInt8]] = (0..<2).flatMap { y in (0..<w).reversed().map { x in [UInt8(x), UInt8(y), UInt8(w), 255] } }
            let original = try make()
            try node.formatDidChange(to: original.format!)
            var shared = original
            _ = try node.process(&shared)
            #expect(VideoTestFrames.pixels(shared).pixels == expected, "\(w) wide, shared")
            var inPlace = try make()
            _ = try node.process(&inPlace)
            #expect(VideoTestFrames.pixels(inPlace).pixels == expected, "\(w) wide, in place")
        }
    }

    @Test(.media) func mirrorBothAxes() throws {
        for (w, h, stride) in Self.shapes {
            let frame = try VideoTestFrames.frame(w, h, bytesPerRow: stride) { x, y in (UInt8(x), UInt8(y), 0, 255) }
            let horizontal = VideoTestFrames.pixels(try run(#"{ "type": "effect.mirror", "params": { "axis": "horizontal" } }"#, frame))
            #expect(horizontal.pixels == (0..<h).flatMap { y in (0..<w).reversed().map { x in [UInt8(x), UInt8(y), 0, 255] } })
            let vertical = VideoTestFrames.pixels(try run(#"{ "type": "effect.mirror", "params": { "axis": "vertical" } }"#, frame))
            #expect(vertical.pixels == (0..<h).reversed().flatMap { y in (0..<w).map { x in [UInt8(x), UInt8(y), 0, 255] } })
            #expect(vertical.padding.allSatisfy { $0 == 0xEE })
        }
    }

    /// Planar frames (I420, NV12) mirror plane by plane, in the decoder's own layout: a chroma
    /// pair of NV12 stays a pair, odd widths keep their middle column, and a frame also held
    /// elsewhere is left as it was.
    @Test(arguments: [PixelFormat.i420, .nv12])
    func planarFramesMirrorPlaneByPlane(_ pf: PixelFormat) throws {
        for (w, h) in [(1, 1), (5, 3), (33, 4), (70, 6)] {
            let v = VideoTestFrames.format(w, h, pf)
            func make() throws -> SampleBuffer {
                var b = SampleBuffer(format: .rawVideo(v), byteCount: Self.planarByteCount(w, h))
                try b.withMutablePixelPlanes { planes in
                    for (i, p) in planes.enumerated() {
                        let rowBytes = p.width * MirrorNode.elementSizes(pf)[i]
                        for y in 0..<p.height {
                            for x in 0..<rowBytes { p.baseAddress.storeBytes(of: UInt8(truncatingIfNeeded: i * 97 + y * 31 + x * 7), toByteOffset: y * p.bytesPerRow + x, as: UInt8.self) }
                        }
                    }
                }
                return b
            }
            /// Each plane's visible rows, as byte arrays.
            func rows(_ b: SampleBuffer) throws -> [[[UInt8]]] {
                var copy = b
                return try copy.withMutablePixelPlanes { planes in
                    planes.enumerated().map { i, p in
                        let rowBytes = p.width * MirrorNode.elementSizes(pf)[i]
                        return (0..<p.height).map { y in (0..<rowBytes).map { p.baseAddress.load(fromByteOffset: y * p.bytesPerRow + $0, as: UInt8.self) } }
                    }
                }
            }
            let before = try rows(try make())
            let size = MirrorNode.elementSizes(pf)
            let mirrored = before.enumerated().map { i, plane in
                plane.map { row in stride(from: row.count - size[i], through: 0, by: -size[i]).flatMap { row[$0..<($0 + size[i])] } }
            }
            let flipped = before.map { Array($0.reversed()) }
            for (axis, expected) in [("horizontal", mirrored), ("vertical", flipped)] {
                let node = try makeNode(#"{ "type": "effect.mirror", "params": { "axis": "\#(axis)" } }"#)
                try node.formatDidChange(to: .rawVideo(v))
                var inPlace = try make()
                _ = try node.process(&inPlace)
                #expect(try rows(inPlace) == expected, "\(pf) \(w)x\(h) \(axis), in place")
                let original = try make()
                var shared = original
                _ = try node.process(&shared)
                #expect(try rows(shared) == expected, "\(pf) \(w)x\(h) \(axis), shared")
                #expect(try rows(original) == before, "\(pf) \(w)x\(h) \(axis): the other holder's frame changed")
            }
        }
    }

    /// Bytes of a planar 4:2:0 frame in GStreamer's default layout (rows of 4-byte multiples);
    /// generous, so the same count serves I420 and NV12.
    static func planarByteCount(_ w: Int, _ h: Int) -> Int {
        let luma = (w + 3) / 4 * 4 * h, chromaRow = ((w + 1) / 2 + 3) / 4 * 4 * 2
        return luma + chromaRow * ((h + 1) / 2) + 64
    }

    /// A frame someone else holds (a fan-out's other branch) is left as it is: the effect writes
    /// into a pooled frame in the default layout, with the same pixels the in-place path gives.
    @Test(arguments: [
        #"{ "type": "effect.dropChannel", "params": { "channel": "green" } }"#,
        #"{ "type": "effect.grayscale" }"#,
        #"{ "type": "effect.colorMatrix", "params": { "r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0] } }"#,
        #"{ "type": "effect.mirror", "params": { "axis": "horizontal" } }"#,
        #"{ "type": "effect.mirror", "params": { "axis": "vertical" } }"#,
    ])
    func aSharedFrameIsLeftAloneAndTheResultPooled(_ json: String) throws {
        let (w, h, stride) = (21, 3, 21 * 4 + 12)
        func make() throws -> SampleBuffer {
            try VideoTestFrames.frame(w, h, bytesPerRow: stride) { x, y in
                (VideoTestFrames.value(x, y, 0), VideoTestFrames.value(x, y, 1), VideoTestFrames.value(x, y, 2), VideoTestFrames.value(x, y, 3))
            }
        }
        let node = try makeNode(json)
        var inPlace = try make()
        try node.formatDidChange(to: inPlace.format!)
        _ = try node.process(&inPlace)
        let expected = VideoTestFrames.pixels(inPlace).pixels

        let original = try make()
        let before = VideoTestFrames.pixels(original)
        for _ in 0..<3 {  // the second and third frames come back from the pool
            var shared = original
            _ = try node.process(&shared)
            #expect(VideoTestFrames.pixels(shared).pixels == expected)
            #expect(VideoTestFrames.pixels(original) == before)
        }
    }

    /// A node made from its JSON as a graph would make it (defaults filled in), to call directly.
    func makeNode(_ json: String) throws -> any ProcessingNode {
        let graph = try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "a": { "type": "source.app" }, "e": \#(json), "b": { "type": "sink.app" } }, "edges": ["a.out -> e.in", "e.out -> b.in"] }"#)
        let spec = graph.node("e")!
        return try spec.type.init(context: NodeContext(id: "e", parameters: spec.parameters)) as! any ProcessingNode
    }

    @Test func nonPackedFramesAreRefusedWithAReason() throws {
        let node = try GrayscaleNode(context: NodeContext(id: "g", parameters: Parameters()))
        #expect(throws: GraphError.self) {
            try node.formatDidChange(to: .rawVideo(VideoTestFrames.format(4, 4, .i420)))
        }
    }
}
