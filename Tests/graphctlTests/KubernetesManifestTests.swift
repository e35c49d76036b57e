import Foundation
import Testing
import GraphKit
import GraphKitTesting

/// deploy/kubernetes/: validated against the Kubernetes API schema offline (kubernetes-validate,
/// installed by scripts/install-deps.sh, ships the schemas), a broken copy refused, and the Job's
/// own command line run here once per index, as its pods would run it.
@Suite struct KubernetesManifestTests {
    static let folder = Graphctl.root.appendingPathComponent("deploy/kubernetes")
    /// The Kubernetes release the manifests are written for: backoffLimitPerIndex and
    /// podFailurePolicy's FailIndex are stable from 1.33.
    static let version = "1.33.0"

    static func validate(_ paths: [String]) throws -> Graphctl.Result {
        try Graphctl.runCommand("/usr/bin/env", ["python3", "-m", "kubernetes_validate", "--strict", "--kubernetes-version", version] + paths)
    }

    /// A YAML file as JSON, read by PyYAML (which kubernetes-validate brings).
    static func load(_ path: String) throws -> JSONValue {
        let r = try Graphctl.runCommand("/usr/bin/env", ["python3", "-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))", path])
        #expect(r.status == 0, "\(r.stderr)")
        return try JSONParser.parse(r.stdout)
    }

    static func array(_ v: JSONValue?) -> [JSONValue] {
        if case .array(let a)? = v { return a }
        return []
    }

    static var manifests: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
            .map { folder.appendingPathComponent($0).path }
    }

    @Test func manifestsValidateAgainstTheKubernetesSchemaAndABrokenOneDoesNot() throws {
        #expect(Self.manifests.map { ($0 as NSString).lastPathComponent } == ["job.yaml", "pvc.yaml"])
        let r = try Self.validate(Self.manifests)
        #expect(r.status == 0, "kubernetes-validate (scripts/install-deps.sh installs it): \(r.stdout) \(r.stderr)")
        #expect(r.stdout.components(separatedBy: "passed for resource").count - 1 == 2, "\(r.stdout)")

        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let job = try String(contentsOfFile: Self.folder.appendingPathComponent("job.yaml").path, encoding: .utf8)
        let breakages = [
            ("a misspelt field", "  parallelism: 8", "  parallelism: 8\n  paralelism: 8"),
            ("a number as text", "backoffLimitPerIndex: 2", "backoffLimitPerIndex: \"two\""),
            ("a resource quantity as a list", "memory: 128Mi", "memory: [128]"),
            ("a volume without its claim's name", "claimName: graphkit-media", "claimNam: graphkit-media"),
        ]
        for (what, from, to) in breakages {
            #expect(job.contains(from), "\(what): the manifest changed; update the test")
            let broken = scratch.appendingPathComponent("broken.yaml")
            try job.replacingOccurrences(of: from, with: to).write(to: broken, atomically: true, encoding: .utf8)
            let b = try Self.validate([broken.path])
            #expect(b.status != 0, "\(what) must be refused: \(b.stdout)")
            #expect(b.stdout.contains("did not validate") || b.stderr.contains("did not validate"), "\(what): \(b.stdout) \(b.stderr)")
        }
    }

    /// What the schema cannot say: an Indexed Job whose pods all run `--shard auto` with
    /// JOB_COMPLETIONS equal to its completions, retried per index (which needs restartPolicy
    /// Never), on the claim pvc.yaml makes.
    @Test func theJobShardsByItsIndexOnTheSharedVolume() throws {
        let job = try Self.load(Self.folder.appendingPathComponent("job.yaml").path)
        let pvc = try Self.load(Self.folder.appendingPathComponent("pvc.yaml").path)
        let spec = try #require(job["spec"])
        #expect(spec["completionMode"] == "Indexed")
        #expect(spec["backoffLimitPerIndex"] != nil && spec["template"]?["spec"]?["restartPolicy"] == "Never")
        let containers = Self.array(spec["template"]?["spec"]?["containers"])
        let container = try #require(containers.first)
        guard case .number(let n)? = spec["completions"] else { Issue.record("no completions"); return }
        let count: JSONValue = .string(String(Int(n)))
        let env = Self.array(container["env"])
        #expect(env.contains { (e: JSONValue) -> Bool in e["name"] == "JOB_COMPLETIONS" && e["value"] == count })
        let words: [String] = Self.array(container["command"]).compactMap { (v: JSONValue) -> String? in BatchTests.string(v) }
        #expect(words.starts(with: ["graphctl", "batch"]))
        #expect(words.contains("--shard") && words[words.firstIndex(of: "--shard")! + 1] == "auto")
        let volume = Self.array(spec["template"]?["spec"]?["volumes"]).first
        #expect(volume?["persistentVolumeClaim"]?["claimName"] == pvc["metadata"]?["name"])
        #expect(container["resources"]?["requests"]?["cpu"] == container["resources"]?["limits"]?["cpu"],
                "the CPU limit sets the worker count, the request reserves it")

        // The pods' command line, run here for every index over one folder: each input once.
        let scratch = try BatchTests.inputs(20, seconds: 0.1)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = scratch.path
        try FileManager.default.moveItem(atPath: "\(data)/in", toPath: "\(data)/in-tmp")
        try FileManager.default.createDirectory(atPath: "\(data)/out", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: "\(data)/in-tmp", toPath: "\(data)/in")
        let arguments = words.dropFirst().map {
            $0.replacingOccurrences(of: "/usr/local/share/graphkit/graphs", with: Graphctl.root.appendingPathComponent("graphs").path)
                .replacingOccurrences(of: "/data/", with: "\(data)/").replacingOccurrences(of: "/data", with: data)
        }
        var done: [String] = []
        for index in 0..<Int(n) {
            var environment = ProcessInfo.processInfo.environment
            environment["JOB_COMPLETION_INDEX"] = String(index)
            environment["JOB_COMPLETIONS"] = String(Int(n))
            let r = try RunningGraphctl(Array(arguments), environment: environment).wait()
            #expect(r.status == 0, "index \(index): \(r.stderr)")
            let s = try BatchTests.summary(URL(fileURLWithPath: "\(data)/out/summary-\(index).json"))
            done += BatchTests.entries(s).compactMap { BatchTests.string($0["input"]) }
        }
        #expect(done.sorted() == (0..<20).map { "\(data)/in/\(BatchTests.name($0))" })
        let written = BatchTests.files(in: URL(fileURLWithPath: "\(data)/out"))
        #expect(written.filter { $0.hasSuffix(".json") && !$0.hasPrefix("summary") }.count == 20)
        #expect(written.filter { $0.hasSuffix(".png") }.count == 20)
    }
}
