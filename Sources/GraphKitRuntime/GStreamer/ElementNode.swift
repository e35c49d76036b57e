import CGStreamer
import GraphKitCore

/// A node made of GStreamer elements. `build(in:)` adds the node's elements to the run's
/// pipeline and exposes one of their pads per connected port, under the port's name, through
/// ``BinBuilder``: the node never sees a GStreamer type.
public protocol ElementNode: Node {
    func build(in bin: BinBuilder) throws(GraphError)
}

extension NodeRegistry {
    /// The node types the engine itself provides: the app endpoints that code pushes into and
    /// pulls from.
    public static let core = NodeRegistry([AppSourceNode.self, AppSinkNode.self])
}

extension GraphKitInfo {
    /// The GStreamer library version this process runs on (needs no initialisation).
    public static var gstreamerVersion: String {
        var major: UInt32 = 0, minor: UInt32 = 0, micro: UInt32 = 0, nano: UInt32 = 0
        gst_version(&major, &minor, &micro, &nano)
        return "\(major).\(minor).\(micro)"
    }
}
