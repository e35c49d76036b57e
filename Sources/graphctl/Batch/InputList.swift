import FoundationEssentials
import Glibc
import GraphKit

/// Where a batch's inputs come from: each `--inputs` is a folder (the regular files directly in
/// it, hidden ones left out), a glob pattern (`*`, `?`, `[…]`, matched by glob(3); regular files
/// only) or a manifest (a text file, one path per line, LF or CRLF; blank lines and lines
/// starting with `#` ignored; relative paths are relative to the manifest's folder). Together
/// they are deduplicated and sorted by their bytes, so every machine given the same command line
/// and the same files sees the same list, and `{index}` is the place in it.
///
/// Paths are bytes, as the file system keeps them: a name that is not UTF-8 is an input like
/// any other, shown with its stray bytes escaped (`caf\xE9.wav`), and read by its own bytes.
enum InputList {
    /// Every input, sorted. An unreadable source is 66; so is a batch with no input at all.
    static func list(_ sources: [String]) throws(GraphError) -> [BatchInput] {
        var found = Set<[UInt8]>()
        for source in sources {
            for path in try paths(of: source) { found.insert(path) }
        }
        guard !found.isEmpty else {
            throw GraphError(.inputUnreadable, at: "--inputs", "no inputs: \(sources.map { "\"\($0)\"" }.joined(separator: ", ")) \(sources.count == 1 ? "holds" : "hold") no file")
        }
        let sorted = found.sorted { $0.lexicographicallyPrecedes($1) }
        return sorted.enumerated().map { BatchInput(bytes: $1, index: $0) }
    }

    /// The manifests among `sources` (files the batch reads, which nothing may write).
    static func manifests(_ sources: [String]) -> [String] {
        sources.filter { source in
            var st = stat()
            return stat(source, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
        }
    }

    static func isPattern(_ s: String) -> Bool {
        s.contains("*") || s.contains("?") || s.contains("[")
    }

    private static func paths(of source: String) throws(GraphError) -> [[UInt8]] {
        var st = stat()
        if stat(source, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { return try folder(source) }
            if (st.st_mode & S_IFMT) == S_IFREG { return try manifest(source) }
            throw GraphError(.inputUnreadable, at: "--inputs \(source)", "not a folder, a manifest or a glob pattern")
        }
        if isPattern(source) { return glob(source) }
        throw GraphError(.inputUnreadable, at: "--inputs \(source)", "no such file or folder")
    }

    private static func folder(_ path: String) throws(GraphError) -> [[UInt8]] {
        guard let dir = opendir(path) else {
            throw GraphError(.inputUnreadable, at: "--inputs \(path)", "cannot read the folder: \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        let prefix = Array((path.hasSuffix("/") ? path : path + "/").utf8)
        var result: [[UInt8]] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name.first == UInt8(ascii: ".") { continue }  // hidden, and an output's `.name.partial`
            let full = prefix + name
            if isRegularFile(full) { result.append(full) }
        }
        return result
    }

    private static func glob(_ pattern: String) -> [[UInt8]] {
        var g = glob_t()
        defer { globfree(&g) }
        guard Glibc.glob(pattern, 0, nil, &g) == 0 else { return [] }
        var result: [[UInt8]] = []
        for i in 0..<Int(g.gl_pathc) {
            guard let p = g.gl_pathv[i] else { continue }
            let path = Array(UnsafeRawBufferPointer(start: p, count: strlen(p)))
            if isRegularFile(path) { result.append(path) }
        }
        return result
    }

    private static func manifest(_ path: String) throws(GraphError) -> [[UInt8]] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw GraphError(.inputUnreadable, at: "--inputs \(path)", "cannot read the manifest: \(OutputFile.reason(error))")
        }
        guard !data.contains(0) else {
            throw GraphError(.inputUnreadable, at: "--inputs \(path)",
                             "not a manifest: a manifest is a text file with one path per line (a folder or a glob pattern lists files)")
        }
        let base: [UInt8] = path.lastIndex(of: "/").map { Array(path[...$0].utf8) } ?? []
        var result: [[UInt8]] = []
        // Lines end with LF or CRLF; a line is its bytes, whatever their encoding.
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            var line = Array(raw)
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            let start = line.firstIndex { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            guard let start, line[start] != UInt8(ascii: "#") else { continue }
            result.append(line.first == UInt8(ascii: "/") ? line : base + line)
        }
        return result
    }

    static func isRegularFile(_ path: [UInt8]) -> Bool {
        var st = stat()
        return withCString(path) { stat($0, &st) } == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    static func isRegularFile(_ path: String) -> Bool { isRegularFile(Array(path.utf8)) }

    /// The file a path of bytes leads to.
    static func identity(_ path: [UInt8]) -> FileIdentity? {
        var st = stat()
        return withCString(path) { stat($0, &st) } == 0 ? FileIdentity(st) : nil
    }

    /// `body` given `bytes` as a C string.
    static func withCString<T>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        (bytes + [0]).withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { body($0.baseAddress!) } }
    }

    /// `bytes` as text: UTF-8 as it is, every byte that is not part of UTF-8 as `\xHH`.
    static func escaped(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var out = ""
        var i = 0
        while i < bytes.count {
            let lead = bytes[i]
            let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0
            if length > 0, i + length <= bytes.count, let scalar = String(validating: bytes[i..<(i + length)], as: UTF8.self) {
                out += scalar
                i += length
            } else {
                let hex = String(lead, radix: 16, uppercase: true)
                out += "\\x" + (hex.count == 1 ? "0" : "") + hex
                i += 1
            }
        }
        return out
    }
}
