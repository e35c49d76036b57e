import ArgumentParser
import FoundationEssentials
import Glibc
import Dispatch
import GraphKit
import Nodes

struct Dot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw a graph in Graphviz dot, titled with how it runs (a GStreamer pipeline, or the container path); with --stats, label each edge with what a run measured.",
        discussion: "graphctl dot graphs/record.json | dot -Tpng > record.png"
    )

    @Argument(help: "The graph file.")
    var graph: String

    @OptionGroup var options: OverrideOptions

    @OptionGroup var plugins: PluginOptions

    @Option(help: ArgumentHelp("Statistics written by `graphctl run --stats`.", valueName: "file"))
    var stats: String?

    func run() throws {
        let loader = try plugins.reportingLoader()
        let g: Graph
        do {
            g = try loader.load(contentsOf: graph, overrides: try options.parsed())
        } catch {
            throw report(error, file: graph)
        }
        var report: RunReport?
        if let stats {
            do {
                report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
            } catch {
                printError("error: \(stats): cannot read run statistics: \(OutputFile.reason(error))")
                throw ExitCode(GraphError.Code.inputUnreadable.exitStatus)
            }
        }
        print(Self.dot(g, report: report), terminator: "")
    }

    static func quote(_ s: String) -> String {
        "\"" + s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    static func dot(_ g: Graph, report: RunReport?) -> String {
        var out = "digraph \(quote(g.name ?? "graph")) {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
        out += "  edge [fontname=\"Helvetica\", fontsize=10];\n"
        // The plan the run gets, decided as the graph is compiled.
        let plan = switch RunPlan.decided(for: g) {
        case (.pipeline, nil): "plan: GStreamer pipeline"
        case (.pipeline, let declined?): "plan: GStreamer pipeline (not the container path: \(declined))"
        case (.containerPath, _): "plan: container path (no GStreamer pipeline: samples read from the files' indexes and written as stored)"
        }
        out += "  labelloc=t;\n  label=\(quote(plan));\n"
        for n in g.nodes {
            var label = "\(n.id)\\n\(n.descriptor.type)"
            if let s = report?.nodes.first(where: { $0.id == n.id }) {
                label += "\\nin \(s.buffersIn) · out \(s.buffersOut)"
                if let shown = s.shown { label += "\\nshown \(shown) · dropped \(s.dropped ?? 0)" }
            }
            out += "  \(quote(n.id)) [label=\"\(label)\"];\n"
        }
        for e in g.edges {
            var label = "\(e.from.port) → \(e.to.port)"
            if let s = report?.edges.first(where: { $0.from == e.from.description && $0.to == e.to.description }) {
                label += "\\n\(s.buffers) buffers"
                if s.queued {
                    label += "\\nmax \(s.maxBuffers)" + (e.capacity.buffers.map { "/\($0)" } ?? "") + ", waits \(s.waits)"
                    if s.drops > 0 { label += ", drops \(s.drops)" }
                }
            }
            out += "  \(quote(e.from.node)) -> \(quote(e.to.node)) [label=\"\(label)\"];\n"
        }
        return out + "}\n"
    }
}
