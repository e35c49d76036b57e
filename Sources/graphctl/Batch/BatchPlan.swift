import FoundationEssentials
import Glibc
import GraphKit

/// Every input checked before the first run: its overrides (`--set` and the expanded `--map`s)
/// loaded into the graph, the files it will write found from the nodes' contracts (the
/// parameters declared `writesFile`), and no output shared by two inputs or overwriting one.
struct PlannedInput: Sendable {
    let input: BatchInput
    /// The `--map` overrides for this input (the `--set` ones are the same for all).
    let overrides: [GraphLoader.Override]
    /// The files the run writes, as the graph names them.
    let outputs: [String]

    /// Whether every output is there under its final name. Outputs are written under a
    /// temporary name and renamed when complete, so one that is there is complete: a run killed
    /// half-way (even by SIGKILL) leaves only its `.name.partial`. A symbolic link there is not
    /// an output (someone else's, unless links are followed). An input that writes no file is
    /// never done.
    var isDone: Bool {
        !outputs.isEmpty && outputs.allSatisfy { path in
            var st = stat()
            let found = OutputFile.followsSymbolicLinks ? stat(path, &st) : lstat(path, &st)
            return found == 0 && (st.st_mode & S_IFMT) == S_IFREG
        }
    }

    /// Removes temporary files a killed run left for these outputs.
    func removePartials() {
        for path in outputs {
            OutputFile(path: path, location: "", node: "").removeLeftovers()
        }
    }
}

enum BatchPlan {
    /// How many inputs' problems are printed before the rest are counted.
    static let shownProblems = 10

    /// What every input reads besides its own files: the graph file, the plugins, the
    /// manifests; and the summary the batch writes.
    struct SharedFiles {
        var graphFile: String
        var plugins: [LoadedPlugin]
        var manifests: [String]
        var summary: String?
    }

    /// Plans every input, or throws every problem found (65): a `--map` that gives a parameter
    /// a value it cannot take, for a named input; two inputs that would write the same file; a
    /// file written that some input, the graph file, a plugin or a manifest is (by what the
    /// paths lead to: a link or another name for an input is that input); the summary among them.
    static func make(inputs: [BatchInput], bytes: [UInt8], loader: GraphLoader, files: SharedFiles,
                     fixed: [GraphLoader.Override], templates: [InputTemplate]) throws(GraphError) -> [PlannedInput] {
        let graphFile = files.graphFile
        var planned: [PlannedInput] = []
        planned.reserveCapacity(inputs.count)
        var problems: [GraphError.Problem] = []
        var failedInputs = 0
        /// Inputs whose own (templated) problems are shown, and those left out.
        var shownInputs = 0, unshown = 0
        var code = GraphError.Code.invalidGraph
        /// Who writes each output (by its place): the first input, the parameter, and every
        /// input that writes it, in order.
        var writers: [FileRoles.Place: (path: String, key: String, inputs: [BatchInput])] = [:]
        var shared: [FileRoles.Place] = []
        /// The inputs, by the file each is, and by place for those named as text.
        var inputFiles: [FileIdentity: BatchInput] = [:]
        var inputPlaces: [FileRoles.Place: BatchInput] = [:]
        var identities: [String: FileIdentity] = [:]
        for input in inputs {
            if let identity = InputList.identity(input.bytes) {
                inputFiles[identity] = inputFiles[identity] ?? input
                identities[input.path] = identity
            }
            if !input.isEscaped { inputPlaces[FileRoles.Place(of: input.path)] = input }
        }
        /// Every file of the batch, for the summary's check.
        var everything = FileRoles()
        everything.reads(graphFile, as: "the graph file")
        for plugin in files.plugins { everything.reads(plugin.path, as: "the plugin \(plugin.name)") }
        for manifest in files.manifests { everything.reads(manifest, as: "--inputs \(manifest)") }
        for input in inputs { everything.reads(input.path, as: "the input \"\(input.path)\"", file: identities[input.path]) }
        var seen = Set<String>()
        func note(_ problem: GraphError.Problem) {
            if seen.insert(problem.description).inserted { problems.append(problem) }
        }

        for input in inputs {
            let overrides = templates.map { $0.override(for: input) }
            let graph: Graph
            do {
                graph = try loader.load(bytes: bytes, file: graphFile, overrides: fixed + overrides)
            } catch {
                if error.code.exitStatus > code.exitStatus { code = error.code }
                // The first failing input shows every problem; the others only those that a
                // template made (the rest would repeat the same message for every input).
                let own = error.problems.compactMap { rewrite($0, input: input, templates: templates) }
                failedInputs += 1
                if failedInputs == 1 {
                    problems += error.problems.map { rewrite($0, input: input, templates: templates) ?? $0 }
                    if !own.isEmpty { shownInputs = 1 }
                } else if !own.isEmpty {
                    if shownInputs < shownProblems { problems += own; shownInputs += 1 } else { unshown += 1 }
                }
                continue
            }
            if let app = graph.nodes.first(where: { $0.descriptor.category == .app }) {
                throw GraphError(.invalidGraph, at: "nodes.\(app.id).type",
                                 "\(app.descriptor.type) is fed or drained by code (GraphRun.input/output); graphctl cannot run it")
            }
            // This input's run: its outputs against what it reads (its input, the graph file,
            // the plugins, the manifests) and against each other.
            let labelled = fixed.map { (option: "--set", override: $0) } + overrides.map { (option: "--map", override: $0) }
            var roles = fileRoles(of: graph, overrides: labelled, graphFile: graphFile, plugins: files.plugins, known: identities)
            for manifest in files.manifests { roles.reads(manifest, as: "--inputs \(manifest)") }
            let own = roles.problems
            if !own.isEmpty {
                failedInputs += 1
                if shownInputs < shownProblems {
                    shownInputs += 1
                    for problem in own {
                        let templated = problem.location?.hasPrefix("--map") == true
                        note(templated ? GraphError.Problem(problem.location, "for input \"\(input.path)\": \(problem.message)") : problem)
                    }
                } else {
                    unshown += 1
                }
                continue
            }
            var outputs: [String] = []
            for file in graph.fileParameters where file.writes {
                let key = "\(file.node).\(file.parameter)"
                let place = FileRoles.Place(of: file.path)
                everything.writes(file.path, as: templates.contains { $0.key == key } ? "--map \(key) for input \"\(input.path)\"" : key)
                if writers[place] != nil {
                    if writers[place]!.inputs.count == 1 { shared.append(place) }
                    writers[place]!.inputs.append(input)
                } else if let overwritten = FileIdentity(path: file.path).flatMap({ inputFiles[$0] }) ?? inputPlaces[place] {
                    note(GraphError.Problem(
                        "--map \(key)", "for input \"\(input.path)\", \(key) would overwrite the input \"\(overwritten.path)\""))
                } else {
                    writers[place] = (file.path, key, [input])
                }
                outputs.append(file.path)
            }
            planned.append(PlannedInput(input: input, overrides: overrides, outputs: outputs))
        }
        for place in shared.prefix(shownProblems) {
            guard let w = writers[place] else { continue }
            problems.append(collision(w.path, key: w.key, inputs: w.inputs, of: inputs.count, templates: templates))
        }
        if let summary = files.summary {
            for problem in everything.problems(writing: summary, as: "--summary") { note(problem) }
        }
        if unshown > 0 {
            problems.append(GraphError.Problem(nil, "… and \(unshown) more inputs of \(inputs.count) with problems"))
        }
        if !problems.isEmpty { throw GraphError(code, problems) }
        return planned
    }

    /// Two inputs or more would write one file: said at the parameter (its `--map`, or its place
    /// in the graph file when no `--map` sets it), with the inputs.
    static func collision(_ path: String, key: String, inputs: [BatchInput], of total: Int,
                          templates: [InputTemplate]) -> GraphError.Problem {
        let dot = key.firstIndex(of: ".")!
        let location = templates.last(where: { $0.key == key }).map { "--map \($0.source)" }
            ?? "nodes.\(key[..<dot]).params.\(key[key.index(after: dot)...])"
        let named = inputs.prefix(2).map { "\"\($0.path)\"" }.joined(separator: ", ")
        let who = inputs.count == total ? "every input (\(total): \(named), …)"
            : "\(inputs.count) inputs (\(named)\(inputs.count > 2 ? ", …" : ""))"
        // Suggest a template that parts them where this one did not: the input's folder when
        // the names alone collide (a/x.wav and b/x.wav), its place in the list past that.
        let used = templates.last(where: { $0.key == key })?.source ?? ""
        let suggestion = !used.contains("{stem}") && !used.contains("{name}") ? "out/{stem}"
            : !used.contains("{dir}") ? "out/{dir}/{stem}" : "out/{index}-{stem}"
        return GraphError.Problem(location, "\(key) writes \"\(path)\" for \(who): give each input a file of its own, "
            + "such as --map \(key)=\(suggestion)\(suffix(of: path)), or turn it off with --map \(key)=")
    }

    /// A problem a `--map` caused, said as the `--map` and the input: nil for one in the graph
    /// or a `--set`, which is the same for every input.
    static func rewrite(_ problem: GraphError.Problem, input: BatchInput, templates: [InputTemplate]) -> GraphError.Problem? {
        guard let location = problem.location, location.hasPrefix("--set ") else { return nil }
        let key = String(location.dropFirst("--set ".count))
        guard let template = templates.last(where: { $0.key == key }) else { return nil }
        return GraphError.Problem("--map \(template.source)", "for input \"\(input.path)\": \(problem.message)")
    }

    /// `.json` for `out/waveform.json`: the example in a message keeps the output's kind.
    static func suffix(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[dot...])
    }
}
