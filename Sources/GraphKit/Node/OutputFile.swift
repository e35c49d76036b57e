import FoundationEssentials
import Glibc

/// A file a node writes, by the engine's rule: written beside the target under a temporary
/// name and renamed when complete, so an existing file is replaced only by a complete one and a
/// failed run leaves nothing under the target name. The temporary name is fixed per target, so
/// the next run to the same target removes what a killed run left.
public struct OutputFile: Sendable {
    /// The path as the graph gives it (relative paths are relative to the current folder).
    public let path: String
    /// Where errors point: `nodes.file.params.path`.
    public let location: String
    public let node: String

    public init(path: String, location: String, node: String) {
        self.path = path
        self.location = location
        self.node = node
    }

    public var target: URL { URL(fileURLWithPath: path) }

    /// `path` made absolute against `folder` (the current one by default), with `.` and `..`
    /// worked out: two paths to one file (`out/a.mp4`, `./out/a.mp4`, its absolute path) give
    /// the same text. Symbolic links are left as they are.
    public static func absolute(_ path: String, from folder: String = FileManager.default.currentDirectoryPath) -> String {
        let full = path.hasPrefix("/") ? path : folder + "/" + path
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }
    public var temporary: URL {
        target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).partial")
    }

    /// Creates missing folders, removes a stale temporary file and checks that the file can be
    /// created, before anything runs. `inPlace` writes under the target name from the start (a
    /// fragmented recording that must survive a crash). Throws exit status 73.
    public func prepare(inPlace: Bool = false) throws(GraphError) {
        let fm = FileManager.default
        let folder = target.deletingLastPathComponent()
        var isDirectory = false
        if fm.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory else { throw failure("cannot write \"\(path)\": \"\(folder.path)\" is a file, not a folder") }
        } else {
            do {
                try fm.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw failure("cannot create the folder for \"\(path)\": \(Self.reason(error))")
            }
        }
        if fm.fileExists(atPath: target.path, isDirectory: &isDirectory), isDirectory {
            throw failure("cannot write \"\(path)\": it is a folder")
        }
        try? fm.removeItem(at: temporary)
        guard fm.createFile(atPath: (inPlace ? target : temporary).path, contents: nil) else {
            throw failure("cannot write in \"\(folder.path)\": permission denied or disk full")
        }
    }

    /// Moves the finished temporary file under the target name; rename(2) replaces it
    /// atomically, so readers see the old file or the new one.
    public func commit() throws(GraphError) {
        guard rename(temporary.path, target.path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw failure("cannot move the finished file to \"\(path)\": \(reason)")
        }
    }

    /// Removes the temporary file (a failed or cancelled run).
    public func discard() {
        try? FileManager.default.removeItem(at: temporary)
    }

    /// Removes the target itself (cancelling an in-place recording).
    public func removeTarget() {
        try? FileManager.default.removeItem(at: target)
    }

    func failure(_ message: String) -> GraphError {
        GraphError(.outputUnwritable, at: location, message, node: node)
    }

    /// The system's words for why a file operation failed ("Permission denied").
    public static func reason(_ error: any Error) -> String {
        if let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }
}
