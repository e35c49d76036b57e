// A node of your own, tested with NodeHarness: `example.invert` turns 16-bit PCM upside down.
// The harness feeds it and drains it without any GStreamer code; this program exits 1 if the
// node does not do what it says.
//
//   swift run example-custom-node
import Glibc
import GraphKit
import GraphKitTesting
import Nodes

/// `example.invert`: every 16-bit sample negated (its polarity flipped), in place.
final class InvertNode: ProcessingNode, Sendable {
    static let descriptor = NodeDescriptor(
        type: "example.invert", category: .effect, summary: "Flips the polarity of 16-bit PCM",
        inputs: [PortDescriptor("in", .pcm([.s16le]), help: "16-bit PCM")],
        outputs: [PortDescriptor("out", .pcm([.s16le]), help: "the same, negated")],
        example: #"{ "type": "example.invert" }"#)
    static let bufferFlow = BufferFlow.passThrough

    init(context: NodeContext) throws(GraphError) {}

    func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        buffer.withMutableAudioSamples(as: Int16.self) { samples in
            for i in samples.indices { samples[i] = samples[i] == .min ? .max : -samples[i] }
        }
        return true
    }
}

var registry = NodeRegistry.builtIn
registry.register(InvertNode.self)
do {
    let harness = try NodeHarness(#"{ "type": "example.invert" }"#, registry: registry)
    let input = TestMedia.pcm(sampleRate: 8_000, frames: 4_000) { frame, _ in Int16(frame % 200 - 100) }
    for buffer in input { try harness.push(buffer) }
    let result = try harness.finish()
    let out = result.leftovers["out", default: []].flatMap { b in b.withAudioSamples(as: Int16.self) { Array($0) } }
    let expected = input.flatMap { b in b.withAudioSamples(as: Int16.self) { $0.map { -$0 } } }
    guard out == expected, result.report.status == .completed else {
        print("FAILED: \(out.count) samples out, \(expected.count) expected; run \(result.report.status)")
        exit(1)
    }
    print("example.invert: \(out.count) samples inverted, as expected")
} catch {
    print("error: \(error)")
    exit(70)
}
