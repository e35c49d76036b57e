import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// graphs/record-preview.json, end to end: a live recording whose picture after the effects is
/// shown by `sink.preview` in a window on an X server of the test's own (Xvfb), looked at from
/// outside through X as a user would see it.
@Suite(.media) struct PreviewGraphTests {
    static let title = "GraphKit: recording"

    /// A short live run of graphs/record-preview.json with small frames (the crop to 3:4 keeps
    /// them whole), writing record.mp4 and stats.json into a folder of its own.
    struct Recording {
        let folder: URL
        let seconds: Int
        /// The recording, by default in the folder itself; in a folder still to be made, a run
        /// that fails before it starts must not make it.
        let out: String
        var stats: String { folder.appendingPathComponent("stats.json").path }

        init(seconds: Int, into file: String = "record.mp4") throws {
            folder = try TestMedia.temporaryFolder()
            self.seconds = seconds
            out = folder.appendingPathComponent(file).path
        }

        var arguments: [String] {
            ["run", Graphctl.graph("record-preview.json"), "--set", "camera.width=240", "--set", "camera.height=320",
             "--set", "camera.duration=\(seconds)", "--set", "mic.duration=\(seconds)", "--set", "file.path=\(out)", "--stats", stats]
        }

        /// graphctl recording, with `environment` (nil: the test's own) and `extra` arguments.
        func start(_ extra: [String] = [], environment: [String: String]? = nil) throws -> RunningGraphctl {
            try RunningGraphctl(arguments + extra, environment: environment)
        }

        /// graphctl recording with DISPLAY naming `display` (and no Wayland display); returns it
        /// once the preview window shows a picture, with the window and that picture.
        func startShowing(on display: VirtualDisplay, _ extra: [String] = []) throws
            -> (run: RunningGraphctl, window: VirtualDisplay.Window, picture: [UInt8]) {
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display.name
            environment["WAYLAND_DISPLAY"] = nil
            let run = try start(extra, environment: environment)
            let window = try display.waitForWindow(titled: PreviewGraphTests.title)
            return (run, window, try PreviewGraphTests.picture(in: window, on: display))
        }

        var report: RunReport {
            get throws { try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats))) }
        }
    }

    /// The window's pixels (packed RGB) once it shows a picture (most of it not black), grabbing
    /// every 100 ms for at most 60 s.
    static func picture(in window: VirtualDisplay.Window, on display: VirtualDisplay) throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(60)
        while true {
            let rgb = try display.grab(window).rgb
            let lit = stride(from: 0, to: rgb.count, by: 3).filter { rgb[$0] > 40 || rgb[$0 + 1] > 40 || rgb[$0 + 2] > 40 }.count
            if lit * 3 * 2 > rgb.count { return rgb }
            guard Date() < deadline else {
                throw VirtualDisplay.Failure(description: "the preview window showed no picture within 60 s (\(lit) lit pixels)")
            }
            usleep(100_000)
        }
    }

    /// The window shows the picture being recorded, after the effects: the test pattern's bars
    /// without their green (white is magenta, yellow red, cyan blue), no green anywhere. The
    /// recorded file and the window saw the same frames, but for those the preview reports it
    /// dropped.
    @Test(.timeLimit(.minutes(10)))
    func theWindowShowsTheRecordedPictureAndTheFramesItDropped() throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let recording = try Recording(seconds: 4)
        let (run, window, picture) = try recording.startShowing(on: display)
        #expect(window.width == 240 && window.height == 320, "\(window)")
        let r = run.wait()
        #expect(r.status == 0, "\(r.stderr)")

        let pixels = stride(from: 0, to: picture.count, by: 3).map { (r: picture[$0], g: picture[$0 + 1], b: picture[$0 + 2]) }
        #expect(pixels.map(\.g).max() ?? 255 <= 8, "green is dropped before the preview")
        func share(_ isColour: ((r: UInt8, g: UInt8, b: UInt8)) -> Bool) -> Double {
            Double(pixels.filter(isColour).count) / Double(max(1, pixels.count))
        }
        #expect(share { $0.r > 150 && $0.b > 150 } > 0.05, "magenta: the white and magenta bars")
        #expect(share { $0.r > 150 && $0.b < 40 } > 0.05, "red: the yellow and red bars")
        #expect(share { $0.b > 150 && $0.r < 40 } > 0.05, "blue: the cyan and blue bars")

        let report = try recording.report
        let preview = try #require(report.nodes.first { $0.id == "preview" })
        let encoder = try #require(report.nodes.first { $0.id == "h264" })
        let shown = try #require(preview.shown), dropped = try #require(preview.dropped)
        let recorded = try #require(try MediaProbe(recording.out, countFrames: true).stream("video")?.frameCount)
        #expect(preview.buffersIn == encoder.buffersIn, "the fan-out gives the preview every frame it gives the encoder")
        #expect(recorded == encoder.buffersIn)
        #expect(shown > 0 && shown <= preview.buffersIn)
        #expect(recorded - shown <= dropped, "recorded \(recorded), shown \(shown), dropped \(dropped)")
        #expect(r.stderr.contains("\n  preview: \(shown) frames shown, \(dropped) dropped"), "\(r.stderr)")
    }

    /// Closing the window (as a window manager's close button does) stops the recording as
    /// Ctrl-C does: exit 0, the run `stopped`, and a complete MP4 holding every frame that
    /// reached the encoder, index first. Closed as soon as it shows its first frame (the
    /// pipeline may still be starting: it stops once playing) or once recording is under way.
    @Test(.timeLimit(.minutes(10)), arguments: [0, 1.5])
    func closingTheWindowStopsTheRunAndFinishesTheFile(afterSeconds media: Double) throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let recording = try Recording(seconds: 60)
        let (run, window, _) = try recording.startShowing(on: display, ["--progress", "always"])
        if media > 0 { try run.waitForPosition(atLeast: media) }
        try display.close(window)
        let r = run.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("\u{1B}[Kstopped in "), "\(r.stderr)")

        let report = try recording.report
        #expect(report.status == .stopped, "the run ended when the window closed, not at its 60 s (that would be completed)")
        #expect(report.error == nil)
        #expect(report.outputs == [OutputReport(node: "file", path: recording.out, status: .completed)])
        let probe = try MediaProbe(recording.out, countFrames: true)
        let video = try #require(probe.stream("video"))
        let frames = try #require(video.frameCount)
        #expect(frames > 0 && frames == report.nodes.first { $0.id == "h264" }?.buffersIn, "every frame encoded is in the file")
        #expect(abs(probe.duration - Double(frames) / 30) < 0.5 && probe.duration < 40, "duration \(probe.duration) for \(frames) frames")
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.topLevelBoxes.firstIndex(of: "moov")! < probe.topLevelBoxes.firstIndex(of: "mdat")!)
        #expect(try FileManager.default.contentsOfDirectory(atPath: recording.folder.path).sorted() == ["record.mp4", "stats.json"])
    }

    /// A display that stalls (the X server stopped for 4 s) costs the preview frames, never the
    /// recording: the file's frames follow one another with no gap, while the preview counts the
    /// frames it could not show. (A preview that made its producer wait would fill the queues on
    /// the way, 2 s of frames, and the camera would then drop 2 s of them.)
    @Test(.timeLimit(.minutes(10)))
    func aStalledDisplayCostsThePreviewFramesNotTheRecording() throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let recording = try Recording(seconds: 8)
        let (run, _, _) = try recording.startShowing(on: display)
        display.freeze()
        usleep(4_000_000)
        display.thaw()
        let r = run.wait()
        #expect(r.status == 0, "\(r.stderr)")

        let report = try recording.report
        let preview = try #require(report.nodes.first { $0.id == "preview" })
        #expect(preview.dropped ?? 0 >= 60, "two seconds of frames or more went unshown while the display stalled: \(preview)")
        let times = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
                                                      "-of", "csv=p=0", recording.out])
            .split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",")[0]) }.sorted()
        let gap = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .infinity
        #expect(times.count > 150 && gap < 1, "\(times.count) frames recorded, longest gap \(gap) s")
        let camera = try #require(report.nodes.first { $0.id == "camera" })
        let cameraDrops = report.edges.first { $0.from == "camera.out" }?.drops ?? -1
        #expect(times.count + cameraDrops == camera.buffersOut)
    }

    /// With Wayland and no X server, the preview is a Wayland client (waylandsink) that shows
    /// the recording's frames, counted as under X.
    @Test(.timeLimit(.minutes(10)))
    func underWaylandAloneThePreviewShowsTheFrames() throws {
        let compositor = try HeadlessWayland()
        defer { compositor.stop() }
        let recording = try Recording(seconds: 3)
        let r = try recording.start(environment: compositor.environment).wait()
        #expect(r.status == 0, "\(r.stderr)")
        let preview = try #require(try recording.report.nodes.first { $0.id == "preview" })
        let shown = try #require(preview.shown), dropped = try #require(preview.dropped)
        let recorded = try #require(try MediaProbe(recording.out, countFrames: true).stream("video")?.frameCount)
        #expect(shown > 0 && recorded - shown <= dropped, "recorded \(recorded), shown \(shown), dropped \(dropped)")
    }

    /// With no display, a graph with a preview fails before it runs (73, an output that cannot be
    /// created), naming the node and the way to record without it, and writes nothing; validating
    /// it needs no display.
    @Test(arguments: [nil, ""] as [String?])
    func withoutADisplayThePreviewFailsBeforeItRuns(_ value: String?) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = value
        environment["WAYLAND_DISPLAY"] = value
        let recording = try Recording(seconds: 1, into: "new/record.mp4")
        let r = try recording.start(environment: environment).wait()
        #expect(r.status == 73)
        #expect(r.stderr == """
            error: nodes.preview: no display to show the preview on (DISPLAY and WAYLAND_DISPLAY are not set); run it in a \
            graphical session, or remove node "preview" and its edge to run without a preview (graphs/record.json records as \
            graphs/record-preview.json does, without one)

            """)
        #expect(try FileManager.default.contentsOfDirectory(atPath: recording.folder.path) == [])
        let validate = try RunningGraphctl(["validate", Graphctl.graph("record-preview.json")], environment: environment).wait()
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stdout == "\(Graphctl.graph("record-preview.json")): ok (8 nodes, 7 edges)\n")
    }

    /// A display that is named but where no X server answers fails the same way, before
    /// anything is written, saying which display it tried.
    @Test func aDisplayThatDoesNotAnswerFailsBeforeItRuns() throws {
        let number = try #require((200..<400).first { n in
            !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") && !FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
        })
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":\(number)"
        let recording = try Recording(seconds: 1, into: "new/record.mp4")
        let r = try recording.start(environment: environment).wait()
        #expect(r.status == 73)
        #expect(r.stderr.hasPrefix("error: nodes.preview: cannot open the display DISPLAY=\":\(number)\" to show the preview on ("), "\(r.stderr)")
        #expect(r.stderr.hasSuffix("or remove node \"preview\" and its edge to run without a preview\n"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: recording.folder.path) == [])
    }
}
