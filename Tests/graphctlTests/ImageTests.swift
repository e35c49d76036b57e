import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// deploy/Containerfile built on this machine with no registry (deploy/build-image.sh --local,
/// what `make image` runs: its base made from Debian packages here, the host's Swift toolchain
/// mounted into the build stage), then run as deploy/kubernetes/job.yaml runs it: the Job's own
/// command and environment for every index, a read-only root filesystem, user 10001, every
/// capability dropped, no privilege escalation, no network, the inputs mounted read-only and
/// the outputs on their own mount, /tmp a scratch mount of its own (the Job's emptyDir). The
/// outputs written in the image must be byte for byte the host's graphctl's. The image holds
/// no compiler, and its size stays near what was measured (README.md, "Container image").
///
/// Skipped, saying why, only where podman cannot run here: not installed (`make image` installs
/// it: scripts/install-deps.sh --image), not working, or no root for debootstrap.
@Suite(.media) struct ImageTests {
    static let tag = "localhost/graphkit:dev"

    /// Why podman cannot build and run the image here, or nil when it can.
    static let unavailable: String? = {
        guard geteuid() == 0 else { return "the base image is made with debootstrap, which needs root" }
        guard let podman = ["/usr/bin/podman", "/usr/local/bin/podman"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return "podman is not installed (make image installs it: scripts/install-deps.sh --image)"
        }
        guard let r = try? ImageTests.run([podman, "info", "--format", "{{.Host.OCIRuntime.Name}}"], limit: 120), r.status == 0 else {
            return "podman is installed but `podman info` fails here"
        }
        return nil
    }()

    /// Runs `arguments` (a program and its arguments), its output in files (no pipe can fill),
    /// killed after `limit` seconds: an image build takes minutes, more than graphctl's guard.
    static func run(_ arguments: [String], limit: Double, environment: [String: String]? = nil) throws -> Graphctl.Result {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out"), err = folder.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(100_000) }
        var killed = ""
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            killed = "\n[killed after \(Int(limit)) s]"
        }
        process.waitUntilExit()
        return Graphctl.Result(status: process.terminationStatus,
                               stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                               stderr: ((try? String(contentsOf: err, encoding: .utf8)) ?? "") + killed)
    }

    /// `podman run` with the options this machine needs, if any: where the default OCI runtime
    /// (crun) cannot set resource limits in this VM, runc with explicit limits
    /// (docs in README.md, "Container image").
    static func runOptions(_ image: String) throws -> [String] {
        let candidates = [[String](), ["--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"]]
        var errors: [String] = []
        for options in candidates {
            let r = try run(["/usr/bin/env", "podman", "run", "--rm"] + options + [image, "true"], limit: 120)
            if r.status == 0 { return options }
            errors.append(r.stderr)
        }
        throw GraphError(.runFailed, "podman cannot start a container of \(image): \(errors.joined(separator: " / "))")
    }

    /// The image built from this tree, and its ID.
    static func build() throws -> String {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let idFile = folder.appendingPathComponent("id").path
        let script = Graphctl.root.appendingPathComponent("deploy/build-image.sh").path
        let r = try run(["/bin/bash", script, "--local", "--tag", tag, "--iidfile", idFile], limit: 3600)
        try #require(r.status == 0, "deploy/build-image.sh --local: \(r.stderr.suffix(4000))")
        return try String(contentsOfFile: idFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: unavailable == nil, Comment(rawValue: unavailable ?? "")))
    func theImageRunsTheJobAsTheHostDoesWithNoCompilerInside() throws {
        let image = try Self.build()
        let options = try Self.runOptions(image)
        func inImage(_ arguments: [String], _ extra: [String] = []) throws -> Graphctl.Result {
            try Self.run(["/usr/bin/env", "podman", "run", "--rm"] + options + extra + [image] + arguments, limit: 600)
        }

        // The same graphctl: its version line is the host's.
        let version = try inImage(["graphctl", "--version"])
        #expect(version.status == 0, "\(version.stderr)")
        let hostVersion = try Graphctl.run("--version")
        #expect(version.stdout == hostVersion.stdout && !version.stdout.isEmpty, "image: \(version.stdout) host: \(hostVersion.stdout)")

        // No compiler, no toolchain: only the Swift runtime's shared libraries.
        let tools = try inImage(["sh", "-c", "for t in swift swiftc swift-frontend clang gcc cc c++ ld; do command -v $t; done; ls /opt/swift/usr/bin 2>/dev/null; true"])
        #expect(tools.status == 0 && tools.stdout.isEmpty, "a compiler in the image: \(tools.stdout) \(tools.stderr)")
        let user = try inImage(["id", "-u"])
        #expect(user.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "10001", "the image's user: \(user.stdout)")

        // Two inputs made here: a WAV and a FLAC, of different lengths and tones.
        let data = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: data) }
        let inputs = data.appendingPathComponent("in"), imageOut = data.appendingPathComponent("out"), hostOut = data.appendingPathComponent("host")
        for folder in [inputs, imageOut, hostOut] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try TestMedia.writeWAV(inputs.appendingPathComponent("tone.wav").path, seconds: 2, sampleRate: 44_100, channels: 2, frequency: 440)
        try TestMedia.gstLaunch("audiotestsrc num-buffers=150 samplesperbuffer=480 wave=pink-noise ! audio/x-raw,rate=48000,channels=1 ! "
                                + "flacenc ! filesink location=\(inputs.appendingPathComponent("noise.flac").path)")
        // The Job's volumes: inputs read-only (and so the folder only readable); outputs owned by
        // the pod's group (fsGroup 10001), as Kubernetes makes them.
        for path in [data.path, inputs.path] { chmod(path, 0o755) }
        chown(imageOut.path, 10001, 10001)

        // The Job's container, as job.yaml has it: its command, its environment, each index.
        let (_, container) = try KubernetesManifestTests.pod()
        let command = KubernetesManifestTests.array(container["command"]).compactMap { BatchTests.string($0) }
        #expect(command.starts(with: ["graphctl", "batch", "/usr/local/share/graphkit/graphs/waveform.json"]), "\(command)")
        var environment: [String: String] = [:]
        for variable in KubernetesManifestTests.array(container["env"]) {
            if let name = BatchTests.string(variable["name"]), let value = BatchTests.string(variable["value"]) { environment[name] = value }
        }
        let completions = try #require(Int(environment["JOB_COMPLETIONS"] ?? ""))
        let security = container["securityContext"]
        #expect(security?["readOnlyRootFilesystem"] == .bool(true) && security?["allowPrivilegeEscalation"] == .bool(false))
        for index in 0..<completions {
            let jobEnvironment = environment.merging(["JOB_COMPLETION_INDEX": String(index)]) { $1 }
            let pod = ["--read-only", "--user", "10001:10001", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                       "--network", "none", "--tmpfs", "/tmp:rw,size=512m,mode=1777",
                       "-v", "\(inputs.path):/data/in:ro", "-v", "\(imageOut.path):/data/out"]
                + jobEnvironment.sorted { $0.key < $1.key }.flatMap { ["-e", "\($0.key)=\($0.value)"] }
            let r = try inImage(command, pod)
            #expect(r.status == 0, "index \(index) in the image: \(r.stderr)")

            // The same index on the host, with the host's graphctl and the tree's graphs.
            let hostArguments = command.dropFirst().map {
                $0.replacingOccurrences(of: "/usr/local/share/graphkit/graphs", with: Graphctl.root.appendingPathComponent("graphs").path)
                    .replacingOccurrences(of: "/data/in", with: inputs.path).replacingOccurrences(of: "/data/out", with: hostOut.path)
            }
            let h = try RunningGraphctl(Array(hostArguments), environment: ProcessInfo.processInfo.environment.merging(jobEnvironment) { $1 }).wait()
            #expect(h.status == 0, "index \(index) on the host: \(h.stderr)")
        }

        // Every output: both inputs' JSON and PNG, identical byte for byte; the summaries
        // (times, paths) differ by nature, and say the same of each input.
        let written = BatchTests.files(in: imageOut)
        let outputs = written.filter { !$0.hasPrefix("summary-") }
        #expect(outputs == ["noise.json", "noise.png", "tone.json", "tone.png"], "\(written)")
        #expect(BatchTests.files(in: hostOut) == written)
        for name in outputs {
            let a = try Data(contentsOf: imageOut.appendingPathComponent(name)), b = try Data(contentsOf: hostOut.appendingPathComponent(name))
            #expect(a == b && !a.isEmpty, "\(name): \(a.count) bytes in the image, \(b.count) on the host, not the same")
        }
        let summaries = written.filter { $0.hasPrefix("summary-") }
        #expect(summaries.count == completions)
        let done = try summaries.flatMap { try BatchTests.entries(BatchTests.summary(imageOut.appendingPathComponent($0))) }
        #expect(done.compactMap { BatchTests.string($0["input"]) }.sorted() == ["/data/in/noise.flac", "/data/in/tone.wav"])

        // Nothing written beside the read-only inputs.
        #expect(BatchTests.files(in: inputs) == ["noise.flac", "tone.wav"])

        // Small: Debian's GStreamer plugins, what they link, and the Swift runtime: measured at
        // 529 MB (1.03 GB untrimmed; README.md, "Container image").
        let size = try Self.run(["/usr/bin/env", "podman", "image", "inspect", "--format", "{{.Size}}", image], limit: 120)
        let bytes = try #require(Double(size.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(bytes < 600e6, "the image grew to \(Int(bytes / 1e6)) MB")
    }
}
