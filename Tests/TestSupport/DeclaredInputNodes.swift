import GraphKit
import Nodes

/// Test nodes that each take one format only, for the tests of the format contract: the loader's
/// (GraphKitCoreTests) and the run's (GraphKitRuntimeTests).

/// The format one test node declares it takes.
public protocol DeclaredInput {
    static var tag: String { get }
    static var formats: FormatSet { get }
}

public enum TakesS16: DeclaredInput { public static let tag = "s16le"; public static let formats = FormatSet.pcm([.s16le]) }
public enum TakesF32: DeclaredInput { public static let tag = "f32le"; public static let formats = FormatSet.pcm([.f32le]) }
public enum TakesMono: DeclaredInput { public static let tag = "mono"; public static let formats = FormatSet.pcm(channels: 1...1) }
public enum TakesBGRA: DeclaredInput { public static let tag = "bgra"; public static let formats = FormatSet.rawVideo([.bgra]) }
public enum TakesRGBA: DeclaredInput { public static let tag = "rgba"; public static let formats = FormatSet.rawVideo([.rgba]) }
public enum TakesI420: DeclaredInput { public static let tag = "i420"; public static let formats = FormatSet.rawVideo([.i420]) }
public enum TakesNV12: DeclaredInput { public static let tag = "nv12"; public static let formats = FormatSet.rawVideo([.nv12]) }
public enum TakesPeaks: DeclaredInput { public static let tag = "peaks"; public static let formats = FormatSet.peaks }

/// A Swift node that takes one format only, as a user's node declares it (a 16-bit effect),
/// passes each buffer on, and fails the run if a buffer of another format ever reaches it.
public final class Takes<D: DeclaredInput>: ProcessingNode, Sendable {
    public static var descriptor: NodeDescriptor {
        NodeDescriptor(type: "test.takes-\(D.tag)", category: .effect, summary: "takes \(D.formats) only",
                       inputs: [PortDescriptor("in", D.formats, help: "")],
                       outputs: [PortDescriptor("out", D.formats, carries: .input("in"), help: "")],
                       example: #"{ "type": "test.takes-\#(D.tag)" }"#)
    }
    public static var bufferFlow: BufferFlow { .passThrough }
    public init(context: NodeContext) throws(GraphError) {}
    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        guard let format = buffer.format, D.formats.contains(format) else {
            throw GraphError(.runFailed, "a buffer of \(String(describing: buffer.format)) reached a node that takes \(D.formats)")
        }
        return true
    }

    /// The built-in nodes and every test.takes-* type.
    public static var registry: NodeRegistry {
        var r = NodeRegistry.builtIn
        for t: any Node.Type in [Takes<TakesS16>.self, Takes<TakesF32>.self, Takes<TakesMono>.self, Takes<TakesBGRA>.self,
                                 Takes<TakesRGBA>.self, Takes<TakesI420>.self, Takes<TakesNV12>.self, Takes<TakesPeaks>.self] {
            r.register(t)
        }
        return r
    }
}
