import GraphKitCore

/// The lifecycle `AVAssetWriter` and `AVAssetReader` share, as ``WriterState`` and ``ReaderState``
/// keep it: unknown, starting (the graph is being built: still unknown to the app), running
/// (writing, reading) with what that state holds, then completed, failed with its error, or
/// cancelled.
enum Lifecycle<Running: Sendable>: Sendable {
    case unknown
    case starting
    case running(Running)
    case completed
    case failed(GraphError)
    case cancelled

    /// The status the app sees.
    func status<S: LifecycleStatus>() -> S {
        switch self {
        case .unknown, .starting: .unknown
        case .running: .running
        case .completed: .completed
        case .failed: .failed
        case .cancelled: .cancelled
        }
    }

    var error: GraphError? {
        guard case .failed(let error) = self else { return nil }
        return error
    }

    /// cancelWriting(), cancelReading(): whether there is anything to stop (a run, or one starting).
    mutating func cancel() -> Bool {
        switch self {
        case .unknown, .starting, .running:
            self = .cancelled
            return true
        case .completed, .failed, .cancelled:
            return false
        }
    }
}

/// A public status enum (`AssetWriter.Status`, `AssetReader.Status`) as a ``Lifecycle`` maps to it.
protocol LifecycleStatus {
    static var unknown: Self { get }
    static var running: Self { get }
    static var completed: Self { get }
    static var failed: Self { get }
    static var cancelled: Self { get }
}

extension AssetWriter.Status: LifecycleStatus {
    static var running: Self { .writing }
}

extension AssetReader.Status: LifecycleStatus {
    static var running: Self { .reading }
}
