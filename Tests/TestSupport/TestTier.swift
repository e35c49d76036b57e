import Foundation
import Testing
import GraphKitTesting

/// The suite's two tiers. `make test` runs everything; `make test-fast` runs the code's own
/// logic only (GRAPHKIT_TEST_TIER=fast, under 90 s on this project's 2-core machine), leaving out
/// every suite or test marked ``Trait/media``: those that run media through GStreamer, graphctl,
/// ffmpeg or a real-time clock, or compute over minutes of signal (EBU R128's conformance
/// signals, which take a minute in a debug build).
///
/// The fast tier checks its own line. It runs with no GStreamer plugins (an empty plugin path and
/// registry), and ``TestMedia/runTool(_:_:)`` refuses to start a tool, so a suite that runs media
/// but is not marked fails there, naming what it started, instead of slowing the tier down.
public enum TestTier {
    /// True under `make test-fast`.
    public static let fastOnly = ProcessInfo.processInfo.environment[TestMedia.tierVariable] == "fast"
}

extension Trait where Self == ConditionTrait {
    /// A suite or test that runs media through GStreamer, graphctl or another program, waits on a
    /// real-time clock or computes over minutes of signal: it runs in `make test`, not in
    /// `make test-fast`.
    public static var media: Self {
        .disabled(if: TestTier.fastOnly, "runs media through GStreamer or a program: `make test` runs it, `make test-fast` does not")
    }
}
