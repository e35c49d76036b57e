import Foundation
import Testing
import GraphKit
import Nodes
import TestSupport

/// The media files the decode fuzz target found (Tests/Fixtures/fuzz-findings, README there):
/// each, read as `source.file → decode → sink.app` with every sample pulled, ends the run, failed
/// with a damaged-file error (70) that names the file, or completed.
@Suite(.media) struct FuzzFindingsTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz-findings")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasSuffix(".md") }.sorted()
    }

    @Test func thereAreFindingsToCheck() {
        #expect(!Self.files.isEmpty, "no files in \(Self.folder.path)")
    }

    @Test(.timeLimit(.minutes(10)), arguments: files)
    func aFoundFileEndsTheRunCleanly(_ name: String) throws {
        let path = Self.folder.appendingPathComponent(name).path
        let video = name.hasSuffix(".mkv") || name.hasSuffix(".mp4")
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": \(JSONValue.string(path)) } },
              "dec": { "type": "decode" }, "audio": { "type": "sink.app" }\(video ? #", "video": { "type": "sink.app" }"# : "") },
              "edges": [ "src.out -> dec.in", "dec.audio -> audio.in"\(video ? #", "dec.video -> video.in""# : "") ] }
            """)
        let run = try GraphRun(graph)
        let outputs = try (video ? ["audio", "video"] : ["audio"]).map { id throws(GraphError) in try run.output(id) }
        try run.start()
        while !run.isFinished {
            for o in outputs { _ = o.copyNextSampleBuffer(timeout: 0.01) }
        }
        let report = run.wait()
        if report.status == .completed { return }
        #expect(report.status == .failed)
        let error = try #require(report.error)
        #expect(error.code == .runFailed, "\(error)")
        #expect(error.description.contains(path), "\(error)")
    }
}
