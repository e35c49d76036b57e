/// Pass 2b, on the nodes and which of their inputs the edges connect: each file the graph writes
/// has one writer. Two outputs (parameters
/// declared `writesFile`, and the files a node names in its folders: sink.hls's playlists, the
/// thumbnails' pictures, ``NodeDescriptor/writtenFilesInFolders``) that lead to one file would
/// share its temporary file: the second is reported, naming the first, among the nodes' problems
/// (65 when the graph is loaded, not 73 while it runs). Files are compared as the run compares
/// them (``FileRoles/Place``): by the folder they are in, found by identity (device and inode,
/// through any link), and their name in it; for a folder not made yet, the nearest one that
/// exists and the rest of the path. So `out/a.m4a`, `./out/a.m4a` and `link-to-out/a.m4a` are one
/// file. Relative paths are relative to `workingDirectory`, which the loader is given.
enum WriterCollisions {
    static func run(_ nodes: NodeTable, _ edges: EdgeTable, workingDirectory: String) -> [GraphError.Problem] {
        var problems = Problems()
        /// Where the first writer of each place is set.
        var writers: [FileRoles.Place: String] = [:]
        for k in nodes.indices {
            guard let kind = nodes.kind(k), !kind.writtenFiles.isEmpty || kind.descriptor.writtenFilesInFolders != nil,
                  let node = nodes[k] else { continue }
            let connected = Set(edges.connections.lazy.filter { $0.to == k }.map(\.edge.to.port))
            for file in kind.descriptor.writtenFiles(node.spec.parameters, connectedInputs: connected) {
                let (parameter, path) = (file.parameter, file.path)
                let location = node.location(of: parameter)
                let place = FileRoles.Place(of: path, from: workingDirectory)
                if let first = writers[place] {
                    problems.add(location, "\"\(path)\" is also written by \(first): each output needs a file of its own")
                } else {
                    writers[place] = location
                }
            }
        }
        return problems.list
    }
}
