import Foundation
import GraphKit
import GraphKitTesting
import Testing

/// Plugins as a user meets them: the example plugin built by `make plugin-example` (which
/// `make test` runs) and loaded by the installed-style graphctl; and every way a plugin can be
/// wrong, each refused with its own message and status, never a crash.
@Suite struct PluginTests {
    static let echo = Graphctl.root.appendingPathComponent("out/plugins/libEchoPlugin.so").path
    static let fixtures = Graphctl.root.appendingPathComponent("Tests/Fixtures/plugins/.build/debug")

    /// graphctl with `arguments`, its plugin path variable set to `pluginPath` (nil: unset).
    func graphctl(_ arguments: [String], pluginPath: String? = nil, in folder: URL? = nil) throws -> (Graphctl.Result, Process.TerminationReason) {
        var environment = ProcessInfo.processInfo.environment
        environment[PluginLoader.pathVariable] = pluginPath
        let running = try RunningGraphctl(arguments, in: folder, environment: environment)
        let r = running.wait()
        return (r, running.process.terminationReason)
    }

    // MARK: The example plugin

    @Test(.timeLimit(.minutes(10)))
    func theExamplePluginIsListedWithWhereItCameFrom() throws {
        let (list, _) = try graphctl(["inspect", "--plugins"], pluginPath: (Self.echo as NSString).deletingLastPathComponent)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("echo 1.0.0: An echo for PCM audio"))
        #expect(list.stdout.contains("file: \(URL(fileURLWithPath: Self.echo).resolvingSymlinksInPath().path)"))
        #expect(list.stdout.contains("built with GraphKit \(GraphKitInfo.version), Swift \(GraphKitInfo.compilerVersion)"))
        let (one, _) = try graphctl(["inspect", "effect.echo", "--plugin", Self.echo])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("effect.echo: Echo"))
        #expect(one.stdout.contains("From: plugin \"echo\""))
        let (all, _) = try graphctl(["inspect", "--plugin", Self.echo])
        #expect(all.stdout.contains("[plugin echo]"))
        // The JSON Schema includes the plugin's type.
        let (schema, _) = try graphctl(["schema", "--plugin", Self.echo])
        #expect(schema.status == 0)
        #expect(schema.stdout.contains(#""const":"effect.echo""#))
    }

    /// A burst of tone 0.90-0.95 s into a 1 s file, through the echo at 250 ms: the first repeat
    /// sounds at 1.15-1.20 s, after the input has ended, and the output lasts as long as the tail.
    @Test(.timeLimit(.minutes(10)))
    func theEchoIsReallyThereAfterTheInputEnds() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("burst.wav").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=1",
                                         "-af", "volume='between(t,0.9,0.95)':eval=frame", "-ac", "1", wav])
        func echoed(mix: Double) throws -> (seconds: Double, rms: (Double, Double) -> Double) {
            let out = folder.appendingPathComponent("echo-\(mix).m4a").path
            let (r, _) = try graphctl(["run", Graphctl.root.appendingPathComponent("examples/plugin-echo/echo.json").path, "--quiet",
                                       "--set", "src.path=\(wav)", "--set", "file.path=\(out)", "--set", "echo.mix=\(mix)"],
                                      pluginPath: Graphctl.root.appendingPathComponent("out/plugins").path)
            #expect(r.status == 0, "\(r.stderr)")
            let raw = folder.appendingPathComponent("echo-\(mix).f32").path
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-f", "f32le", "-ac", "1", "-ar", "44100", raw])
            let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            let rms = { (from: Double, to: Double) -> Double in
                let window = samples[min(samples.count, Int(from * 44100))..<min(samples.count, Int(to * 44100))]
                return window.isEmpty ? 0 : (window.reduce(0) { $0 + Double($1 * $1) } / Double(window.count)).squareRoot()
            }
            return (Double(samples.count) / 44100, rms)
        }
        let wet = try echoed(mix: 0.5)
        // The AAC decode starts about 0.02-0.05 s late (encoder priming): windows leave room.
        let burst = wet.rms(0.91, 0.99), quiet = wet.rms(0.3, 0.8), firstRepeat = wet.rms(1.18, 1.24)
        #expect(burst > 0.03, "the burst itself (ffmpeg's sine is at 1/8 of full scale): \(burst)")
        #expect(quiet < burst / 100, "silence before the burst: \(quiet)")
        #expect(firstRepeat > 0.3 * burst, "the first repeat, 250 ms after the burst, past the input's end: \(firstRepeat) against \(burst)")
        #expect(wet.seconds > 2.5, "the tail lasts until the echo fades: \(wet.seconds) s")
        let dry = try echoed(mix: 0)
        #expect(dry.rms(1.18, 1.24) < burst / 100, "no echo without mix")
        #expect(dry.seconds < 1.2, "no tail without mix: \(dry.seconds) s")
    }

    /// graphctl and every plugin reach one copy of the engine: the shared library.
    @Test(.timeLimit(.minutes(10)))
    func oneCopyOfTheEngineInTheProcess() throws {
        let ldd = try TestMedia.runTool("ldd", [Graphctl.executable.path])
        #expect(ldd.contains("libGraphKit.so =>"), "\(ldd)")
        func defines(_ file: String, _ entity: String) throws -> Bool {
            let symbols = try TestMedia.runTool("nm", ["--defined-only", "--extern-only", file])
            let names = symbols.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
            // The names go in through a file: written to a pipe, they would fill it while
            // swift demangle's output fills the other one.
            let list = try TestMedia.temporaryFolder().appendingPathComponent("symbols.txt")
            try names.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = ["swift", "demangle", "--simplified"]
            p.standardInput = try FileHandle(forReadingFrom: list)
            let output = Pipe()
            p.standardOutput = output
            try p.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            return text.contains(entity)
        }
        let library = Graphctl.executable.deletingLastPathComponent().appendingPathComponent("libGraphKit.so").path
        #expect(try defines(library, "GraphRun.start()"))
        #expect(try !defines(Graphctl.executable.path, "GraphRun.start()"), "graphctl holds a copy of the engine")
        #expect(try !defines(Self.echo, "GraphRun.start()"), "the plugin holds a copy of the engine")
        let needed = try TestMedia.runTool("readelf", ["-d", Self.echo])
        #expect(needed.contains("[libGraphKit.so]"))
    }

    /// The same file named twice (the flag and the path variable) is loaded once.
    @Test(.timeLimit(.minutes(10)))
    func theSameFileReachedTwiceIsLoadedOnce() throws {
        let (r, _) = try graphctl(["inspect", "--plugins", "--plugin", Self.echo], pluginPath: (Self.echo as NSString).deletingLastPathComponent)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.components(separatedBy: "echo 1.0.0").count == 2, "\(r.stdout)")
    }

    @Test(.timeLimit(.minutes(10)))
    func anUnknownTypeSaysWherePluginsWereSought() throws {
        let (r, _) = try graphctl(["validate", Graphctl.root.appendingPathComponent("examples/plugin-echo/echo.json").path],
                                  pluginPath: "/nowhere/plugins")
        #expect(r.status == 65)
        #expect(r.stderr.contains(#"unknown node type "effect.echo""#))
        #expect(r.stderr.contains("load it with --plugin PATH (searched: /nowhere/plugins)"), "\(r.stderr)")
    }

    // MARK: Bad plugins

    /// A C shared object made at test time from `source`, with the descriptor's header.
    func compiled(_ source: String, in folder: URL, name: String) throws -> String {
        let c = folder.appendingPathComponent("\(name).c").path, so = folder.appendingPathComponent("lib\(name).so").path
        try source.write(toFile: c, atomically: true, encoding: .utf8)
        try TestMedia.runTool("cc", ["-shared", "-fPIC", "-I", Graphctl.root.appendingPathComponent("Sources/CGraphKitPlugin/include").path,
                                     "-o", so, c])
        return so
    }

    /// A C plugin whose descriptor states these versions (its registration is never reached).
    func descriptorSource(abi: String, graphKit: String, compiler: String) -> String {
        """
        #include <stddef.h>
        #include "graphkit_plugin.h"
        static const GraphKitPluginDescriptor d = { \(abi), 0, "\(graphKit)", "\(compiler)", "stale", "0.9", "", NULL, NULL };
        const GraphKitPluginDescriptor *graphkit_plugin_descriptor(void) { return &d; }
        """
    }

    /// Each bad plugin: its exit status and what the message must say. graphctl never dies on a
    /// signal, and nothing of a refused plugin is registered (the command fails whole).
    @Test(.timeLimit(.minutes(10)))
    func badPluginsAreRefusedWithTheirCause() throws {
        let folder = try TestMedia.temporaryFolder()
        let text = folder.appendingPathComponent("notes.so").path
        try "not a shared object".write(toFile: text, atomically: true, encoding: .utf8)
        let noEntry = try compiled("int something(void) { return 1; }", in: folder, name: "plain")
        let abi = try compiled(descriptorSource(abi: "999", graphKit: GraphKitInfo.version, compiler: GraphKitInfo.compilerVersion), in: folder, name: "abi")
        let version = try compiled(descriptorSource(abi: "GRAPHKIT_PLUGIN_ABI_VERSION", graphKit: "0.0.1", compiler: GraphKitInfo.compilerVersion),
                                   in: folder, name: "version")
        let compiler = try compiled(descriptorSource(abi: "GRAPHKIT_PLUGIN_ABI_VERSION", graphKit: GraphKitInfo.version, compiler: "5.9"),
                                    in: folder, name: "compiler")
        let dupGain = Self.fixtures.appendingPathComponent("libDuplicateGainPlugin.so").path
        let twin = Self.fixtures.appendingPathComponent("libEchoTwinPlugin.so").path
        let throwing = Self.fixtures.appendingPathComponent("libThrowingPlugin.so").path
        let cases: [(plugins: [String], status: Int32, says: [String])] = [
            (["/no/such/plugin.so"], 66, ["/no/such/plugin.so: no such plugin file or folder"]),
            // The dynamic loader's own words follow (for this file, "file too short").
            ([text], 78, ["\(text): cannot load the plugin: \(text): "]),
            ([noEntry], 78, ["\(noEntry): not a GraphKit plugin: it exports no graphkit_plugin_descriptor"]),
            ([abi], 78, ["plugin \"stale\" was built for plugin ABI 999; this graphctl loads ABI \(GraphKitInfo.pluginABIVersion)", "rebuild the plugin"]),
            ([version], 78, ["built against GraphKit 0.0.1; this is GraphKit \(GraphKitInfo.version)", "rebuild the plugin"]),
            ([compiler], 78, ["built with Swift 5.9; this GraphKit with Swift \(GraphKitInfo.compilerVersion)", "rebuild the plugin"]),
            ([dupGain], 78, ["plugin \"dupgain\" registers node type \"effect.gain\", which built-in already provides",
                             "nothing from \"dupgain\" was registered"]),
            ([Self.echo, twin], 78, ["plugin \"echo-twin\" registers node type \"effect.echo\", which plugin \"echo\" (", "libEchoPlugin.so) already provides"]),
            ([throwing], 78, ["plugin \"licensed\" failed to register its node types: no licence file at /etc/licensed.key"]),
        ]
        for c in cases {
            for command in [["inspect"], ["schema"], ["validate", Graphctl.graph("m4a.json")]] {
                let (r, reason) = try graphctl(command + c.plugins.flatMap { ["--plugin", $0] })
                #expect(reason == .exit, "\(command) \(c.plugins): ended by a signal")
                #expect(r.status == c.status, "\(command) \(c.plugins): \(r.stderr)")
                for words in c.says { #expect(r.stderr.contains(words), "\(command) \(c.plugins): \(r.stderr)") }
            }
        }
    }
}
