import ArgumentParser
import GraphKit
import Nodes

struct Validate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check graphs without running them: every problem, with its place in the file."
    )

    @Argument(help: "Graph files to check.")
    var graphs: [String]

    @OptionGroup var options: OverrideOptions

    @OptionGroup var plugins: PluginOptions

    func run() throws {
        let loader = try plugins.reportingLoader()
        var status: Int32 = 0
        for path in graphs {
            do {
                let overrides = try options.parsed()
                let graph = try loader.load(contentsOf: path, overrides: overrides)
                try graph.checkNodes()
                // What `run` refuses before it starts: an output that is a file the run reads.
                try fileRoles(of: graph, overrides: overrides.map { (option: "--set", override: $0) }, graphFile: path,
                              plugins: loader.registry.plugins).check()
                print("\(path): ok (\(graph.nodes.count) nodes, \(graph.edges.count) edges)")
            } catch {
                let code = report(error, file: path)
                // The most serious failure decides: unreadable (66) over invalid (65).
                status = max(status, code.rawValue)
            }
        }
        if status != 0 { throw ExitCode(status) }
    }
}
