import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// The graphkit GStreamer plugin (Sources/GstGraphKit: one folder per element), as the Makefile
/// builds it into out/gstreamer-1.0 and `make install` installs it: GStreamer's own tools find it
/// through GST_PLUGIN_PATH and use it; graphctl, which registers the same elements in its own
/// process, runs beside it whether GStreamer only listed the file or loaded it. (Each element alone
/// is tested in GStreamer's harness: Tests/GstGraphKitTests, `make test-elements`.)
///
/// Every GStreamer process here has a registry of the test's own, so the user's is left as it
/// is: it first lists the system's plugins (scanned by gst-plugin-scanner, in another process),
/// so that the graphkit plugin is the only file new to it when a test adds it.
@Suite(.media) struct GStreamerPluginTests {
    static let built = Graphctl.root.appendingPathComponent("out/gstreamer-1.0")

    struct Scratch {
        let folder: URL
        let registry: String

        init() throws {
            folder = try TestMedia.temporaryFolder()
            registry = folder.appendingPathComponent("registry.bin").path
            try #require(FileManager.default.fileExists(atPath: built.appendingPathComponent("libgstgraphkit.so").path),
                         "no plugin in \(built.path): `make test-build` builds it")
            _ = try gst("gst-inspect-1.0", ["coreelements"], pluginPath: nil)
        }

        /// Runs a GStreamer tool with this registry and GST_PLUGIN_PATH set to `pluginPath`.
        @discardableResult
        func gst(_ tool: String, _ arguments: [String], pluginPath: URL? = built) throws -> String {
            try TestMedia.runTool("env", ["GST_REGISTRY=\(registry)", "GST_PLUGIN_PATH=\(pluginPath?.path ?? "")", tool] + arguments)
        }

        /// graphctl running a 30-frame 320×240 H.264 graph with this registry and `environment`.
        func runH264Graph(_ environment: [String: String]) throws -> (result: Graphctl.Result, movie: String) {
            let graph = folder.appendingPathComponent("h264.json"), movie = folder.appendingPathComponent("out.mp4").path
            try #"""
            { "version": 1, "nodes": {
                "frames": { "type": "generate.frames", "params": { "pattern": "box", "width": 320, "height": 240, "frames": 30 } },
                "h264": { "type": "encode.h264" },
                "file": { "type": "sink.mp4", "params": { "path": "\#(movie)" } } },
              "edges": ["frames.out -> h264.in", "h264.out -> file.video"] }
            """#.write(to: graph, atomically: true, encoding: .utf8)
            var env = ProcessInfo.processInfo.environment
            env["GST_REGISTRY"] = registry
            env["GST_DEBUG_NO_COLOR"] = "1"
            env.merge(environment) { $1 }
            let result = try RunningGraphctl(["run", graph.path, "--quiet"], environment: env).wait()
            return (result, movie)
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    /// What GLib prints when something is wrong (a type registered twice, a failed assertion).
    static func glibComplaints(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.contains("-WARNING **") || $0.contains("-CRITICAL **") }
    }

    static func frames(in movie: String) throws -> Int {
        let count = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v",
                                                      "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", movie])
        return Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// gst-inspect-1.0 ELEMENT prints the plugin's file and GraphKit's version, and the element's
    /// pad templates with their caps.
    @Test(.timeLimit(.minutes(10)), arguments: [
        ("gkx264enc", ["format: { (string)I420, (string)NV12 }"],
         ["video/x-h264", "stream-format: { (string)avc, (string)byte-stream }", "alignment: au"]),
        ("gkrgbtoi420", ["format: { (string)BGRA, (string)RGBA, (string)BGRx, (string)RGBx }", "format: { (string)I420, (string)NV12 }"],
         ["format: { (string)I420, (string)NV12 }"]),
        // The GStreamer workarounds decode, encode.aac and sink.mp4 plug (docs/ARCHITECTURE.md).
        ("gkaudiotrim", ["audio/x-raw"], ["audio/x-raw"]),
        ("gkencoderdelay", ["audio/x-raw"], ["ANY"]),
        ("gkvideotrim", ["video/x-raw"], ["video/x-raw"]),
        ("gkorientation", ["ANY"], ["ANY"]),
        ("gkpresenttimes", ["ANY"], ["ANY"]),
        ("gkrisingtimes", ["ANY"], ["ANY"]),
    ])
    func inspectShowsTheElementsPads(element: String, sinkCaps: [String], sourceCaps: [String]) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let text = try scratch.gst("gst-inspect-1.0", [element])
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.contains("Filename                 \(Self.built.path)/libgstgraphkit.so"), "\(text)")
        #expect(lines.contains("Version                  \(GraphKitInfo.version)"), "\(text)")
        let templates = try #require(text.range(of: "Pad Templates:")).upperBound
        let sink = try #require(text.range(of: "SINK template: 'sink'", range: templates..<text.endIndex))
        let source = try #require(text.range(of: "SRC template: 'src'", range: templates..<text.endIndex))
        let end = try #require(text.range(of: "Element has no clocking capabilities.")).lowerBound
        let (sinkPart, sourcePart) = sink.lowerBound < source.lowerBound
            ? (text[sink.upperBound..<source.lowerBound], text[source.upperBound..<end])
            : (text[sink.upperBound..<end], text[source.upperBound..<sink.lowerBound])
        for part in [sinkPart, sourcePart] { #expect(part.contains("Availability: Always"), "\(part)") }
        for caps in sinkCaps { #expect(sinkPart.contains(caps), "sink pad: \(sinkPart)") }
        for caps in sourceCaps { #expect(sourcePart.contains(caps), "source pad: \(sourcePart)") }
    }

    /// gst-inspect-1.0 graphkit: what the plugin says it is, GraphKit's version among it, and
    /// every element.
    @Test(.timeLimit(.minutes(10))) func inspectShowsThePlugin() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let lines = try scratch.gst("gst-inspect-1.0", ["graphkit"]).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for line in ["Name                     graphkit", "Version                  \(GraphKitInfo.version)",
                     "License                  GPL", "Binary package           GraphKit",
                     "gkrgbtoi420: GraphKit RGB to I420", "gkx264enc: GraphKit H.264 encoder (x264)",
                     "gkaudiotrim: GraphKit audio trim", "gkencoderdelay: GraphKit encoder delay",
                     "gkvideotrim: GraphKit video trim", "gkorientation: GraphKit orientation",
                     "gkpresenttimes: GraphKit presentation times",
                     "gkrisingtimes: GraphKit rising times", "gkmp4flac: GraphKit FLAC into MP4",
                     "gktonemap: GraphKit tone mapping", "gkavdec: GraphKit H.264/HEVC decoder (libavcodec)", "gkflowguard: GraphKit flow guard",
                     "gkwhipsink: GraphKit WHIP sink",
                     "+-- 13 elements"] {
            #expect(lines.contains(line), "no \"\(line)\" in \(lines)")
        }
    }

    /// gst-launch-1.0 uses the elements: 60 frames of videotestsrc (I420 straight in, or BGRA
    /// through the converter) make a movie that ffprobe reads 60 frames from, 1/30 s apart.
    @Test(.timeLimit(.minutes(10)), arguments: [
        "videotestsrc num-buffers=60 ! gkx264enc ! mp4mux",
        "videotestsrc num-buffers=60 ! video/x-raw,format=BGRA,width=320,height=240 ! gkrgbtoi420 ! gkx264enc speed-preset=veryfast ! mp4mux",
    ])
    func launchWritesAMovie(pipeline: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let movie = scratch.folder.appendingPathComponent("out.mp4").path
        try scratch.gst("gst-launch-1.0", ["-q", "-e"] + pipeline.split(separator: " ").map(String.init) + ["!", "filesink", "location=\(movie)"])
        #expect(try Self.frames(in: movie) == 60)
        let times = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time",
                                                      "-of", "csv=p=0", movie])
            .split(separator: "\n").compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }
        #expect(times.count == 60 && times.enumerated().allSatisfy { abs($1 - Double($0) / 30) < 0.002 }, "\(times)")
    }

    /// gkencoderdelay from gst-launch-1.0, holding GStreamer's AAC encoder: the file is written
    /// and ffprobe reads its sound.
    @Test(.timeLimit(.minutes(10))) func launchRunsTheEncoderDelay() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let m4a = scratch.folder.appendingPathComponent("out.m4a").path
        try scratch.gst("gst-launch-1.0", ["-q", "-e", "audiotestsrc", "num-buffers=20", "!", "gkencoderdelay", "encoder-factory=avenc_aac",
                                           "!", "mp4mux", "!", "filesink", "location=\(m4a)"])
        #expect(try MediaProbe(m4a).stream("audio")?.codecName == "aac")
    }

    /// `make install` puts the plugin in PREFIX/lib/graphkit/gstreamer-1.0, where GST_PLUGIN_PATH
    /// finds it; `make uninstall` removes it and its folder.
    @Test(.timeLimit(.minutes(15))) func installedWhereGstPluginPathFindsIt() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let stage = scratch.folder.appendingPathComponent("stage")
        let make = { (target: String) throws in
            try TestMedia.runTool("make", ["-C", Graphctl.root.path, target, "CONFIG=debug", "DESTDIR=\(stage.path)", "PREFIX=/opt/gk"])
        }
        // install-files, not install: `make test` has built everything, and other tests run it.
        try make("install-files")
        let folder = stage.appendingPathComponent("opt/gk/lib/graphkit/gstreamer-1.0")
        let text = try scratch.gst("gst-inspect-1.0", ["gkx264enc"], pluginPath: folder)
        #expect(text.contains("Filename                 \(folder.path)/libgstgraphkit.so"), "\(text)")
        try make("uninstall")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }

    /// graphctl with the plugin on GST_PLUGIN_PATH, listed in the registry by gst-plugin-scanner
    /// (GStreamer's default), runs an H.264 graph with its own elements: no GLib complaint, the
    /// file never loaded into graphctl (once listed, a run reads the registry and scans nothing).
    @Test(.timeLimit(.minutes(10))) func graphctlRunsBesideTheListedPlugin() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let plugin = ["GST_PLUGIN_PATH": Self.built.path, "GST_DEBUG": "GST_PLUGIN_LOADING:4"]
        for run in ["scanning it", "from the registry"] {
            let (r, movie) = try scratch.runH264Graph(plugin)
            #expect(r.status == 0, "\(run): \(r.stderr)")
            #expect(Self.glibComplaints(r.stderr).isEmpty, "\(run): \(Self.glibComplaints(r.stderr))")
            #expect(try Self.frames(in: movie) == 30)
            #expect(r.stderr.contains("registered static plugin \"graphkit\""), "\(run): \(r.stderr)")
            if run == "from the registry" {
                #expect(!r.stderr.contains("libgstgraphkit.so\" loaded"), "the plugin file was loaded into graphctl: \(r.stderr)")
            }
        }
    }

    /// A scan in graphctl's own process (GST_REGISTRY_FORK=no) loads the plugin file there at
    /// start-up, and its types take the elements' GType names: graphctl then uses those elements
    /// (they are this GraphKit's version) instead of registering its own, which GLib would refuse
    /// with warnings and criticals, and the run would fail.
    @Test(.timeLimit(.minutes(10))) func graphctlUsesThePluginGStreamerLoadedFirst() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let (r, movie) = try scratch.runH264Graph(["GST_PLUGIN_PATH": Self.built.path, "GST_REGISTRY_FORK": "no",
                                                   "GST_DEBUG": "GST_PLUGIN_LOADING:4"])
        #expect(r.stderr.contains("libgstgraphkit.so\" loaded"), "the scan did not load the plugin in graphctl: \(r.stderr)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.glibComplaints(r.stderr).isEmpty, "\(Self.glibComplaints(r.stderr))")
        #expect(!r.stderr.contains("registered static plugin \"graphkit\""))
        #expect(try Self.frames(in: movie) == 30)
    }

    /// The same with another GraphKit's plugin (its descriptor's version changed in a copy): its
    /// elements may not be this GraphKit's, and this GraphKit's cannot be registered beside them,
    /// so nothing runs; the message names the file and both versions (exit 69: GStreamer is not
    /// usable as it is).
    @Test(.timeLimit(.minutes(10))) func anotherVersionsLoadedPluginIsRefusedSayingWhich() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let other = String(GraphKitInfo.version.map { $0.isNumber ? "9" : $0 })
        try #require(other != GraphKitInfo.version)
        var bytes = [UInt8](try Data(contentsOf: Self.built.appendingPathComponent("libgstgraphkit.so")))
        let version = [0] + Array(GraphKitInfo.version.utf8) + [0]
        let at = (0...(bytes.count - version.count)).filter { bytes[$0] == 0 && Array(bytes[$0..<$0 + version.count]) == version }
        try #require(at.count == 1, "the version string is in the plugin \(at.count) times")
        bytes.replaceSubrange(at[0] + 1..<at[0] + version.count - 1, with: Array(other.utf8))
        let folder = scratch.folder.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("libgstgraphkit.so")
        try Data(bytes).write(to: file)

        let (r, _) = try scratch.runH264Graph(["GST_PLUGIN_PATH": folder.path, "GST_REGISTRY_FORK": "no"])
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains(file.path) && r.stderr.contains("GraphKit \(other)") && r.stderr.contains("GraphKit \(GraphKitInfo.version)"),
                "\(r.stderr)")
        #expect(Self.glibComplaints(r.stderr).isEmpty, "\(Self.glibComplaints(r.stderr))")
        // Asked only now: once a registry lists the file, graphctl registers its own and runs.
        #expect(try scratch.gst("gst-inspect-1.0", ["graphkit"], pluginPath: folder).contains("Version                  \(other)"))
    }
}
