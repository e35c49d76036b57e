import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// What the container sinks' and demux's tests share: source files made by ffmpeg, a remux graph
/// (`source.file → demux → sink`), and ffmpeg's view of what came out.
enum RemuxChecks {
    /// A source file for a remux, and the ffmpeg arguments that make it (2 s, small).
    struct Source: Sendable, CustomStringConvertible {
        var name: String
        var arguments: [String]
        var description: String { name }

        static let testsrc = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25"]
        static let tone48k = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]
        static let tone44k = ["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100"]
        static let picture = ["-pix_fmt", "yuv420p", "-g", "12"]

        static let h264AAC = Source(name: "h264-aac.mp4", arguments: testsrc + tone44k + picture
                                    + ["-c:v", "libx264", "-bf", "2", "-c:a", "aac"])
        static let h264Matroska = Source(name: "h264.mkv", arguments: testsrc + picture + ["-c:v", "libx264", "-bf", "2"])
        static let hevc = Source(name: "hevc.mkv", arguments: testsrc + picture
                                 + ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=3", "-tag:v", "hvc1"])
        static let vp9Opus = Source(name: "vp9-opus.webm", arguments: testsrc + tone48k + picture
                                    + ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-b:v", "200k", "-c:a", "libopus", "-b:a", "64k"])
        static let av1 = Source(name: "av1.mkv", arguments: testsrc + picture + ["-c:v", "libaom-av1", "-cpu-used", "8", "-b:v", "200k"])
        static let opus = Source(name: "opus.ogg", arguments: tone48k + ["-c:a", "libopus", "-b:a", "64k"])
        static let flac = Source(name: "tone.flac", arguments: tone44k + ["-c:a", "flac"])
        static let alac = Source(name: "alac.m4a", arguments: tone44k + ["-c:a", "alac"])

        /// Makes the file in `folder` (2 s) and returns its path.
        func make(in folder: URL) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try TestMedia.runTool("ffmpeg", ["-v", "error"] + arguments + ["-t", "2", "-y", path])
            return path
        }
    }

    /// `source.file → demux → sink` of `type` writing `out`, with `ports` connected, on `plan`
    /// (by default the one the graph gets); the run's report once it ended.
    static func run(_ source: String, into type: String, at out: String, ports: [String], params: String = "", plan: RunPlan? = nil) throws -> RunReport {
        let edges = ports.map { "\"demux.\($0) -> file.\($0)\"" }.joined(separator: ", ")
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(source)" } }, "demux": { "type": "demux" },
              "file": { "type": "\(type)", "params": { "path": "\(out)"\(params) } } },
              "edges": [ "src.out -> demux.in", \(edges) ] }
            """)
        let run = try GraphRun(graph, plan: plan)
        try run.start()
        return run.wait()
    }

    /// Each decoded frame of a stream (`v`, `a`) as ffmpeg gives it: size and hash.
    static func frames(_ path: String, _ stream: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:\(stream):0", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map(sizeAndHash)
    }

    /// A decoded audio stream: ffmpeg's hash of all its samples, and how many there are per channel.
    static func audio(_ path: String) throws -> (md5: String, samples: Int) {
        let md5 = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:a:0", "-f", "md5", "-"])
        let lines = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:a:0", "-f", "framemd5", "-"]).split(separator: "\n")
        // The time base is one sample: the durations add up to the samples decoded.
        let samples = lines.filter { !$0.hasPrefix("#") }.compactMap { Int($0.split(separator: ",")[3].trimmingCharacters(in: .whitespaces)) }.reduce(0, +)
        return (md5.trimmingCharacters(in: .whitespacesAndNewlines), samples)
    }

    /// The stored packets of a stream, as `ffmpeg -c copy` reads them: size and hash (not the
    /// durations: an Opus stream's first and last say what its pre-skip and end trim cut).
    static func packets(_ path: String, _ stream: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:\(stream):0", "-c", "copy", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map(sizeAndHash)
    }

    /// A framemd5 line's size and hash (its 5th and 6th fields; side data may follow them).
    static func sizeAndHash(_ line: Substring) -> String {
        line.split(separator: ",").dropFirst(4).prefix(2).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ",")
    }

    /// A Matroska file's EBML DocType (`matroska`, `webm`), from its header's first bytes.
    static func docType(_ path: String) -> String? {
        guard let bytes = FileManager.default.contents(atPath: path)?.prefix(64) else { return nil }
        let text = String(decoding: bytes.map { $0 >= 0x20 && $0 < 0x7f ? $0 : 0x20 }, as: UTF8.self)
        return ["webm", "matroska"].first { text.contains($0) }
    }

    /// The AAC packets GStreamer's MP4 demuxer gives of `packets` (an MP4's, by ffmpeg): those
    /// within the track's edit list. The priming packet before it is not passed; the last, which
    /// the edit ends inside, 1.22's drops and 1.26's passes (1.24's was not measured: either is
    /// taken), docs/GRAPH-FORMAT.md.
    static func aacPacketsPassed(of packets: [String]) -> [[String]] {
        let minor = GStreamer.version.minor
        return minor < 24 ? [Array(packets.dropFirst().dropLast())]
            : minor < 26 ? [Array(packets.dropFirst().dropLast()), Array(packets.dropFirst())] : [Array(packets.dropFirst())]
    }
}

extension RemuxChecks {
    /// A file's track as demux gives it (`audio` or `video`), every sample, for a sink's harness.
    static func demuxed(_ path: String, _ port: String) throws -> [SampleBuffer] {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(path)" } },
              "demux": { "type": "demux" }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> demux.in", "demux.\(port) -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("out")
        var samples: [SampleBuffer] = []
        while let sample = output.copyNextSampleBuffer() { samples.append(sample) }
        let report = run.wait()
        guard report.status == .completed else { throw report.error ?? GraphError(.runFailed, "demuxing \(path) failed") }
        return samples
    }

    /// Writes `samples` into a harness of `node` (its input `port`) and cancels the run while the
    /// file is being written, once its temporary file has bytes: what is left in `folder`.
    static func cancelMidRun(_ node: String, port: String, samples: [SampleBuffer], temporary: String) throws -> (RunReport, [String]) {
        let h = try NodeHarness(node, inputs: [port])
        try h.push(Array(samples.prefix(samples.count / 2)), to: port)
        // Written as it goes: the muxer's first bytes reach the temporary file.
        var waited = 0
        while ((try? FileManager.default.attributesOfItem(atPath: temporary)[.size] as? Int) ?? 0) == 0, waited < 500 {
            usleep(10_000)
            waited += 1
        }
        h.run.cancel()
        let report = h.run.wait()
        let folder = URL(fileURLWithPath: temporary).deletingLastPathComponent().path
        return (report, try FileManager.default.contentsOfDirectory(atPath: folder).sorted())
    }

    /// A read-only folder, even to root: a tmpfs mounted read-only (root), else a folder without
    /// write permission. `body` runs with it; the mount is undone after.
    static func withReadOnlyFolder(in folder: URL, _ body: (URL) throws -> Void) throws {
        let readOnly = folder.appendingPathComponent("read-only")
        try FileManager.default.createDirectory(at: readOnly, withIntermediateDirectories: false)
        if geteuid() == 0 {
            try TestMedia.runTool("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", readOnly.path])
            defer { _ = try? TestMedia.runTool("umount", [readOnly.path]) }
            try body(readOnly)
        } else {
            chmod(readOnly.path, 0o555)
            defer { chmod(readOnly.path, 0o755) }
            try body(readOnly)
        }
    }
}

extension RemuxChecks {
    /// A run's report within `seconds`, or nil (the run is then cancelled, so the test ends
    /// rather than hang): for runs that wait on a network peer.
    static func ended(_ run: GraphRun, within seconds: Double) -> RunReport? {
        let waiting = TestThread("wait") { run.wait() }
        if let report = waiting.join(guardSeconds: seconds) { return report }
        let cancelled = Date()
        run.cancel()
        let after = waiting.join(guardSeconds: 10)
        // Slow (a loaded machine) or stuck: what a failure needs to tell the two apart.
        let outcome: String = if let after {
            "a cancel ended it \(String(format: "%.2f", Date().timeIntervalSince(cancelled))) s later (\(after.status)): it was slow, not stuck"
        } else {
            "a cancel did not end it within 10 s: it is stuck"
        }
        Issue.record("the run had not ended \(seconds) s after it was waited for; \(outcome)")
        return nil
    }
}
