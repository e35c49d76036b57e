import Logging

extension Logger {
    /// GraphKit's messages when the application gives no logger of its own: routed by whatever
    /// `LoggingSystem.bootstrap` the application chose (graphctl's `--verbose` sets the level).
    /// Each message about a node carries its id as the `node` metadata.
    static var graphKit: Logger { Logger(label: "graphkit") }
}
