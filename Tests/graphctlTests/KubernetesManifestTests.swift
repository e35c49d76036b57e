import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// deploy/kubernetes/: validated against the Kubernetes API schema offline (kubernetes-validate,
/// installed by scripts/install-deps.sh, ships the schemas), a broken copy refused; checked
/// against the Pod Security Standards' "restricted" profile (written out below, field by field)
/// and by checkov's Kubernetes policies (offline; install-deps.sh puts it in a venv of its own);
/// each hardening field asserted; the memory limit checked against a measured worst case; the
/// Job's own command line run here once per index, as its pods would run it.
@Suite(.media) struct KubernetesManifestTests {
    static let folder = Graphctl.root.appendingPathComponent("deploy/kubernetes")
    /// The Kubernetes release the manifests are written for: backoffLimitPerIndex and
    /// podFailurePolicy's FailIndex are stable from 1.33.
    static let version = "1.33.0"

    static func validate(_ paths: [String]) throws -> Graphctl.Result {
        try Graphctl.runCommand("/usr/bin/env", ["python3", "-m", "kubernetes_validate", "--strict", "--kubernetes-version", version] + paths)
    }

    /// A YAML file's documents as JSON, read by PyYAML (which kubernetes-validate brings).
    static func documents(_ path: String) throws -> [JSONValue] {
        let r = try Graphctl.runCommand("/usr/bin/env", ["python3", "-c",
            "import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]))", path])
        #expect(r.status == 0, "\(r.stderr)")
        return array(try JSONParser.parse(r.stdout))
    }

    /// A YAML file of one document, as JSON.
    static func load(_ path: String) throws -> JSONValue {
        try #require(try documents(path).first)
    }

    /// Every document of every manifest.
    static func all() throws -> [JSONValue] { try manifests.flatMap { try documents($0) } }

    static func array(_ v: JSONValue?) -> [JSONValue] {
        if case .array(let a)? = v { return a }
        return []
    }

    static var manifests: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".yaml") }.sorted()
            .map { folder.appendingPathComponent($0).path }
    }

    @Test func manifestsValidateAgainstTheKubernetesSchemaAndABrokenOneDoesNot() throws {
        #expect(Self.manifests.map { ($0 as NSString).lastPathComponent } == ["job.yaml", "namespace.yaml", "networkpolicy.yaml", "pvc.yaml"])
        let r = try Self.validate(Self.manifests)
        #expect(r.status == 0, "kubernetes-validate (scripts/install-deps.sh installs it): \(r.stdout) \(r.stderr)")
        #expect(r.stdout.components(separatedBy: "passed for resource").count - 1 == 5, "\(r.stdout)")

        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let job = try String(contentsOfFile: Self.folder.appendingPathComponent("job.yaml").path, encoding: .utf8)
        let breakages = [
            ("a misspelt field", "  parallelism: 8", "  parallelism: 8\n  paralelism: 8"),
            ("a number as text", "backoffLimitPerIndex: 2", "backoffLimitPerIndex: \"two\""),
            ("a resource quantity as a list", "memory: 128Mi", "memory: [128]"),
            ("a volume without its claim's name", "claimName: graphkit-outputs", "claimNam: graphkit-outputs"),
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
        let pvcs = try Self.documents(Self.folder.appendingPathComponent("pvc.yaml").path)
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
        let claims = Self.array(spec["template"]?["spec"]?["volumes"]).compactMap { BatchTests.string($0["persistentVolumeClaim"]?["claimName"]) }
        #expect(Set(claims) == Set(pvcs.compactMap { BatchTests.string($0["metadata"]?["name"]) }), "every claim the Job mounts is in pvc.yaml, and only those")
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

    // MARK: Hardening

    /// The Job's pod template, its one container, and the container's security context.
    static func pod() throws -> (pod: JSONValue, container: JSONValue) {
        let job = try load(folder.appendingPathComponent("job.yaml").path)
        let pod = try #require(job["spec"]?["template"]?["spec"])
        return (pod, try #require(array(pod["containers"]).first))
    }

    /// Each hardening field, as issue 28 lists them.
    @Test func eachHardeningFieldIsThere() throws {
        let (pod, container) = try Self.pod()
        #expect(pod["automountServiceAccountToken"] == .bool(false), "graphctl never talks to the API server: no token")
        #expect(pod["securityContext"]?["runAsNonRoot"] == .bool(true))
        #expect(pod["securityContext"]?["seccompProfile"]?["type"] == "RuntimeDefault")
        let security = try #require(container["securityContext"])
        #expect(security["allowPrivilegeEscalation"] == .bool(false))
        #expect(security["readOnlyRootFilesystem"] == .bool(true))
        #expect(security["runAsNonRoot"] == .bool(true))
        #expect(security["capabilities"]?["drop"] == .array(["ALL"]))
        #expect(security["capabilities"]?["add"] == nil)
        guard case .number(let uid)? = pod["securityContext"]?["runAsUser"] else { Issue.record("no runAsUser"); return }
        #expect(uid == 10001, "the image's own user (deploy/Containerfile)")

        // The image, by digest only: no tag (a tag can move between two pods of one Job).
        let image = try #require(BatchTests.string(container["image"]))
        #expect(image.wholeMatch(of: /[a-z0-9.\-\/:]+@sha256:[0-9a-f]{64}/) != nil, "\(image)")
        #expect(!image.split(separator: "@")[0].split(separator: "/").last!.contains(":"), "a tag beside the digest: \(image)")

        // Inputs read-only, outputs on a path (and a volume) of their own, /tmp an emptyDir.
        let mounts = Self.array(container["volumeMounts"])
        let volumes = Self.array(pod["volumes"])
        func mount(_ path: String) -> JSONValue? { mounts.first { $0["mountPath"] == .string(path) } }
        func volume(_ name: JSONValue?) -> JSONValue? { volumes.first { $0["name"] == name } }
        let inputs = try #require(mount("/data/in")), outputs = try #require(mount("/data/out"))
        #expect(inputs["readOnly"] == .bool(true))
        #expect(volume(inputs["name"])?["persistentVolumeClaim"]?["readOnly"] == .bool(true))
        #expect(outputs["readOnly"] == nil || outputs["readOnly"] == .bool(false))
        #expect(volume(inputs["name"])?["persistentVolumeClaim"]?["claimName"] != volume(outputs["name"])?["persistentVolumeClaim"]?["claimName"],
                "inputs and outputs on volumes of their own")
        #expect(volume(mount("/tmp")?["name"])?["emptyDir"]?["sizeLimit"] != nil, "the root is read-only: /tmp is a bounded emptyDir")
        // The command writes only under /data/out.
        let words = Self.array(container["command"]).compactMap { BatchTests.string($0) }
        for (flag, value) in zip(words, words.dropFirst()) where ["--map", "--summary"].contains(flag) {
            let path = value.split(separator: "=", maxSplits: 1).last.map(String.init) ?? value
            if flag == "--summary" || path.hasPrefix("/data/") && !path.contains("{input}") {
                #expect(path.hasPrefix("/data/out/"), "\(flag) \(value) writes outside the outputs volume")
            }
        }

        // Storage bounded, requested and limited.
        let resources = try #require(container["resources"])
        #expect(resources["requests"]?["ephemeral-storage"] != nil && resources["limits"]?["ephemeral-storage"] != nil)
        #expect(resources["requests"]?["memory"] != nil && resources["limits"]?["memory"] != nil)
    }

    /// The Pod Security Standards' "restricted" profile (which includes "baseline"), as written
    /// at kubernetes.io/docs/concepts/security/pod-security-standards for v1.33, checked field by
    /// field; each violation is named by its path. No offline tool checks exactly this profile
    /// (checkov's policies, run below, overlap it without being it); the namespace enforces it in
    /// a cluster (namespace.yaml).
    static func restrictedProfileViolations(_ pod: JSONValue) -> [String] {
        var v: [String] = []
        let containers = ["initContainers", "containers", "ephemeralContainers"].flatMap { key in
            array(pod[key]).enumerated().map { ("\(key)[\($0.offset)]", $0.element) }
        }
        let podSecurity = pod["securityContext"]
        func isTrue(_ x: JSONValue?) -> Bool { x == .bool(true) }
        // Baseline: HostProcess.
        if isTrue(podSecurity?["windowsOptions"]?["hostProcess"]) { v.append("securityContext.windowsOptions.hostProcess") }
        // Baseline: host namespaces.
        for key in ["hostNetwork", "hostPID", "hostIPC"] where isTrue(pod[key]) { v.append(key) }
        // Baseline: HostPath volumes. Restricted: volume types.
        let allowed: Set<String> = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"]
        for (i, volume) in array(pod["volumes"]).enumerated() {
            guard case .object(let members) = volume else { continue }
            for (key, _) in members where key != "name" && !allowed.contains(key) { v.append("volumes[\(i)].\(key)") }
        }
        // Baseline: sysctls, the safe set only.
        let safeSysctls: Set<String> = ["kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                                        "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                                        "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                                        "net.ipv4.tcp_keepalive_probes"]
        for (i, sysctl) in array(podSecurity?["sysctls"]).enumerated() where !safeSysctls.contains(BatchTests.string(sysctl["name"]) ?? "") {
            v.append("securityContext.sysctls[\(i)]")
        }
        // Baseline: AppArmor, SELinux; Restricted: seccomp, non-root, at the pod's level.
        func contextViolations(_ c: JSONValue?, at path: String) {
            let appArmor = BatchTests.string(c?["appArmorProfile"]?["type"])
            if let appArmor, !["RuntimeDefault", "Localhost"].contains(appArmor) { v.append("\(path).appArmorProfile.type") }
            let seLinuxType = BatchTests.string(c?["seLinuxOptions"]?["type"]) ?? ""
            if !["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"].contains(seLinuxType) {
                v.append("\(path).seLinuxOptions.type")
            }
            for key in ["user", "role"] where c?["seLinuxOptions"]?[key] != nil { v.append("\(path).seLinuxOptions.\(key)") }
            if let seccomp = BatchTests.string(c?["seccompProfile"]?["type"]), !["RuntimeDefault", "Localhost"].contains(seccomp) {
                v.append("\(path).seccompProfile.type")
            }
            if c?["runAsNonRoot"] == .bool(false) { v.append("\(path).runAsNonRoot") }
            if c?["runAsUser"] == .number(0) { v.append("\(path).runAsUser") }
        }
        contextViolations(podSecurity, at: "securityContext")
        for (path, container) in containers {
            let c = container["securityContext"]
            contextViolations(c, at: "\(path).securityContext")
            if isTrue(c?["windowsOptions"]?["hostProcess"]) { v.append("\(path).securityContext.windowsOptions.hostProcess") }
            // Baseline: privileged, /proc mount, host ports.
            if isTrue(c?["privileged"]) { v.append("\(path).securityContext.privileged") }
            if let proc = BatchTests.string(c?["procMount"]), proc != "Default" { v.append("\(path).securityContext.procMount") }
            for (i, port) in array(container["ports"]).enumerated() {
                if let hostPort = port["hostPort"], hostPort != .number(0) { v.append("\(path).ports[\(i)].hostPort") }
            }
            // Restricted: no privilege escalation, set explicitly.
            if c?["allowPrivilegeEscalation"] != .bool(false) { v.append("\(path).securityContext.allowPrivilegeEscalation") }
            // Restricted: non-root, at the pod's level or the container's.
            if !isTrue(c?["runAsNonRoot"]) && !isTrue(podSecurity?["runAsNonRoot"]) { v.append("\(path).securityContext.runAsNonRoot") }
            // Restricted: a seccomp profile, at the pod's level or the container's.
            if c?["seccompProfile"]?["type"] == nil && podSecurity?["seccompProfile"]?["type"] == nil {
                v.append("\(path).securityContext.seccompProfile")
            }
            // Restricted: every capability dropped, none added but NET_BIND_SERVICE.
            if !array(c?["capabilities"]?["drop"]).contains("ALL") { v.append("\(path).securityContext.capabilities.drop") }
            for added in array(c?["capabilities"]?["add"]) where added != "NET_BIND_SERVICE" {
                v.append("\(path).securityContext.capabilities.add")
            }
        }
        return v
    }

    /// The Job passes the restricted profile; each way of breaking it (made on a copy of
    /// job.yaml's text) is caught, naming the field, so the check can fail.
    @Test func theJobMeetsThePodSecurityStandardsRestrictedProfile() throws {
        let (pod, _) = try Self.pod()
        #expect(Self.restrictedProfileViolations(pod) == [])
        let text = try String(contentsOfFile: Self.folder.appendingPathComponent("job.yaml").path, encoding: .utf8)
        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let breakages: [(from: String, to: String, says: String)] = [
            ("allowPrivilegeEscalation: false", "allowPrivilegeEscalation: true", "containers[0].securityContext.allowPrivilegeEscalation"),
            ("drop: [ALL]", "drop: [NET_RAW]", "containers[0].securityContext.capabilities.drop"),
            ("drop: [ALL]", "drop: [ALL]\n              add: [SYS_ADMIN]", "containers[0].securityContext.capabilities.add"),
            ("type: RuntimeDefault", "type: Unconfined", "securityContext.seccompProfile.type"),
            ("      securityContext:\n        runAsNonRoot: true\n", "      securityContext:\n        runAsNonRoot: false\n", "securityContext.runAsNonRoot"),
            ("runAsUser: 10001", "runAsUser: 0", "securityContext.runAsUser"),
            ("readOnlyRootFilesystem: true", "readOnlyRootFilesystem: true\n            privileged: true", "containers[0].securityContext.privileged"),
            ("restartPolicy: Never", "restartPolicy: Never\n      hostNetwork: true", "hostNetwork"),
            ("        - name: tmp\n          emptyDir:", "        - name: tmp\n          hostPath:\n            path: /tmp\n          emptyDir:", "volumes[2].hostPath"),
        ]
        for b in breakages {
            #expect(text.contains(b.from), "the manifest changed; update the test: \(b.from)")
            let broken = scratch.appendingPathComponent("job.yaml")
            try text.replacingOccurrences(of: b.from, with: b.to).write(to: broken, atomically: true, encoding: .utf8)
            let pod = try #require(try Self.load(broken.path)["spec"]?["template"]?["spec"])
            #expect(Self.restrictedProfileViolations(pod).contains(b.says), "\(b.to): \(Self.restrictedProfileViolations(pod))")
        }
    }

    /// checkov (Bridgecrew's policy checker, offline with --skip-download), installed by
    /// scripts/install-deps.sh into a venv of its own.
    static let checkov = FileManager.default.homeDirectoryForCurrentUser
        .appendingPathComponent(".cache/graphkit/checkov-3.3.30/bin/checkov").path

    static func checkov(_ folder: String) throws -> (passed: Int, failed: [String], output: String) {
        let r = try Graphctl.runCommand(checkov, ["-d", folder, "--framework", "kubernetes", "--skip-download", "--quiet", "--compact", "-o", "json"])
        let report = try JSONParser.parse(r.stdout)
        let failed = array(report["results"]?["failed_checks"]).compactMap { BatchTests.string($0["check_id"]) }
        guard case .number(let passed)? = report["summary"]?["passed"] else { return (0, failed, r.stdout + r.stderr) }
        return (Int(passed), failed, r.stderr)
    }

    @Test(.timeLimit(.minutes(10)))
    func checkovFindsNothingAndCatchesABrokenCopy() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.checkov), "scripts/install-deps.sh installs checkov at \(Self.checkov)")
        let r = try Self.checkov(Self.folder.path)
        #expect(r.failed == [], "\(r.failed)")
        #expect(r.passed > 50, "checkov ran its Kubernetes policies: \(r.output)")
        // A copy with an image by tag and privilege escalation allowed: both caught.
        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        var text = try String(contentsOfFile: Self.folder.appendingPathComponent("job.yaml").path, encoding: .utf8)
        text = text.replacing(/graphkit@sha256:[0-9a-f]{64}/, with: "graphkit:latest")
            .replacingOccurrences(of: "allowPrivilegeEscalation: false", with: "allowPrivilegeEscalation: true")
        try text.write(to: scratch.appendingPathComponent("job.yaml"), atomically: true, encoding: .utf8)
        let broken = try Self.checkov(scratch.path)
        #expect(broken.failed.contains("CKV_K8S_43"), "an image not by digest: \(broken.failed)")
        #expect(broken.failed.contains("CKV_K8S_20"), "privilege escalation: \(broken.failed)")
    }

    // MARK: The image

    /// No mutable tag anywhere: the Containerfile's bases are build arguments that
    /// deploy/build-image.sh fills with digests; .dockerignore keeps history and builds out of
    /// the image; the build script writes a digest into the manifests, and refuses anything else.
    @Test func imagesAreNamedByDigestAndTheBuildRecordsIt() throws {
        let containerfile = try String(contentsOf: Graphctl.root.appendingPathComponent("deploy/Containerfile"), encoding: .utf8)
        let froms = containerfile.split(separator: "\n").filter { $0.hasPrefix("FROM ") }
        #expect(froms == ["FROM ${SWIFT_BUILD_IMAGE} AS build", "FROM ${SWIFT_RUN_IMAGE}"], "\(froms)")
        #expect(containerfile.contains("ARG SWIFT_BUILD_IMAGE\n") && containerfile.contains("ARG SWIFT_RUN_IMAGE\n"), "no default base image")
        for tag in ["swift:6.3-bookworm", ":latest"] {
            for file in ["deploy/Containerfile", "deploy/kubernetes/job.yaml", "README.md"] {
                let text = try String(contentsOf: Graphctl.root.appendingPathComponent(file), encoding: .utf8)
                #expect(!text.contains(tag), "\(file) names the mutable tag \(tag)")
            }
        }
        let ignored = try String(contentsOf: Graphctl.root.appendingPathComponent(".dockerignore"), encoding: .utf8).split(separator: "\n")
        for entry in [".git", ".build", "**/.build", "out", "Tests/Fixtures/plugins/.build", "examples/plugin-echo/.build", "tools/graphctl/.build"] {
            #expect(ignored.contains(Substring(entry)), ".dockerignore lacks \(entry)")
        }

        // The build's last step, alone: a digest written over the placeholder, in a copy.
        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        for name in Self.manifests.map({ ($0 as NSString).lastPathComponent }) {
            try FileManager.default.copyItem(at: Self.folder.appendingPathComponent(name), to: scratch.appendingPathComponent(name))
        }
        let script = Graphctl.root.appendingPathComponent("deploy/build-image.sh").path
        let digest = "sha256:" + String(repeating: "5e", count: 32)
        let r = try Graphctl.runCommand(script, ["--repository", "registry.test:5000/team/graphkit", "--record", digest, "--manifests", scratch.path])
        #expect(r.status == 0, "\(r.stderr)")
        let written = try Self.load(scratch.appendingPathComponent("job.yaml").path)
        let image = Self.array(written["spec"]?["template"]?["spec"]?["containers"]).first?["image"]
        #expect(image == .string("registry.test:5000/team/graphkit@\(digest)"))
        #expect(try Self.validate([scratch.appendingPathComponent("job.yaml").path]).status == 0)
        // Refused: a tag for a digest, a repository with a tag; no container tool: 69, said.
        let tag = try Graphctl.runCommand(script, ["--repository", "registry.test/graphkit", "--record", "latest", "--manifests", scratch.path])
        #expect(tag.status == 64 && tag.stderr.contains("\"latest\" is not an image digest"), "\(tag.stderr)")
        let tagged = try Graphctl.runCommand(script, ["--repository", "registry.test/graphkit:latest", "--record", digest, "--manifests", scratch.path])
        #expect(tagged.status == 64 && tagged.stderr.contains("names a tag or digest"), "\(tagged.stderr)")
        let none = try Graphctl.runCommand("/usr/bin/env", ["CONTAINER_TOOL=no-such-tool", script, "--repository", "registry.test/graphkit", "--manifests", scratch.path])
        #expect(none.status == 69 && none.stderr.contains("needs podman or buildah"), "\(none.stderr)")
        // The checked-in manifest still holds the placeholder no registry serves, until a build.
        #expect(image != Self.array(try Self.load(Self.folder.appendingPathComponent("job.yaml").path)["spec"]?["template"]?["spec"]?["containers"]).first?["image"])
    }

    // MARK: Memory

    /// A quantity such as 128Mi or 1Gi, in bytes.
    static func bytes(_ quantity: JSONValue?) -> Double? {
        guard let text = BatchTests.string(quantity) else { return nil }
        let units: [(String, Double)] = [("Ki", 1024), ("Mi", 1_048_576), ("Gi", 1_073_741_824), ("k", 1e3), ("M", 1e6), ("G", 1e9)]
        for (suffix, factor) in units where text.hasSuffix(suffix) { return Double(text.dropLast(suffix.count)).map { $0 * factor } }
        return Double(text)
    }

    /// The peak resident size, in bytes, of `arguments` run by graphctl (getrusage of the child).
    static func peakRSS(_ arguments: [String]) throws -> (bytes: Double, status: Int32) {
        let r = try Graphctl.runCommand("/usr/bin/env", ["python3", "-c",
            "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
            + "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", Graphctl.executable.path] + arguments)
        let words = r.stdout.split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let status = Int32(words[0]), let kb = Double(words[1]) else { throw GraphError(.runFailed, "no figures: \(r.stdout) \(r.stderr)") }
        return (kb * 1024, status)
    }

    /// The limit holds the worst case for the shipped graph: a small file whose video claims
    /// 16385x16385 pixels (made here: a one-frame MJPEG beside ten seconds of audio, its frame
    /// header edited) cost a worker some 425 MB while decode turned the video nobody reads into
    /// frames too; decode now leaves a kind of stream no edge takes undecoded, so it costs what
    /// the plain file costs (36 MB measured, debug build). One such file per worker at once, plus
    /// the batch process, fit under the limit. And the request holds the same graph on plain audio.
    @Test(.timeLimit(.minutes(10)))
    func theMemoryLimitHoldsTheMeasuredWorstCase() throws {
        let (_, container) = try Self.pod()
        let limit = try #require(Self.bytes(container["resources"]?["limits"]?["memory"]))
        let request = try #require(Self.bytes(container["resources"]?["requests"]?["memory"]))
        let workers = try #require(Double(BatchTests.string(container["resources"]?["limits"]?["cpu"]) ?? ""))
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let plain = folder.appendingPathComponent("av.mkv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=10:sample_rate=44100",
                                         "-f", "lavfi", "-i", "color=c=gray:s=64x64:r=1:d=1", "-map", "0", "-map", "1",
                                         "-c:a", "flac", "-c:v", "mjpeg", "-frames:v", "1", plain])
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        // The JPEG frame's SOF0 header: FF C0, length 17, precision 8, then height and width.
        let sof: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 0x08]
        let at = try #require((0...(bytes.count - sof.count)).first { Array(bytes[$0..<$0 + sof.count]) == sof }) + sof.count
        bytes.replaceSubrange(at..<at + 4, with: [0x40, 0x01, 0x40, 0x01])  // 16385 x 16385
        let claim = folder.appendingPathComponent("claim.mkv").path
        try Data(bytes).write(to: URL(fileURLWithPath: claim))
        func run(_ input: String) throws -> (bytes: Double, status: Int32) {
            try Self.peakRSS(["run", Graphctl.graph("waveform.json"), "--quiet", "--set", "src.path=\(input)",
                              "--set", "wave.json=\(folder.path)/w.json", "--set", "wave.png=\(folder.path)/w.png"])
        }
        let normal = try run(plain), worst = try run(claim)
        #expect(normal.status == 0 && worst.status == 0)
        // Under a sanitizer (make test-sanitize) a process's memory is mostly the sanitizer's
        // (AddressSanitizer's shadow and its quarantine of freed memory: 101 MB for this run):
        // the figures below say nothing there, and the claim is judged against the plain file
        // (decoding 16385x16385 would cost hundreds of megabytes more).
        if Sanitizer.isRunning {
            #expect(worst.bytes < normal.bytes + 50e6, "the claimed frame costs \((worst.bytes - normal.bytes) / 1e6) MB more than the plain file")
            return
        }
        #expect(worst.bytes < 100e6, "the claimed frame is not decoded, as no edge takes video: \(worst.bytes / 1e6) MB")
        let batchProcess = 32.0 * 1_048_576  // measured 21 MB with the release build (README, "Security")
        #expect(workers * worst.bytes + batchProcess <= limit, "\(workers) workers at \(worst.bytes / 1e6) MB do not fit in \(limit / 1e6) MB")
        #expect(workers * normal.bytes + batchProcess <= request, "\(workers) workers at \(normal.bytes / 1e6) MB on audio exceed the request")
    }

}
