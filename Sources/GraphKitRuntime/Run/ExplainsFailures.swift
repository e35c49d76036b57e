import GraphKitCore

/// A node that can say what one of its elements' failures means in the graph's terms (an SRT
/// peer that refused the passphrase, a server that did not answer), better than GStreamer's
/// words ("Could not read from resource."). The engine asks it first when one of the node's
/// elements posts an error; GStreamer's words become the cause.
public protocol ExplainsFailures: Node {
    /// The run's error for GStreamer's `message` and `debug` text posted by one of this node's
    /// elements, reported at `location`; nil to keep the engine's own translation.
    func explainFailure(_ message: String, debug: String?, location: String) -> GraphError?
}
