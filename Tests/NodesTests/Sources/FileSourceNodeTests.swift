import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite struct FileSourceNodeTests {
    @Test(.media) func readsEveryByteOfTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("bytes.bin").path
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let h = try NodeHarness(#"{ "type": "source.file", "params": { "path": "\#(path)" } }"#)
        let read = try h.pullAll().flatMap(\.bytes)
        #expect(read == bytes)
    }

    @Test(.media) func aMissingFileIsAnInputErrorBeforeAnythingRuns() {
        #expect(throws: GraphError(.inputUnreadable, at: "nodes.node.params.path", "cannot read \"/nonexistent.wav\": no such file", node: "node")) {
            try NodeHarness(#"{ "type": "source.file", "params": { "path": "/nonexistent.wav" } }"#)
        }
        #expect(throws: GraphError(.inputUnreadable, at: "nodes.node.params.path", "cannot read \"/tmp\": it is a folder", node: "node")) {
            try NodeHarness(#"{ "type": "source.file", "params": { "path": "/tmp" } }"#)
        }
    }
}
