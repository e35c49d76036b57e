import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl batch --shard`: N processes over one folder take every input exactly once; a
/// shard keeps its inputs when more are added; `--shard auto` reads Kubernetes' variables.
@Suite(.media) struct BatchShardTests {
    /// The inputs a shard would run (`--dry-run`), in a folder of `count` inputs.
    static func members(_ folder: URL, _ shard: String, environment: [String: String]? = nil) throws -> [String] {
        let r = try RunningGraphctl(BatchTests.batch(folder, ["--shard", shard, "--dry-run"]), environment: environment).wait()
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map { String($0.dropFirst("run ".count)) }
    }

    @Test(.timeLimit(.minutes(10))) func shardProcessesTakeEveryInputExactlyOnce() throws {
        let folder = try BatchTests.inputs(36, seconds: 0.1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let summaries = folder.appendingPathComponent("summaries")
        // Three shards at once over one folder, as three pods of an Indexed Job would.
        let shards = try (0..<3).map { i in
            try Graphctl.start(BatchTests.batch(folder, ["--shard", "\(i)/3", "--jobs", "1", "--summary", "\(summaries.path)/s-{shard}.json"]))
        }
        var seen: [String] = []
        for (i, shard) in shards.enumerated() {
            let r = shard.wait()
            #expect(r.status == 0, "shard \(i): \(r.stderr)")
            let s = try BatchTests.summary(summaries.appendingPathComponent("s-\(i).json"))
            #expect(BatchTests.string(s["shard"]) == "\(i)/3")
            let done = BatchTests.entries(s).compactMap { BatchTests.string($0["input"]) }
            #expect(BatchTests.entries(s).allSatisfy { BatchTests.string($0["status"]) == "completed" })
            #expect(!done.isEmpty && done.count < 36, "shard \(i) has a share: \(done.count)")
            seen += done
        }
        let all = (0..<36).map { "\(folder.path)/in/\(BatchTests.name($0))" }
        #expect(seen.sorted() == all, "every input exactly once")
        #expect(Set(seen).count == seen.count)
        #expect(BatchTests.files(in: folder.appendingPathComponent("out")).count == 36)
    }

    @Test func sharesStayPutWhenInputsAreAddedAndAutoReadsKubernetes() throws {
        let folder = try BatchTests.inputs(30, seconds: 0.1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let before = try (0..<4).map { try Self.members(folder, "\($0)/4") }
        #expect(before.flatMap { $0 }.sorted() == (0..<30).map { "\(folder.path)/in/\(BatchTests.name($0))" })
        // What each pod of an Indexed Job of 4 takes, with the same command line.
        for i in 0..<4 {
            var environment = ProcessInfo.processInfo.environment
            environment["JOB_COMPLETION_INDEX"] = "\(i)"
            environment["JOB_COMPLETIONS"] = "4"
            #expect(try Self.members(folder, "auto", environment: environment) == before[i])
        }
        // Twenty more inputs: every earlier input stays in its shard.
        let seed = folder.appendingPathComponent("in/a000.wav").path
        for i in 30..<50 { try FileManager.default.copyItem(atPath: seed, toPath: "\(folder.path)/in/\(BatchTests.name(i))") }
        let after = try (0..<4).map { try Self.members(folder, "\($0)/4") }
        for i in 0..<4 {
            #expect(Set(before[i]).isSubset(of: Set(after[i])), "shard \(i) kept its inputs")
        }
        #expect(after.flatMap { $0 }.count == 50)

        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "JOB_COMPLETIONS")
        environment["JOB_COMPLETION_INDEX"] = "1"
        let r = try RunningGraphctl(BatchTests.batch(folder, ["--shard", "auto", "--dry-run"]), environment: environment).wait()
        #expect(r.status == 64 && r.stderr.contains("JOB_COMPLETIONS is not set"), "\(r.stderr)")
    }
}
