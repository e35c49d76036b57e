import GraphKitCore

/// A node that decodes video (`decode`): whether HDR video leaves it as the file holds it (not
/// tone-mapped), and from which output.
public protocol DecodesVideo: Node {
    /// True when an HDR stream's frames leave ``videoOutput`` in their HDR signal.
    var keepsHDR: Bool { get }
    /// The output port the frames leave by.
    var videoOutput: String { get }
}

extension GraphRun {
    /// An HDR file's frames, decoded without tone mapping, that would reach a node that takes SDR
    /// (`NodeDescriptor.takesHDR` false), directly or through nodes that pass frames on as they
    /// came (scale, crop, mirror): refused before the run, at the edge into that node, naming the
    /// file, its transfer and the way out. The file's colour is read only when such a path exists.
    /// A decode fed by a live source (SRT, RTSP) is not checked: its colour is known only once
    /// the stream has begun.
    static func checkSDRInputs(_ graph: Graph, nodes: [(spec: Graph.NodeSpec, node: any Node)]) throws(GraphError) {
        let byID = Dictionary(nodes.map { ($0.spec.id, $0.node) }, uniquingKeysWith: { a, _ in a })
        for (spec, node) in nodes {
            guard let decoder = node as? any DecodesVideo, decoder.keepsHDR else { continue }
            var queue = graph.edges(from: spec.id).filter { $0.from.port == decoder.videoOutput }
            var seen: Set<String> = [spec.id]
            var refusing: Graph.Edge?
            while refusing == nil, !queue.isEmpty {
                let edge = queue.removeFirst()
                guard seen.insert(edge.to.node).inserted, let target = graph.node(edge.to.node) else { continue }
                if !target.descriptor.takesHDR { refusing = edge; break }
                for output in target.descriptor.outputs {
                    guard case .input = output.carriage else { continue }
                    queue += graph.edges(from: edge.to.node).filter { $0.from.port == output.name }
                }
            }
            guard let edge = refusing, let target = graph.node(edge.to.node),
                  let read = graph.edges(into: spec.id).first, let reader = byID[read.from.node] as? any ReadsFile,
                  let color = reader.videoColor(), let hdr = color.hdr else { continue }
            let file = reader.mediaDescription ?? "the input"
            throw GraphError(.invalidGraph, at: "edges[\(edge.index)]",
                             "cannot connect \"\(edge.from)\" to \"\(edge.to)\" for \(file): its video is HDR (\(hdr == .pq ? "PQ" : "HLG")), "
                             + "and \(target.descriptor.type) takes SDR frames (their colours would be wrong); "
                             + "set \(spec.id)'s \"toneMap\": true (decode then maps HDR to SDR on its own frames)")
        }
    }
}
