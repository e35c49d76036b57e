import FoundationEssentials
import GraphKit

/// What `graphctl batch` and its worker processes (`graphctl batch-worker`) say to each other:
/// one JSON object per line, a job on the worker's standard input, its reply on the worker's
/// standard output. Standard error stays the worker's own (the batch keeps its last lines, to
/// explain a worker that died).
struct WorkerJob: Codable, Sendable {
    struct Override: Codable, Sendable {
        var node: String
        var parameter: String
        var value: String
    }
    /// The input's place in the batch, echoed in the reply.
    var index: Int
    /// The input's `--map` overrides (the `--set` ones are on the worker's command line).
    var overrides: [Override]
    /// For an input whose name is not UTF-8: its path as bytes, and as the overrides show it
    /// (escaped). An override whose value is that text reads the input's own bytes.
    var inputBytes: [UInt8]?
    var inputText: String?

    init(index: Int, overrides: [GraphLoader.Override], input: BatchInput? = nil) {
        self.index = index
        self.overrides = overrides.map { Override(node: $0.node, parameter: $0.parameter, value: $0.value) }
        if let input, input.isEscaped {
            inputBytes = input.bytes
            inputText = input.path
        }
    }

    var loaderOverrides: [GraphLoader.Override] {
        overrides.map { GraphLoader.Override(node: $0.node, parameter: $0.parameter, value: $0.value) }
    }
}

/// The first line a worker reads: the graph file's bytes as the batch read and checked them, so
/// that every input runs that very graph (a worker never reads the file again by its name, which
/// could name another file by then, or a pipe already drained).
struct WorkerStart: Codable, Sendable {
    var graph: Data
}

struct WorkerReply: Codable, Sendable {
    var index: Int
    /// graphctl's exit status for this run: 0, or the GraphError's code.
    var exitCode: Int32
    /// The error's problems, as `graphctl run` prints them (without `error: `).
    var messages: [String]
    /// Media seconds that reached the graph's final nodes.
    var mediaSeconds: Double
    /// The files the run wrote, as the graph names them: complete, and there.
    var outputs: [String] = []
}

enum WorkerLine {
    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        // Not pretty-printed: one line, newlines inside strings escaped.
        (try? Array(JSONEncoder().encode(value))).map { $0 + [UInt8(ascii: "\n")] } ?? []
    }

    static func decode<T: Decodable>(_ type: T.Type, _ line: [UInt8]) -> T? {
        try? JSONDecoder().decode(type, from: Data(line))
    }
}
