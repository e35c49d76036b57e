/// Who reads and who writes which file, for one run or one batch: every writer is checked
/// against every reader and every other writer before anything runs, by what the paths lead to,
/// not by their text. Two paths collide when they lead to one existing file (after following
/// links: a symbolic or a hard link to an input is the input), or name one entry (the same name
/// in the same folder, found through links: a file not made yet), or when a writer's temporary
/// file (`.NAME.partial`, which a run replaces) would be a file that is read.
public struct FileRoles: Sendable {
    /// Where a name lives: the nearest folder on its path that exists (by identity), and the
    /// rest of the path from there. Two paths to one place name one file, made or not.
    public struct Place: Hashable, Sendable {
        var folder: FileIdentity?
        var rest: String

        /// The place of `path`; a relative path is relative to `workingDirectory` when it is
        /// given, else to the process's current folder.
        public init(of path: String, from workingDirectory: String? = nil) { self = FileRoles.place(of: path, from: workingDirectory) }
        init(folder: FileIdentity?, rest: String) {
            self.folder = folder
            self.rest = rest
        }
    }

    struct Entry: Sendable {
        var label: String
        var path: String
        var writes: Bool
        var file: FileIdentity?
        var place: Place
        var temporary: Place?
    }

    private(set) var entries: [Entry] = []

    public init() {}

    /// `path` is read, as `label` says (`nodes.src.params.path`, `--set src.path`, the graph file).
    /// `file` is the file read, when `path` is not how to reach it (a name shown escaped).
    public mutating func reads(_ path: String, as label: String, file: FileIdentity? = nil) {
        entries.append(Entry(label: label, path: path, writes: false, file: file ?? FileIdentity(path: path), place: Self.place(of: path)))
    }

    /// `path` is written, by the outputs' rule (a temporary file beside it, renamed over it).
    public mutating func writes(_ path: String, as label: String) {
        let (folder, name) = OutputFile.split(path)
        let temporary = folder == "." ? OutputFile.temporaryName(for: name) : (folder == "/" ? "" : folder) + "/" + OutputFile.temporaryName(for: name)
        entries.append(Entry(label: label, path: path, writes: true, file: FileIdentity(path: path), place: Self.place(of: path),
                             temporary: Self.place(of: temporary)))
    }

    /// Every collision, each said at the writer: empty when every writer has a file of its own.
    /// Each writer is compared only with the entries that can meet it (found by place, temporary
    /// place and file), so ten thousand numbered pictures are checked in linear time.
    public var problems: [GraphError.Problem] {
        var byPlace: [Place: [Int]] = [:], byTemporary: [Place: [Int]] = [:], byFile: [FileIdentity: [Int]] = [:]
        for (j, e) in entries.enumerated() {
            byPlace[e.place, default: []].append(j)
            if let t = e.temporary { byTemporary[t, default: []].append(j) }
            if let f = e.file { byFile[f, default: []].append(j) }
        }
        var found: [GraphError.Problem] = []
        for (i, writer) in entries.enumerated() where writer.writes {
            var candidates = Set(byPlace[writer.place] ?? []).union(byTemporary[writer.place] ?? [])
            if let t = writer.temporary { candidates.formUnion(byPlace[t] ?? []) }
            if let f = writer.file { candidates.formUnion(byFile[f] ?? []) }
            for j in candidates.sorted() where j != i && (!entries[j].writes || j < i) {
                if let problem = Self.problem(writer, entries[j]) { found.append(problem) }
            }
        }
        return found
    }

    /// The collisions of one more writer with every file here (in time linear in their number,
    /// for a batch's summary against all its inputs and outputs).
    public func problems(writing path: String, as label: String) -> [GraphError.Problem] {
        var roles = FileRoles()
        roles.writes(path, as: label)
        return entries.compactMap { Self.problem(roles.entries[0], $0) }
    }

    private static func problem(_ writer: Entry, _ other: Entry) -> GraphError.Problem? {
        guard let how = collision(writer, other) else { return nil }
        let verb = other.writes ? "written" : "read"
        let same = writer.path == other.path ? "" : " (\"\(other.path)\")"
        let advice = other.writes ? "each output needs a file of its own" : "a run must not write over a file it reads"
        return GraphError.Problem(writer.label, "\"\(writer.path)\" \(how) \(verb) by \(other.label)\(same): \(advice)")
    }

    /// Throws every collision (invalid graph, 65), before anything runs.
    public func check() throws(GraphError) {
        let problems = problems
        if !problems.isEmpty { throw GraphError(.invalidGraph, problems) }
    }

    /// How `writer` and `other` meet: "is the file", "is the name"; nil when they do not. Two
    /// writers meet only at one name: each replaces its name, so names that are links to one
    /// file (which a hostile user can plant, and which the outputs' rule refuses) or hard links
    /// to one file do not write one file.
    private static func collision(_ writer: Entry, _ other: Entry) -> String? {
        if other.writes {
            if writer.place == other.place { return writer.path == other.path ? "is also" : "is the same file as the one" }
            if writer.place == other.temporary { return "is the temporary name of the file" }
            if writer.temporary == other.place { return "would have its temporary file replace the file" }
            return nil
        }
        if let file = writer.file, file == other.file {
            return writer.path == other.path ? "is also" : "is, through a link, the file"
        }
        if writer.place == other.place { return writer.path == other.path ? "is also" : "is the same file as the one" }
        if let temporary = writer.temporary, !other.writes, temporary == other.place {
            return "would have its temporary file replace the file"
        }
        return nil
    }

    /// The place of `path`: its folder as it is found (links followed), or, for a folder not
    /// made yet, the nearest one that exists and the rest of the path, worked out as text.
    /// Relative to `workingDirectory` when it is given, else to the process's current folder.
    static func place(of path: String, from workingDirectory: String? = nil) -> Place {
        let path = workingDirectory.map { path.hasPrefix("/") ? path : $0 + "/" + path } ?? path
        let (folder, name) = OutputFile.split(path)
        if let identity = FileIdentity(path: folder) { return Place(folder: identity, rest: name) }
        var parts = OutputFile.absolute(path).split(separator: "/").map(String.init)
        var rest: [String] = []
        while let last = parts.popLast() {
            rest.insert(last, at: 0)
            if let identity = FileIdentity(path: "/" + parts.joined(separator: "/")) {
                return Place(folder: identity, rest: rest.joined(separator: "/"))
            }
        }
        return Place(folder: nil, rest: rest.joined(separator: "/"))
    }
}

extension Graph {
    /// A file a node's parameter names: written (a parameter declared `writesFile`, or a file the
    /// node names in a folder it writes: ``NodeDescriptor/writtenFilesInFolders``) or read (any
    /// other path parameter: a source's file, an overlay's image).
    public struct FileParameter: Sendable {
        public var node: String
        public var parameter: String
        public var path: String
        public var writes: Bool
    }

    /// Every file the graph's nodes read or write, in the graph's order; a file field of a list
    /// of records (`source.concat`'s pieces) once per record, as `pieces[1].path`.
    public var fileParameters: [FileParameter] {
        nodes.flatMap { node in
            node.descriptor.parameters.flatMap { declaration -> [FileParameter] in
                if case .records(let fields) = declaration.kind, case .records(let items)? = node.parameters[declaration.name] {
                    return items.enumerated().flatMap { i, record in
                        fields.compactMap { field -> FileParameter? in
                            guard case .string(let format) = field.kind, format == .path || field.writesFile,
                                  case .string(let path)? = record[field.name] else { return nil }
                            return FileParameter(node: node.id, parameter: "\(declaration.name)[\(i)].\(field.name)", path: path, writes: field.writesFile)
                        }
                    }
                }
                guard case .string(let format) = declaration.kind, format == .path || declaration.writesFile,
                      case .string(let path)? = node.parameters[declaration.name] else { return [] }
                return [FileParameter(node: node.id, parameter: declaration.name, path: path, writes: declaration.writesFile)]
            } + (node.descriptor.writtenFilesInFolders?(node.parameters, Set(edges(into: node.id).map(\.to.port))) ?? []).map {
                FileParameter(node: node.id, parameter: $0.parameter, path: $0.path, writes: true)
            }
        }
    }

    /// The graph's own readers and writers, each at its place in the graph.
    public var fileRoles: FileRoles {
        var roles = FileRoles()
        for f in fileParameters {
            let label = "nodes.\(f.node).params.\(f.parameter)"
            if f.writes { roles.writes(f.path, as: label) } else { roles.reads(f.path, as: label) }
        }
        return roles
    }
}
