import FoundationEssentials
import Glibc
import GraphKit

/// How one input of a batch ended.
struct InputResult: Codable, Sendable {
    enum Status: String, Codable, Sendable {
        /// Run, and every output written.
        case completed
        /// Every output was there already, complete (outputs are renamed into place when done).
        case skipped
        /// The run failed; `exitCode` is what `graphctl run` would have exited with.
        case failed
        /// Stopped after `--timeout` seconds.
        case timedOut
        /// The worker process running it died (a crash); the batch went on with a new one.
        case crashed
        /// Not run, or stopped, because the batch was interrupted.
        case cancelled
    }

    var input: String
    var index: Int
    var status: Status
    /// 0, or graphctl's exit status for this input (70 for a timeout or a crash, 130 cancelled).
    var exitCode: Int32
    var wallSeconds: Double
    /// What went wrong, naming the input's file and the cause; nil when nothing did.
    var error: String?
    /// The files the graph writes for this input (completed or skipped: all of them are there).
    var outputs: [String]

    var succeeded: Bool { status == .completed || status == .skipped }
}

/// `--summary FILE`: every input of this process's share, then the totals.
struct BatchSummary: Codable, Sendable {
    struct Totals: Codable, Sendable {
        var inputs: Int
        var completed: Int
        var skipped: Int
        /// failed, timed out or crashed.
        var failed: Int
        var cancelled: Int
        var wallSeconds: Double
        /// Inputs run (not skipped) per wall second.
        var inputsPerSecond: Double
    }

    var graph: String
    /// `I/N`, when this was one shard of a batch.
    var shard: String?
    /// Inputs listed before sharding.
    var listed: Int
    var jobs: Int
    var inputs: [InputResult]
    var totals: Totals

    init(graph: String, shard: Shard?, listed: Int, jobs: Int, results: [InputResult], wallSeconds: Double) {
        self.graph = graph
        self.shard = shard?.description
        self.listed = listed
        self.jobs = jobs
        inputs = results.sorted { $0.index < $1.index }
        let count = { (s: Set<InputResult.Status>) in results.filter { s.contains($0.status) }.count }
        let completed = count([.completed])
        totals = Totals(inputs: results.count, completed: completed, skipped: count([.skipped]),
                        failed: count([.failed, .timedOut, .crashed]), cancelled: count([.cancelled]),
                        wallSeconds: wallSeconds,
                        inputsPerSecond: wallSeconds > 0 ? Double(completed + count([.failed, .timedOut, .crashed])) / wallSeconds : 0)
    }

    /// Writes the summary as JSON to `path` ({shard} in it becomes the shard's index), by the
    /// outputs' rule: a temporary file beside it, renamed when complete. Throws 73.
    func write(to path: String) throws(GraphError) {
        let file = OutputFile(path: path, location: "--summary", node: "batch")
        try file.prepare()
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try file.write(Array(encoder.encode(self)))
        } catch let error as GraphError {
            file.discard()
            throw error
        } catch {
            file.discard()
            throw GraphError(.outputUnwritable, at: "--summary", "cannot write the summary to \"\(path)\": \(OutputFile.reason(error))")
        }
        try file.commit()
    }

    /// `{shard}` in a summary path: the shard's index (0 without --shard), so every pod of an
    /// Indexed Job writes its own summary with one command line.
    static func path(_ template: String, shard: Shard?) -> String {
        template.replacing("{shard}", with: String(shard?.index ?? 0))
    }
}
