import FoundationEssentials
import Glibc
import GraphKit

/// Where a batch's inputs come from: each `--inputs` is a folder (the regular files directly in
/// it, hidden ones left out), a glob pattern (`*`, `?`, `[…]`, matched by glob(3); regular files
/// only) or a manifest (a text file, one path per line; blank lines and lines starting with `#`
/// ignored; relative paths are relative to the manifest's folder). Together they are
/// deduplicated and sorted by their bytes, so every machine given the same command line and the
/// same files sees the same list, and `{index}` is the place in it.
enum InputList {
    /// Every input, sorted. An unreadable source is 66; so is a batch with no input at all.
    static func list(_ sources: [String]) throws(GraphError) -> [BatchInput] {
        var found = Set<String>()
        for source in sources {
            for path in try paths(of: source) { found.insert(path) }
        }
        guard !found.isEmpty else {
            throw GraphError(.inputUnreadable, at: "--inputs", "no inputs: \(sources.map { "\"\($0)\"" }.joined(separator: ", ")) \(sources.count == 1 ? "holds" : "hold") no file")
        }
        let sorted = found.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return sorted.enumerated().map { BatchInput(path: $1, index: $0) }
    }

    static func isPattern(_ s: String) -> Bool {
        s.contains("*") || s.contains("?") || s.contains("[")
    }

    private static func paths(of source: String) throws(GraphError) -> [String] {
        var st = stat()
        if stat(source, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { return try folder(source) }
            if (st.st_mode & S_IFMT) == S_IFREG { return try manifest(source) }
            throw GraphError(.inputUnreadable, at: "--inputs \(source)", "not a folder, a manifest or a glob pattern")
        }
        if isPattern(source) { return glob(source) }
        throw GraphError(.inputUnreadable, at: "--inputs \(source)", "no such file or folder")
    }

    private static func folder(_ path: String) throws(GraphError) -> [String] {
        guard let dir = opendir(path) else {
            throw GraphError(.inputUnreadable, at: "--inputs \(path)", "cannot read the folder: \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        let prefix = path.hasSuffix("/") ? path : path + "/"
        var result: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasPrefix(".") { continue }  // hidden, and an output's `.name.partial`
            let full = prefix + name
            if isRegularFile(full) { result.append(full) }
        }
        return result
    }

    private static func glob(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard Glibc.glob(pattern, 0, nil, &g) == 0 else { return [] }
        var result: [String] = []
        for i in 0..<Int(g.gl_pathc) {
            guard let p = g.gl_pathv[i] else { continue }
            let path = String(cString: p)
            if isRegularFile(path) { result.append(path) }
        }
        return result
    }

    private static func manifest(_ path: String) throws(GraphError) -> [String] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw GraphError(.inputUnreadable, at: "--inputs \(path)", "cannot read the manifest: \(OutputFile.reason(error))")
        }
        guard !data.contains(0), let text = String(validating: data, as: UTF8.self) else {
            throw GraphError(.inputUnreadable, at: "--inputs \(path)",
                             "not a manifest: a manifest is a text file with one path per line (a folder or a glob pattern lists files)")
        }
        let base: String = {
            guard let slash = path.lastIndex(of: "/") else { return "" }
            return String(path[...slash])
        }()
        var result: [String] = []
        for raw in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let entry = String(line)
            result.append(entry.hasPrefix("/") ? entry : base + entry)
        }
        return result
    }

    static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }
}
