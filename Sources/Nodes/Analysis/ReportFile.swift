import FoundationEssentials
import GraphKitCore

/// The JSON file an analysis node writes its typed result to (`analysis.loudness`,
/// `analysis.silence`, `analysis.black`, `analysis.scenes`): made when the run starts, written when the stream ends, renamed into
/// place when the run completes or stops, removed otherwise (``OutputFile``). Its status is
/// what the node reports in ``Node/outputs``.
final class ReportFile: Sendable {
    let file: OutputFile
    let node: String
    private struct State {
        var written = false
        var status: OutputReport.Status = .unknown
    }
    private let state = Guarded(State())

    /// The file named by a node's parameter, or nil when the graph does not give it.
    init?(_ parameter: OptionalParameter<String>, of context: NodeContext) {
        guard let path = context.parameters[parameter] else { return nil }
        file = OutputFile(path: path, location: context.location(parameter: parameter.name), node: context.id)
        node = context.id
    }

    var report: OutputReport { OutputReport(node: node, path: file.path, status: state.withLock { $0.status }) }

    func prepare() throws(GraphError) {
        try file.prepare()
        state.withLock { $0.status = .writing }
    }

    /// Writes `value` as one line of JSON with sorted keys (not yet under its name).
    func write<T: Encodable>(_ value: T) throws(GraphError) {
        try file.write(try Self.encode(value))
        state.withLock { $0.written = true }
    }

    /// Writes `text` as it is (not yet under its name).
    func writeText(_ text: String) throws(GraphError) {
        try file.write(Array(text.utf8))
        state.withLock { $0.written = true }
    }

    static func encode<T: Encodable>(_ value: T) throws(GraphError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return [UInt8](try encoder.encode(value)) + [0x0A]
        } catch {
            throw GraphError(.runFailed, "cannot encode \(T.self) as JSON: \(error)")
        }
    }

    /// Renames the file into place when the run completed or stopped and it was written;
    /// removes it otherwise.
    func finish(_ outcome: RunStatus) throws(GraphError) {
        let written = state.withLock { $0.written }
        var final: OutputReport.Status = outcome == .cancelled ? .cancelled : .failed
        defer { state.withLock { $0.status = final } }
        if (outcome == .completed || outcome == .stopped) && written {
            try file.commit()
            final = .completed
        } else {
            file.discard()
        }
    }
}
