import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Testing

/// A pass-through node may send buffers of its own on its output, such as the tail an effect
/// still holds when its input ends.
@Suite struct ProcessingHostTests {
    final class Tail: ProcessingNode, @unchecked Sendable {
        static let descriptor = NodeDescriptor(
            type: "test.tail", category: .effect, summary: "passes PCM on, then one buffer of its own",
            inputs: [PortDescriptor("in", .pcm([.s16le]), help: "")], outputs: [PortDescriptor("out", .pcm([.s16le]), help: "")],
            example: #"{ "type": "test.tail" }"#)
        static let bufferFlow = BufferFlow.passThrough
        var host: ProcessingHost?
        var format: MediaFormat?
        var end: MediaTime?
        init(context: NodeContext) throws(GraphError) {}
        func attach(_ host: ProcessingHost) { self.host = host }
        func formatDidChange(to format: MediaFormat) throws(GraphError) { self.format = format }
        func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
            if let pts = buffer.presentationTime, let d = buffer.duration { end = pts + d }
            return true
        }
        func endOfStream() throws(GraphError) {
            let tail = SampleBuffer(format: format, bytes: [UInt8](repeating: 0x11, count: 64), presentationTime: end,
                                    duration: MediaTime(value: 32, timescale: 44_100))
            try host?.emit(tail)
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func aPassThroughNodeEmitsATailAtTheEnd() throws {
        var registry = NodeRegistry.builtIn
        registry.register(Tail.self)
        let h = try NodeHarness(#"{ "type": "test.tail" }"#, registry: registry)
        let input = TestMedia.pcm(frames: 1024 * 3) { frame, _ in Int16(truncatingIfNeeded: frame) }
        try h.push(input)
        let out = try h.pullAll()
        #expect(out.count == input.count + 1)
        // Compared as flags, not bytes: a failure must not print kilobytes of samples.
        #expect(out.last?.bytes == [UInt8](repeating: 0x11, count: 64), "the last buffer is the tail")
        let passedUnchanged = zip(out, input).allSatisfy { $0.bytes == $1.bytes }
        #expect(passedUnchanged, "the input passed through unchanged, and the tail was not processed again")
        let result = try h.finish()
        #expect(result.report.nodes.first { $0.id == "node" }?.buffersOut == input.count + 1)
    }
}
