import Foundation
import Glibc
import Testing
@testable import GraphKitCore
import GraphKit
import GraphKitTesting
import Nodes

/// Pass 2b alone: two outputs that lead to one file, compared as the run compares files (the
/// folder by identity, the name in it), from the working directory the loader is given.
@Suite final class WriterCollisionsTests {
    /// A folder of each test's own, removed after it.
    let folder: String
    init() throws {
        folder = try TestMedia.temporaryFolder().path
        try FileManager.default.createDirectory(atPath: folder + "/real", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "real")
    }
    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// Two sinks writing `a` and `b`; `--set`s as given.
    func problems(_ a: String, _ b: String, in workingDirectory: String, _ overrides: [String] = []) throws -> [String] {
        let nodes = #"{ "one": { "type": "sink.mp4", "params": { "path": "\#(a)" } }, "two": { "type": "sink.mp4", "params": { "path": "\#(b)" } } }"#
        guard case .object(let members) = try JSONParser.parse(nodes) else { throw GraphError(.usage, "not an object") }
        let table = ResolveNodes.run(members, overrides: try overrides.map { try GraphLoader.Override(parsing: $0) }, registry: .builtIn).result
        let edges = ResolveEdges.run([], nodes: table).result
        return WriterCollisions.run(table, edges, workingDirectory: workingDirectory).map(\.description)
    }

    /// A folder reached through a symbolic link is the folder: text would not see it.
    @Test func aFolderThroughALinkIsTheSameFolder() throws {
        #expect(try problems("real/a.mp4", "link/a.mp4", in: folder) == [
            #"nodes.two.params.path: "link/a.mp4" is also written by nodes.one.params.path: each output needs a file of its own"#,
        ])
        #expect(try problems("real/a.mp4", "link/b.mp4", in: folder).isEmpty)
    }

    /// Relative paths are relative to the working directory given, never the process's.
    @Test func relativePathsAreRelativeToTheWorkingDirectoryGiven() throws {
        #expect(FileManager.default.currentDirectoryPath != folder)
        #expect(try problems("a.mp4", "\(folder)/a.mp4", in: folder).count == 1)
        #expect(try problems("a.mp4", "\(folder)/a.mp4", in: folder + "/real").isEmpty)
        // A folder not made yet: the nearest one that exists, and the rest of the path.
        #expect(try problems("new/deeper/a.mp4", "link/../new/./deeper/a.mp4", in: folder).count == 1)
    }

    /// The writer named is where its path was set: a `--set` when one gave it.
    @Test func theSecondWriterIsNamedWhereItsPathWasSet() throws {
        #expect(try problems("a.mp4", "b.mp4", in: folder, ["two.path=link/../a.mp4"]) == [
            #"--set two.path: "link/../a.mp4" is also written by nodes.one.params.path: each output needs a file of its own"#,
        ])
    }

    /// Two names of one existing file (a hard link) are two names: each output replaces its own
    /// name, as the run's rule has it (``FileRoles``), so they do not collide.
    @Test func hardLinksAreTwoNames() throws {
        FileManager.default.createFile(atPath: folder + "/real/a.mp4", contents: Data())
        #expect(link(folder + "/real/a.mp4", folder + "/real/b.mp4") == 0)
        #expect(try problems("real/a.mp4", "real/b.mp4", in: folder).isEmpty)
    }

    /// The loader passes its working directory to the pass: `GraphLoader(workingDirectory:)`.
    @Test func theLoaderUsesTheWorkingDirectoryItIsGiven() throws {
        let graph = GraphLoaderTests.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "duration": 1 } },
            "aac": { "type": "encode.aac" },
            "file": { "type": "sink.mp4", "params": { "path": "x.m4a" } },
            "copy": { "type": "sink.mp4", "params": { "path": "\(folder)/real/x.m4a" } }
            """, edges: #""mic.out -> aac.in", "aac.out -> file.audio", "aac.out -> copy.audio""#)
        #expect(throws: GraphError(.invalidGraph, at: "nodes.copy.params.path",
                                   #""\#(folder)/real/x.m4a" is also written by nodes.file.params.path: each output needs a file of its own"#)) {
            try GraphLoader(registry: .builtIn, workingDirectory: folder + "/link").load(json: graph)
        }
        #expect(throws: Never.self) { try GraphLoader(registry: .builtIn, workingDirectory: folder).load(json: graph) }
    }
}
