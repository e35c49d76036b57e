import ArgumentParser
import GraphKit
import Nodes

/// Options shared by the commands that load a graph.
struct OverrideOptions: ParsableArguments {
    @Option(name: .customLong("set"), help: ArgumentHelp(
        "Override a node parameter; the value is read by the parameter's type, empty removes it.",
        valueName: "node.param=value"))
    var overrides: [String] = []

    func parsed() throws(GraphError) -> [GraphLoader.Override] {
        var result: [GraphLoader.Override] = []
        for text in overrides { result.append(try GraphLoader.Override(parsing: text)) }
        return result
    }
}

extension GraphLoader {
    static let builtIn = GraphLoader(registry: .builtIn)
}
