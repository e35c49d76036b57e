import GraphKitCore

/// A node that can say what one of its elements' failures means in the graph's terms (an SRT
/// peer that refused the passphrase, a server that did not answer), better than GStreamer's
/// words ("Could not read from resource."). The engine asks it first when one of the node's
/// elements posts an error; GStreamer's words become the cause.
public protocol ExplainsFailures: Node {
    /// The run's error for GStreamer's `message` and `debug` text posted by one of this node's
    /// elements, reported at `location`; nil to keep the engine's own translation.
    func explainFailure(_ message: String, debug: String?, location: String) -> GraphError?

    /// Whether this failure, posted by one of this node's elements, is in fact the end of its
    /// stream (a live source whose peer closed the connection: GStreamer's `srtsrc` says so as
    /// a read error). When true the run does not fail: the engine logs it and goes on, and the
    /// element, a source whose streaming stopped, has sent end of stream downstream (GStreamer's
    /// base source does after any error), so the run ends as a stream's end does. Called on the
    /// run's watcher thread, for each error the node's elements post; false by default.
    func failureEndsStream(_ message: String, debug: String?) -> Bool

    /// Whether this failure, posted by one of this node's elements, is one the node recovers from
    /// by itself (a sink whose server went away, which it connects to again: `sink.rtmp`'s
    /// `reconnect`). When true the run does not fail: the engine logs it and goes on, and the node
    /// is responsible for the rest (failing the run itself if it cannot recover in time). Called
    /// on the run's watcher thread, before ``failureEndsStream(_:debug:)``; false by default.
    func failureIsRecovered(_ message: String, debug: String?) -> Bool
}

extension ExplainsFailures {
    public func failureEndsStream(_ message: String, debug: String?) -> Bool { false }
    public func failureIsRecovered(_ message: String, debug: String?) -> Bool { false }
}

/// A node told when its run is asked to stop (``GraphRun/stop()``), before the sources are sent
/// end of stream: a source that holds its stream's end back while it reconnects
/// (`source.rtsp`'s `reconnect`) lets it through again, and ends the stream itself if no session
/// is running; and when the run ends, however it ends, before the pipeline is stopped: a node
/// that changes the pipeline from a thread of its own (replacing a connection) stops doing so
/// there; and when the run is cancelled, before the pipeline is told: a source that may still be
/// blocked waiting for its device (in a state change the pipeline's stop would wait for) is
/// woken. Called on the run's threads (the cancel: the caller's); none may wait for the stream.
public protocol StopAware: Node {
    func runWillStop()
    func runWillEnd()
    func runWillCancel()
}

extension StopAware {
    public func runWillStop() {}
    public func runWillEnd() {}
    public func runWillCancel() {}
}
