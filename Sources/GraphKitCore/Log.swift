import Logging

extension Logger {
    /// GraphKit's messages when the application gives no logger of its own: routed by whatever
    /// `LoggingSystem.bootstrap` the application chose (graphctl's `--verbose` sets the level).
    /// Each message about a node carries its id as the `node` metadata.
    package static var graphKit: Logger { Logger(label: "graphkit") }
}

/// Logging set-up for programs that do not configure swift-log themselves (graphctl). It lives in
/// GraphKit so that a program linking GraphKit's shared library bootstraps the one copy of
/// swift-log that GraphKit logs through.
public enum GraphKitLogging {
    public enum Level: Sendable {
        case debug, warning, error
    }

    /// Sends every log message at `level` or above to standard error. Call once, first.
    public static func bootstrapStandardError(level: Level) {
        let swiftLogLevel: Logger.Level = switch level {
        case .debug: .debug
        case .warning: .warning
        case .error: .error
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = swiftLogLevel
            return handler
        }
    }
}
