import Foundation
import GraphKit

/// Runs the built `graphctl` as a user would, and captures what it prints and its exit status.
struct Graphctl {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The package root (for graphs/), found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The graphctl users install, built by tools/graphctl against GraphKit's shared library
    /// (`make test` builds it and names it in GRAPHCTL).
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["GRAPHCTL"] { return URL(fileURLWithPath: path) }
        return root.appendingPathComponent("tools/graphctl/.build/debug/graphctl")
    }()

    static func graph(_ name: String) -> String { root.appendingPathComponent("graphs/\(name)").path }

    /// Starts graphctl; `wait` collects the result.
    static func start(_ arguments: [String], in folder: URL? = nil) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        p.executableURL = executable
        p.arguments = arguments
        if let folder { p.currentDirectoryURL = folder }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        return (p, out, err)
    }

    static func wait(_ started: (Process, Pipe, Pipe)) -> Result {
        let (p, out, err) = started
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    /// Runs another program (a shell that sets limits, then starts graphctl).
    static func runCommand(_ path: String, _ arguments: [String]) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        return wait((p, out, err))
    }

    static func run(_ arguments: String..., in folder: URL? = nil) throws -> Result {
        wait(try start(arguments, in: folder))
    }
}
