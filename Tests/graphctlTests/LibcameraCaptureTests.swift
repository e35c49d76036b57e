import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `capture.video` with `libcamera:NAME`, as far as a machine with no camera can take it (no
/// libcamera hardware here: capture itself is untested). A camera libcamera does not find is
/// refused before the run, naming the node's parameter and the device, at once; libcamerasrc
/// missing (GStreamer without gstreamer1.0-libcamera's plugin) is a missing plugin, exit 69,
/// naming the package.
@Suite(.media, .enabled(if: GStreamer.hasElement("libcamerasrc"), "gstreamer1.0-libcamera is not installed (scripts/install-deps.sh installs it)"))
struct LibcameraCaptureTests {
    static func graph(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("graph.json").path
        try """
            { "version": 1, "nodes": {
                "cam": { "type": "capture.video", "params": { "device": "libcamera:gk-no-such-camera", "duration": 1 } },
                "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "\(folder.path)/out.mp4" } } },
              "edges": [ "cam.out -> h264.in", "h264.out -> file.video" ] }
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.timeLimit(.minutes(2)))
    func anAbsentCameraIsRefusedBeforeTheRunNamingIt() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let started = Date()
        let r = try Graphctl.run(["run", try Self.graph(in: folder)], limit: .seconds(30))
        let took = Date().timeIntervalSince(started)
        #expect(r.status == 70)
        #expect(r.stderr.contains("nodes.cam.params.device") && r.stderr.contains("no camera \"libcamera:gk-no-such-camera\": libcamera finds no camera"), "\(r.stderr)")
        #expect(took < 10, "\(took) s")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out.mp4").path))
    }

    /// GStreamer's plugins without libcamera's (a folder of links to the others, and a registry
    /// of its own): the advice names gstreamer1.0-libcamera.
    @Test(.timeLimit(.minutes(2)))
    func withoutLibcamerasrcTheErrorNamesThePackage() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let system = try #require(["x86_64-linux-gnu", "aarch64-linux-gnu"].map { "/usr/lib/\($0)/gstreamer-1.0" }
            .first { FileManager.default.fileExists(atPath: "\($0)/libgstlibcamera.so") })
        let plugins = folder.appendingPathComponent("plugins")
        try FileManager.default.createDirectory(at: plugins, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: system) where name.hasSuffix(".so") && name != "libgstlibcamera.so" {
            try FileManager.default.createSymbolicLink(atPath: plugins.appendingPathComponent(name).path, withDestinationPath: "\(system)/\(name)")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["GST_PLUGIN_SYSTEM_PATH_1_0"] = plugins.path
        environment["GST_REGISTRY_1_0"] = folder.appendingPathComponent("registry.bin").path
        let r = try RunningGraphctl(["run", try Self.graph(in: folder)], environment: environment).wait(limit: .seconds(60))
        #expect(r.status == 69)
        #expect(r.stderr.contains("node \"cam\"") && r.stderr.contains("GStreamer element \"libcamerasrc\" is not installed")
                && r.stderr.contains("install the Debian package gstreamer1.0-libcamera"), "\(r.stderr)")
    }
}
