import GraphKitCore
import Logging
import MediaContainers

// What a run checks as it ends, on the watcher thread: an output that no media reached, and
// inputs that ended short of what they state.

extension GraphRun {
    /// A file that no media reached would be unplayable (an MP4 with an empty index): as ffmpeg
    /// refuses to write one, the run fails at its sink instead, and the sink removes it. This
    /// is what a WAV header with no data chunk, or a stop before the first sample, comes to.
    func emptyOutput() -> GraphError? {
        for (spec, node) in nodes {
            let outputs = node.outputs
            guard !outputs.isEmpty, !graph.edges(into: spec.id).isEmpty,
                  pipeline.statistics.nodeStatistics(spec).buffersIn == 0 else { continue }
            var from = BusWatcher.describe(upstreamOf: spec.id, graph: graph, nodes: nodes).map { " from \($0)" } ?? ""
            // A file that decoded to nothing without an error: its structure may say why.
            if let input = InputFile.feeding(spec.id, pipeline: pipeline, graph: graph, nodes: nodes),
               let diagnosis = ContainerDiagnosis.diagnose(path: input.path) {
                from = " from \(input.name), which \(diagnosis.problem)"
            }
            let writing = outputs.map { "\"\($0.path)\"" }.joined(separator: ", ")
            return GraphError(.runFailed, at: "node \"\(spec.id)\" (\(spec.descriptor.type), writing \(writing))",
                              "nothing to write: no media reached it\(from)", node: spec.id)
        }
        return nil
    }

    /// An input that ends short of what it states: the run succeeds with what it holds, and a
    /// warning says so, with both figures (as ffmpeg warns of a partial file). An MP4 cut short
    /// behind its index (an index-first file cut in half) decodes without an error to the cut;
    /// a WAV whose data is shorter than its header says ends early; a file cut or rewritten in
    /// place while it was read gives a short or mixed output.
    func warnAboutInputsCutShort() {
        var warned = Set<String>()
        for (nodeID, input) in InputFile.all(in: pipeline, nodes: nodes).sorted(by: { $0.key < $1.key }) {
            guard let diagnosis = ContainerDiagnosis.diagnose(path: input.path, indexOnly: true), diagnosis.cutShort else { continue }
            logger.warning("\(diagnosis.sentence(about: input.name)); only what it holds was read", metadata: ["node": .string(nodeID)])
            warned.insert(nodeID)
        }
        for (spec, node) in nodes where !warned.contains(spec.id) {
            guard let reader = node as? any ReadsFile else { continue }
            let name = node.mediaDescription ?? "node \"\(spec.id)\""
            if let change = reader.changeSinceOpened() {
                logger.warning("\(name) changed while the run read it (\(change)); what was written from it may be cut short or mixed",
                               metadata: ["node": .string(spec.id)])
                continue
            }
            guard let stated = reader.statedDuration?.seconds, stated.isFinite else { continue }
            let decoded = pipeline.statistics.mediaSeconds(reaching: finals(downstreamOf: spec.id))
            // Encoders round to their frames: a short input is short by more than that.
            if decoded < stated - max(0.1, stated / 100) {
                let words = "\(name) ended after \(Self.decimal(decoded)) s of the \(Self.decimal(stated)) s its header states "
                    + "(a file cut short, or written short); only what it holds was read"
                logger.warning("\(words)", metadata: ["node": .string(spec.id)])
            }
        }
    }

    /// The nodes with no connected output that `id` feeds, directly or through others.
    func finals(downstreamOf id: String) -> [String] {
        var seen: Set<String> = [id], queue = [id], found: [String] = []
        while !queue.isEmpty {
            let next = queue.removeFirst()
            let edges = graph.edges(from: next)
            if edges.isEmpty, next != id { found.append(next) }
            for e in edges where seen.insert(e.to.node).inserted { queue.append(e.to.node) }
        }
        return found
    }

    /// `value` with two decimals, as printf's %.2f.
    static func decimal(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = abs(hundredths % 100)
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
