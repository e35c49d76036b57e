import Assets
import Foundation
import GraphKit
import TestSupport
import Testing

/// Runs `session`'s export and, once it has written some (progress past 5%), ends it with
/// `cancel`; then checks that the export woke with `cancelled` and left nothing in `outputs`.
/// The progress is watched from a thread (``watchFromThread(_:_:)``).
func expectCancelledMidExport(_ session: AssetExportSession, leaving outputs: URL,
                              _ cancel: @escaping @Sendable (AssetExportSession, Task<Void, any Error>) -> Void) async throws {
    let exporting = Task { try await session.export() }
    let cancelled = await watchFromThread("canceller") { () -> Bool? in
        switch session.status {
        case .exporting where session.progress > 0.05:
            cancel(session, exporting)
            return true
        case .completed, .failed, .cancelled: return false
        default: return nil
        }
    }
    #expect(cancelled, "the export ended before it could be cancelled")
    let error = await #expect(throws: GraphError.self) { try await exporting.value }
    #expect(error?.code == .cancelled)
    #expect(session.status == .cancelled)
    #expect(try FileManager.default.contentsOfDirectory(atPath: outputs.path) == [])
}
