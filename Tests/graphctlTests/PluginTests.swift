import Foundation
import GraphKit
import CGraphKitPlugin
import GraphKitTesting
import Testing
import TestSupport

/// Plugins as a user meets them: the example plugin built by `make plugin-example` (which
/// `make test` runs) and loaded by the installed-style graphctl; and every way a plugin can be
/// wrong, each refused with its own message and status, never a crash.
@Suite(.media) struct PluginTests {
    static let echo = Graphctl.root.appendingPathComponent("out/plugins/libEchoPlugin.so").path
    /// Built in graphctl's scratch folder, which the Makefile shares with the plugins' packages.
    static let fixtures = Graphctl.root.appendingPathComponent("tools/graphctl/.build/debug")

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
        #expect(ldd.contains("libGraphKitShared.so =>"), "\(ldd)")
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
        let library = Graphctl.executable.deletingLastPathComponent().appendingPathComponent("libGraphKitShared.so").path
        #expect(try defines(library, "GraphRun.start()"))
        #expect(try !defines(Graphctl.executable.path, "GraphRun.start()"), "graphctl holds a copy of the engine")
        #expect(try !defines(Self.echo, "GraphRun.start()"), "the plugin holds a copy of the engine")
        let needed = try TestMedia.runTool("readelf", ["-d", Self.echo])
        #expect(needed.contains("[libGraphKitShared.so]"))
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

    /// A C shared object made at test time from `source`, with the plugin header.
    func compiled(_ source: String, in folder: URL, name: String, flags: [String] = []) throws -> String {
        let c = folder.appendingPathComponent("\(name).c").path, so = folder.appendingPathComponent("lib\(name).so").path
        try source.write(toFile: c, atomically: true, encoding: .utf8)
        try TestMedia.runTool("cc", ["-shared", "-fPIC", "-I", Graphctl.root.appendingPathComponent("Sources/CGraphKitPlugin/include").path,
                                     "-o", so, c] + flags)
        try FileManager.default.removeItem(atPath: c)
        return so
    }

    /// C for a library whose constructor writes `marker` when the library is loaded: proof that
    /// its code ran. `note` is a GRAPHKIT_PLUGIN_NOTE… line, or nothing.
    func library(note: String, marker: String, more: String = "") -> String {
        """
        #include <stdio.h>
        #include <stddef.h>
        #include "graphkit_plugin.h"
        \(note)
        __attribute__((constructor)) static void ran(void) {
            FILE *f = fopen("\(marker)", "w");
            if (f) { fputs("the library's code ran\\n", f); fclose(f); }
        }
        \(more)
        """
    }

    /// A note with these fields; by default the ones this GraphKit loads.
    func note(abi: String = "GRAPHKIT_PLUGIN_ABI_VERSION", graphKit: String = GraphKitInfo.version,
              toolchain: String = GraphKitPlugin.toolchain, name: String = "stale", version: String = "0.9") -> String {
        #"GRAPHKIT_PLUGIN_NOTE_FIELDS(\#(abi), "\#(graphKit)", "\#(toolchain)", "\#(name)", "\#(version)");"#
    }

    /// A C descriptor stating these versions (its registration is never reached).
    func descriptor(abi: String = "GRAPHKIT_PLUGIN_ABI_VERSION", compiler: String = GraphKitInfo.compilerVersion,
                    name: String = "stale", version: String = "0.9") -> String {
        """
        static const GraphKitPluginDescriptor d = { \(abi), 0, "\(GraphKitInfo.version)", "\(compiler)", "\(name)", "\(version)", "", NULL, NULL };
        const GraphKitPluginDescriptor *graphkit_plugin_descriptor(void) { return &d; }
        """
    }

    /// Each bad plugin: its exit status, what the message must say, and whether its code ran.
    /// Everything the file itself can be refused for (not ELF, no note, another ABI, GraphKit or
    /// toolchain) is refused before it is loaded: its constructor never runs. What the
    /// descriptor says is read once it is loaded: the constructor has run by then (docs/PLUGINS.md,
    /// "Security"). graphctl never dies on a signal, and nothing of a refused plugin is
    /// registered (the command fails whole).
    @Test(.timeLimit(.minutes(10)))
    func badPluginsAreRefusedWithTheirCause() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let marker = folder.appendingPathComponent("ran").path
        let text = folder.appendingPathComponent("notes.so").path
        try "not a shared object".write(toFile: text, atomically: true, encoding: .utf8)
        let noNote = try compiled(library(note: "", marker: marker, more: descriptor()), in: folder, name: "nonote")
        let abi = try compiled(library(note: note(abi: "999"), marker: marker, more: descriptor(abi: "999")), in: folder, name: "abi")
        let version = try compiled(library(note: note(graphKit: "0.0.1"), marker: marker, more: descriptor()), in: folder, name: "version")
        let toolchain = try compiled(library(note: note(toolchain: "clang 1.0 (another toolchain)"), marker: marker, more: descriptor()),
                                     in: folder, name: "toolchain")
        // The note matches; the dynamic loader refuses it (a library it needs is gone).
        let gone = try compiled("int gone(void) { return 1; }", in: folder, name: "gkgone")
        let needsGone = try compiled(library(note: note(), marker: marker, more: descriptor() + "\nint gone(void);\nint use(void) { return gone(); }"),
                                     in: folder, name: "needsgone", flags: ["-L", folder.path, "-lgkgone"])
        try FileManager.default.removeItem(atPath: gone)
        // The note matches; what is found once loaded does not.
        let noEntry = try compiled(library(note: note(), marker: marker), in: folder, name: "noentry")
        let compiler = try compiled(library(note: note(), marker: marker, more: descriptor(compiler: "5.9")), in: folder, name: "compiler")
        let renamed = try compiled(library(note: note(name: "stale"), marker: marker, more: descriptor(name: "other")), in: folder, name: "renamed")
        let dupGain = Self.fixtures.appendingPathComponent("libDuplicateGainPlugin.so").path
        let twin = Self.fixtures.appendingPathComponent("libEchoTwinPlugin.so").path
        let throwing = Self.fixtures.appendingPathComponent("libThrowingPlugin.so").path
        let ownEngine = Self.fixtures.appendingPathComponent("libOwnEnginePlugin.so").path
        let cases: [(plugins: [String], status: Int32, says: [String], runs: Bool)] = [
            (["/no/such/plugin.so"], 66, ["/no/such/plugin.so: no such plugin file or folder"], false),
            ([text], 78, ["\(text): not a GraphKit plugin: not an ELF shared object; it was not loaded"], false),
            ([noNote], 78, ["\(noNote): not a GraphKit plugin: it carries no GraphKit note (GRAPHKIT_PLUGIN_NOTE, docs/PLUGINS.md); it was not loaded"], false),
            ([abi], 78, ["plugin \"stale\" was built for plugin ABI 999; this graphctl loads ABI \(GraphKitInfo.pluginABIVersion)", "rebuild the plugin",
                         "(it was not loaded)"], false),
            ([version], 78, ["built against GraphKit 0.0.1; this is GraphKit \(GraphKitInfo.version)", "rebuild the plugin", "(it was not loaded)"], false),
            ([toolchain], 78, ["plugin \"stale\" was compiled by clang 1.0 (another toolchain); this GraphKit by \(GraphKitPlugin.toolchain)",
                               "(it was not loaded)"], false),
            // The dynamic loader's own words follow, naming the file (not /proc/self/fd).
            ([needsGone], 78, ["\(needsGone): cannot load the plugin: libgkgone.so: cannot open shared object file"], false),
            ([noEntry], 78, ["\(noEntry): not a GraphKit plugin: it exports no graphkit_plugin_descriptor"], true),
            ([compiler], 78, ["built with Swift 5.9; this GraphKit with Swift \(GraphKitInfo.compilerVersion)", "rebuild the plugin"], true),
            ([renamed], 78, [#"its note says plugin "stale" 0.9, its descriptor "other" 0.9"#], true),
            ([dupGain], 78, ["plugin \"dupgain\" registers node type \"effect.gain\", which built-in already provides",
                             "nothing from \"dupgain\" was registered"], false),
            ([Self.echo, twin], 78, ["plugin \"echo-twin\" registers node type \"effect.echo\", which plugin \"echo\" (", "libEchoPlugin.so) already provides"], false),
            ([throwing], 78, ["plugin \"licensed\" failed to register its node types: no licence file at /etc/licensed.key"], false),
            // Built against the GraphKit product (linked into programs) instead of the shared library.
            ([ownEngine], 78, ["\(ownEngine): plugin \"own-engine\" carries an engine of its own",
                               "a plugin depends on the GraphKitShared product"], false),
        ]
        for c in cases {
            for command in [["inspect"], ["schema"], ["validate", Graphctl.graph("m4a.json")]] {
                try? FileManager.default.removeItem(atPath: marker)
                let (r, reason) = try graphctl(command + c.plugins.flatMap { ["--plugin", $0] })
                #expect(reason == .exit, "\(command) \(c.plugins): ended by a signal")
                #expect(r.status == c.status, "\(command) \(c.plugins): \(r.stderr)")
                for words in c.says { #expect(r.stderr.contains(words), "\(command) \(c.plugins): \(r.stderr)") }
                #expect(FileManager.default.fileExists(atPath: marker) == c.runs,
                        "\(command) \(c.plugins): the library's code \(c.runs ? "should have" : "must not have") run")
            }
        }
    }

    // MARK: Trust: who may change a plugin, and where it is found

    /// A library with a note this GraphKit accepts and a constructor that writes `marker`: loaded,
    /// it runs, and then is refused for exporting no descriptor. So wherever a check below must
    /// come first, the marker shows whether it did.
    func trojan(in folder: URL, marker: String, name: String = "trojan") throws -> String {
        try compiled(library(note: note(), marker: marker), in: folder, name: name)
    }

    /// graphctl inspect with these plugin flags and variable: its result, and whether the
    /// marker was written (removed first).
    func inspect(_ plugins: [String], pluginPath: String? = nil, marker: String, in folder: URL? = nil) throws -> (Graphctl.Result, ran: Bool) {
        try? FileManager.default.removeItem(atPath: marker)
        let (r, reason) = try graphctl(["inspect", "--plugins"] + plugins.flatMap { ["--plugin", $0] }, pluginPath: pluginPath, in: folder)
        #expect(reason == .exit, "\(plugins): ended by a signal")
        return (r, FileManager.default.fileExists(atPath: marker))
    }

    /// A non-plugin shared object with a constructor that writes a file, alone, in a folder named
    /// by --plugin, and in GRAPHKIT_PLUGIN_PATH: refused, and the file is never written.
    @Test(.timeLimit(.minutes(10)))
    func aLibraryThatIsNoPluginNeverRuns() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let marker = folder.appendingPathComponent("written-by-the-constructor").path
        let plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: false)
        let so = try compiled(library(note: "", marker: marker), in: plugins, name: "constructor")
        for (flags, variable) in [([so], nil), ([plugins.path], nil), ([], plugins.path)] as [([String], String?)] {
            let (r, ran) = try inspect(flags, pluginPath: variable, marker: marker)
            #expect(r.status == 78, "\(flags) \(variable ?? ""): \(r.stderr)")
            #expect(r.stderr.contains("\(so): not a GraphKit plugin: it carries no GraphKit note"), "\(r.stderr)")
            #expect(!ran, "\(flags) \(variable ?? ""): the constructor ran")
        }
    }

    /// A plugin folder or file that others may write, anywhere on the way, is refused before
    /// anything is loaded, naming the path and the permission; a sticky folder above it (/tmp) is
    /// not its own folder, and is allowed.
    @Test(.timeLimit(.minutes(10)))
    func pluginsOthersMayChangeAreRefused() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let marker = folder.appendingPathComponent("ran").path
        let plugins = folder.appendingPathComponent("a/plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: plugins.path)
        let so = try trojan(in: plugins, marker: marker)
        let a = folder.appendingPathComponent("a").path
        func chmod(_ path: String, _ mode: Int) throws { try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path) }

        // As it is: loaded (its constructor runs), then refused for what it exports.
        let (fine, ranFine) = try inspect([so], marker: marker)
        #expect(fine.status == 78 && fine.stderr.contains("exports no graphkit_plugin_descriptor"), "\(fine.stderr)")
        #expect(ranFine, "the fixture must be loadable, or the cases below prove nothing")

        let cases: [(path: String, mode: Int, says: String)] = [
            (plugins.path, 0o777, "the folder \(plugins.path) is writable by everyone (mode 0777)"),
            (plugins.path, 0o775, "the folder \(plugins.path) is writable by its group (mode 0775)"),
            (plugins.path, 0o1777, "the folder \(plugins.path) is writable by everyone (mode 01777)"),
            (a, 0o777, "the folder \(a) is writable by everyone (mode 0777)"),
            (so, 0o666, "the plugin file \(so) is writable by everyone (mode 0666)"),
            (so, 0o664, "the plugin file \(so) is writable by its group (mode 0664)"),
        ]
        for c in cases {
            let before = try FileManager.default.attributesOfItem(atPath: c.path)[.posixPermissions] as! Int
            try chmod(c.path, c.mode)
            defer { try? chmod(c.path, before) }
            for (flags, variable) in [([so], nil), ([plugins.path], nil), ([], plugins.path)] as [([String], String?)] {
                let (r, ran) = try inspect(flags, pluginPath: variable, marker: marker)
                #expect(r.status == 78, "\(c.says) \(flags): \(r.stderr)")
                #expect(r.stderr.contains("refused: \(c.says)"), "\(r.stderr)")
                #expect(r.stderr.contains("chmod go-w \(c.path)"), "\(r.stderr)")
                #expect(!ran, "\(c.says) \(flags): the library was loaded")
            }
        }
        // A sticky folder that others may write, above the plugin's own: allowed (as /tmp is).
        try chmod(a, 0o1777)
        defer { try? chmod(a, 0o755) }
        let (sticky, ranSticky) = try inspect([so], marker: marker)
        #expect(sticky.stderr.contains("exports no graphkit_plugin_descriptor") && ranSticky, "\(sticky.stderr)")
    }

    /// A plugin, or a folder on its way, owned by another user (neither the caller nor root) is
    /// refused; made with chown, so only when the tests run as root.
    @Test(.timeLimit(.minutes(10)), .enabled(if: geteuid() == 0, "chown to another user needs root"))
    func pluginsOwnedByAnotherUserAreRefused() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let marker = folder.appendingPathComponent("ran").path
        let plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: false)
        let so = try trojan(in: plugins, marker: marker)
        let nobody = 65534
        for path in [so, plugins.path] {
            #expect(Glibc.chown(path, uid_t(nobody), gid_t(nobody)) == 0)
            let (r, ran) = try inspect([so], marker: marker)
            #expect(r.status == 78, "\(r.stderr)")
            let what = path == so ? "the plugin file" : "the folder"
            #expect(r.stderr.contains("refused: \(what) \(path) belongs to uid \(nobody), neither you (uid 0) nor root"), "\(r.stderr)")
            #expect(!ran, "\(path): the library was loaded")
            #expect(Glibc.chown(path, 0, 0) == 0)
        }
        // A symbolic link another user planted in a sticky folder others may write (as /tmp):
        // refused, whatever it points at (the kernel's protected_symlinks rule).
        let sticky = folder.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: sticky, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: sticky.path)
        let link = sticky.appendingPathComponent("libplanted.so").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: so)
        #expect(lchown(link, uid_t(nobody), gid_t(nobody)) == 0)
        let (r, ran) = try inspect([link], marker: marker)
        #expect(r.status == 78 && r.stderr.contains("refused: the symbolic link \(link), in a folder others may write (\(sticky.path)), belongs to uid \(nobody)"),
                "\(r.stderr)")
        #expect(!ran)
    }

    /// A symbolic link to a plugin is followed, and every folder on both sides is checked: the
    /// plugin is listed under the file it resolves to; a link into a folder others may write is
    /// refused, naming that folder; a FIFO named like a plugin is refused, not waited on.
    @Test(.timeLimit(.minutes(10)))
    func symbolicLinksAreFollowedAndCheckedOnBothSides() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let links = folder.appendingPathComponent("links")
        try FileManager.default.createDirectory(at: links, withIntermediateDirectories: false)
        let real = URL(fileURLWithPath: Self.echo).resolvingSymlinksInPath().path
        try FileManager.default.createSymbolicLink(atPath: links.appendingPathComponent("libEcho.so").path, withDestinationPath: real)
        for flag in [links.appendingPathComponent("libEcho.so").path, links.path] {
            let (r, _) = try graphctl(["inspect", "--plugins", "--plugin", flag])
            #expect(r.status == 0, "\(flag): \(r.stderr)")
            #expect(r.stdout.contains("echo 1.0.0") && r.stdout.contains("file: \(real)"), "\(r.stdout)")
        }
        // The same plugin through a link into a folder everyone may write.
        let open = folder.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: real, toPath: open.appendingPathComponent("libEcho.so").path)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: open.path)
        let toOpen = links.appendingPathComponent("libEchoOpen.so").path
        try FileManager.default.createSymbolicLink(atPath: toOpen, withDestinationPath: "../open/libEcho.so")
        let (r, _) = try graphctl(["inspect", "--plugins", "--plugin", toOpen])
        #expect(r.status == 78 && r.stderr.contains("refused: the folder \(open.path) is writable by everyone (mode 0777)"), "\(r.stderr)")
        // A FIFO: refused at once (nothing opens it for reading).
        let fifo = folder.appendingPathComponent("fifo")
        try FileManager.default.createDirectory(at: fifo, withIntermediateDirectories: false)
        #expect(mkfifo(fifo.appendingPathComponent("libwait.so").path, 0o644) == 0)
        let (f, _) = try graphctl(["inspect", "--plugins", "--plugin", fifo.path])
        #expect(f.status == 78 && f.stderr.contains("\(fifo.path)/libwait.so is not a regular file"), "\(f.stderr)")
    }

    /// GRAPHKIT_PLUGIN_PATH's entries must be absolute (an entry kept in the environment would load
    /// code from whatever folder a later command starts in): a relative one is refused, naming the
    /// variable, and nothing from it runs. A relative --plugin is taken from the current folder,
    /// once, as every file named on a command line, and listed by its absolute path.
    @Test(.timeLimit(.minutes(10)))
    func relativeEntries() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let marker = folder.appendingPathComponent("ran").path
        let plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: false)
        _ = try trojan(in: plugins, marker: marker)
        for variable in ["plugins", "./plugins", "/nowhere:plugins"] {
            let (r, ran) = try inspect([], pluginPath: variable, marker: marker, in: folder)
            #expect(r.status == 78, "\(variable): \(r.stderr)")
            let entry = variable.split(separator: ":").last!
            #expect(r.stderr.contains(#"GRAPHKIT_PLUGIN_PATH: the entry "\#(entry)" is relative"#), "\(r.stderr)")
            #expect(!ran, "\(variable): a relative entry was loaded")
        }
        try FileManager.default.copyItem(atPath: Self.echo, toPath: plugins.appendingPathComponent("libEcho.so").path)
        try FileManager.default.removeItem(atPath: plugins.appendingPathComponent("libtrojan.so").path)
        let (r, _) = try graphctl(["inspect", "--plugins", "--plugin", "plugins/libEcho.so"], in: folder)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("file: \(plugins.resolvingSymlinksInPath().path)/libEcho.so"), "\(r.stdout)")
    }

    /// The note is read from the file alone: damaged copies of a real plugin (cut short, bytes
    /// changed) give an answer, never a crash, and the real one gives what its note says.
    @Test(.timeLimit(.minutes(10)))
    func theNoteReaderSurvivesDamagedFiles() throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.echo)))
        func note(_ data: [UInt8]) throws -> Result<PluginNote, PluginNote.Problem> {
            let folder = try TestMedia.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = folder.appendingPathComponent("x.so")
            try Data(data).write(to: file)
            let fd = open(file.path, O_RDONLY)
            defer { close(fd) }
            return PluginNote.read(from: fd)
        }
        let whole = try note(bytes).get()
        #expect(whole == PluginNote(abiVersion: GraphKitInfo.pluginABIVersion, graphKitVersion: GraphKitInfo.version,
                                    toolchain: GraphKitPlugin.toolchain, name: "echo", version: "1.0.0"))
        // Cut anywhere up to the note's last byte: no note can be read.
        let owner: [UInt8] = Array("GraphKit".utf8) + [0, 0, 0, 0]
        let at = try #require((0...(bytes.count - owner.count)).first { Array(bytes[$0..<$0 + owner.count]) == owner })
        let noteEnd = at + owner.count + MemoryLayout<GraphKitPluginNote>.size
        for cut in [0, 3, 16, 63, 64, 100, at, noteEnd - 1] {
            #expect(throws: PluginNote.Problem.self, "cut at \(cut)") { try note(Array(bytes.prefix(cut))).get() }
        }
        // A program-header offset (e_phoff, bytes 32-39) past Int.max: a crash found by the
        // random damage below, now read as damaged like any offset past the end.
        var far = bytes
        far[39] = 0x80
        #expect(throws: PluginNote.Problem.self) { try note(far).get() }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var damaged = Array(bytes.prefix(8192))
            for _ in 0..<4 { damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            _ = try note(damaged)
        }
    }

    /// The version is written once, in graphkit_plugin.h (what a plugin's note carries); the
    /// newest entry of CHANGELOG.md is that release, and no other file states a version of its own.
    @Test func theVersionIsWrittenInOnePlace() throws {
        let header = try String(contentsOf: Graphctl.root.appendingPathComponent("Sources/CGraphKitPlugin/include/graphkit_plugin.h"), encoding: .utf8)
        #expect(header.contains("#define GRAPHKIT_VERSION \"\(GraphKitInfo.version)\""))
        #expect(header.contains("#define GRAPHKIT_PLUGIN_ABI_VERSION \(GraphKitInfo.pluginABIVersion)u"))
        let changelog = try String(contentsOf: Graphctl.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest?.hasPrefix("## \(GraphKitInfo.version) ") == true, "CHANGELOG.md's newest entry: \(newest ?? "none")")
        let plugin = try String(contentsOf: Graphctl.root.appendingPathComponent("Sources/GstGraphKit/plugin.c"), encoding: .utf8)
        #expect(plugin.contains("plugin_init, GRAPHKIT_VERSION,"), "the GStreamer plugin states a version of its own")
    }
}
