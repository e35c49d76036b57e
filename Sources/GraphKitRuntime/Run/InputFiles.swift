import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// The file a failing node reads, found through the run's own elements, so that a decode that
/// fails can say what is wrong with that file (``ContainerDiagnosis``) rather than repeat the
/// demuxer's words.
struct InputFile {
    /// The path, as the source element opens it.
    var path: String
    /// How messages name it: the source node's description (the quoted path).
    var name: String

    /// The nearest file upstream of node `id`: a `filesrc` among the elements of the nodes that
    /// feed it, directly or through others. Nil when nothing upstream reads a file.
    static func feeding(_ id: String, pipeline: Pipeline, graph: Graph,
                        nodes: [(spec: Graph.NodeSpec, node: any Node)]) -> InputFile? {
        var upstream: [String] = []
        var queue = graph.edges(into: id).map(\.from.node)
        while let next = queue.first {
            queue.removeFirst()
            guard !upstream.contains(next) else { continue }
            upstream.append(next)
            queue += graph.edges(into: next).map(\.from.node)
        }
        guard !upstream.isEmpty else { return nil }
        let files = all(in: pipeline, nodes: nodes)
        for nodeID in upstream {
            if let file = files[nodeID] { return file }
        }
        return nil
    }

    /// Every file the run reads, by the node that reads it.
    static func all(in pipeline: Pipeline, nodes: [(spec: Graph.NodeSpec, node: any Node)]) -> [String: InputFile] {
        var files: [String: InputFile] = [:]
        for (nodeID, path) in fileLocations(in: pipeline) {
            let name = nodes.first { $0.spec.id == nodeID }?.node.mediaDescription ?? "\"\(path)\""
            files[nodeID] = InputFile(path: path, name: name)
        }
        return files
    }

    /// The `location` of every `filesrc` in the pipeline, by the node it belongs to.
    private static func fileLocations(in pipeline: Pipeline) -> [String: String] {
        var found: [String: String] = [:]
        for element in pipeline.elements() {
            defer { gst_object_unref(UnsafeMutableRawPointer(element)) }
            let object = UnsafeMutableRawPointer(element)
            if factoryName(of: element) == "filesrc", let path = stringProperty(object, "location"),
               let node = pipeline.directory.node(owning: object.assumingMemoryBound(to: GstObject.self)) {
                found[node] = path
            }
        }
        return found
    }

    private static func factoryName(of element: UnsafeMutablePointer<GstElement>) -> String? {
        guard let factory = gst_element_get_factory(element),
              let name = gst_object_get_name(UnsafeMutableRawPointer(factory).assumingMemoryBound(to: GstObject.self)) else { return nil }
        defer { g_free(name) }
        return String(cString: name)
    }

    private static func stringProperty(_ object: UnsafeMutableRawPointer, _ name: String) -> String? {
        var value = GValue()
        g_value_init(&value, g_type_from_name("gchararray"))
        defer { g_value_unset(&value) }
        g_object_get_property(object.assumingMemoryBound(to: GObject.self), name, &value)
        return g_value_get_string(&value).map { String(cString: $0) }
    }
}

/// A node that reads a file it opened itself (`source.file`): after a completed run, the engine
/// warns when less media came out of it than the file states, or when the file changed while it
/// was read (cut or rewritten in place), since either leaves a short output that looks complete.
public protocol ReadsFile: Node {
    /// The length the file's header states, when it states one exactly (a WAV's data chunk).
    var statedDuration: MediaTime? { get }
    /// How the file changed since it was opened, in words, or nil when it did not.
    func changeSinceOpened() -> String?
    /// The colour of the file's first video stream as it states it (read when asked: the engine
    /// asks before the run only when an HDR video would matter); nil when it states none.
    func videoColor() -> VideoColor?
}

extension ReadsFile {
    /// None: a reader that does not know its file's colour is not checked for HDR.
    public func videoColor() -> VideoColor? { nil }
}
