import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// sink.preview's contract, choices and mistakes; its runs, which need an X server, are in
/// Tests/graphctlTests/PreviewGraphTests.swift (Xvfb, looked at through X).
@Suite(.media) struct PreviewSinkNodeTests {
    typealias Display = PreviewSinkNode.Display

    /// X when there is an X server (XWayland included), Wayland's own sink only without one,
    /// nothing when neither is named (unset or empty).
    @Test func theWindowGoesToTheSessionsDisplay() {
        #expect(Display(environment: ["DISPLAY": ":0"]) == .x11(":0"))
        #expect(Display(environment: ["DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"]) == .x11(":0"))
        #expect(Display(environment: ["WAYLAND_DISPLAY": "wayland-0"]) == .wayland("wayland-0"))
        #expect(Display(environment: ["DISPLAY": "", "WAYLAND_DISPLAY": "wayland-0"]) == .wayland("wayland-0"))
        #expect(Display(environment: [:]) == nil)
        #expect(Display(environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""]) == nil)
        #expect(Display.x11(":1").sinkFactory == "ximagesink" && Display.wayland("w").sinkFactory == "waylandsink")
        #expect(Display.x11(":1").setting == #"DISPLAY=":1""# && Display.wayland("w").setting == #"WAYLAND_DISPLAY="w""#)
        // A sink that is not installed is a missing plugin naming its package.
        #expect(GStreamer.debianPackage(providing: "ximagesink") == "gstreamer1.0-x")
        #expect(GStreamer.debianPackage(providing: "waylandsink") == "gstreamer1.0-plugins-bad")
    }

    /// The no-display error names the node at its place in the graph, says what is missing and
    /// how to record without a preview; it is an output that cannot be created (73).
    @Test func noDisplayIsAnOutputThatCannotBeCreated() {
        let e = PreviewSinkNode.noDisplay(node: "monitor")
        #expect(e.code == .outputUnwritable && e.code.exitStatus == 73)
        #expect(e.node == "monitor")
        #expect(e.problems.map(\.location) == ["nodes.monitor"])
        #expect(e.message.hasPrefix("no display to show the preview on (DISPLAY and WAYLAND_DISPLAY are not set)"))
        #expect(e.message.contains("remove node \"monitor\" and its edge to run without a preview"))
    }

    /// A display named but not answering is the same kind of failure, naming the setting, with
    /// GStreamer's words and its debug text as the cause.
    @Test func anUnreachableDisplayIsAnOutputThatCannotBeCreated() {
        let e = PreviewSinkNode.displayUnreachable(.x11(":93"), node: "monitor", because: "Could not initialise X output",
                                                   cause: "Could not open display")
        #expect(e.code == .outputUnwritable && e.node == "monitor" && e.cause == "Could not open display")
        #expect(e.description == """
            nodes.monitor: cannot open the display DISPLAY=":93" to show the preview on (Could not initialise X output); \
            check that its server is running and lets this user in, or remove node "monitor" and its edge to run without a preview
            """)
    }

    @Test func defaultsAndTheExampleLoad() throws {
        let d = PreviewSinkNode.descriptor
        #expect(d.parameter("title")?.defaultValue == .string("GraphKit preview"))
        #expect(d.parameter("sync")?.defaultValue == .boolean(false))
        #expect(d.inputs.map(\.name) == ["in"] && d.outputs.isEmpty)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "camera": { "type": "capture.video" }, "preview": \(d.example) },
              "edges": [ "camera.out -> preview.in" ] }
            """)
        #expect(graph.nodes.first { $0.id == "preview" }?.parameters[PreviewSinkNode.title] == "Recording")
    }

    /// Every mistake is reported at once, at its place: wrong types, an unknown parameter, audio
    /// into it, an output it does not have, an input left unconnected.
    @Test func mistakesAreReportedAtTheirPlace() {
        #expect {
            try GraphLoader(registry: .builtIn).load(json: #"""
                { "version": 1, "nodes": {
                    "camera": { "type": "capture.video" }, "mic": { "type": "capture.audio" },
                    "preview": { "type": "sink.preview", "params": { "title": 7, "sync": "yes", "size": 2 } },
                    "shown": { "type": "sink.preview" }, "orphan": { "type": "sink.preview" } },
                  "edges": [ "mic.out -> preview.in", "camera.out -> shown.in", "shown.out -> camera.in" ] }
                """#)
        } throws: { error in
            guard let e = error as? GraphError, e.code == .invalidGraph else { return false }
            return e.problems.map(\.description) == [
                "nodes.preview.params.title: expected string, got an integer 7",
                "nodes.preview.params.sync: expected boolean, got a string \"yes\"",
                "nodes.preview.params.size: unknown parameter \"size\" for sink.preview (it takes: title, sync)",
                "edges[0]: cannot connect \"mic.out\" (audio/pcm S16LE 1-768000 Hz 1-64 ch) to \"preview.in\" (video/raw BGRA|RGBA|I420|NV12)",
                "edges[2]: sink.preview node \"shown\" has no output \"out\" (it has no outputs)",
                "nodes.orphan: input \"in\" of sink.preview is not connected",
            ]
        }
    }
}
