import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `demux`: a file's AAC and H.264 as stored; graphs/remux.json remuxes without re-encoding.
@Suite(.media, .timeLimit(.minutes(10))) struct DemuxNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// graphs/remux.json as shipped, with its paths overridden, on both plans: the video's packets
    /// come out byte-identical. On the container path (the graph's own, for an MP4) so do the
    /// sound's, all of them, with the edit list that hides the AAC priming, as `ffmpeg -c copy`
    /// keeps them: the sound decodes to the source's samples. Through the pipeline, the sound's
    /// within its edit list only (GStreamer's MP4 demuxer, RemuxChecks; docs/GRAPH-FORMAT.md).
    @Test(arguments: [RunPlan.containerPath, .pipeline])
    func remuxGraphKeepsThePackets(_ plan: RunPlan) throws {
        let source = folder.appendingPathComponent("in.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=duration=2",
                                         "-t", "2", "-c:v", "libx264", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", source])
        let out = folder.appendingPathComponent("remuxed.mp4").path
        let graphFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../graphs/remux.json").standardized.path
        let graph = try GraphLoader(registry: .builtIn).load(contentsOf: graphFile, overrides: [
            try .init(parsing: "src.path=\(source)"), try .init(parsing: "file.path=\(out)"),
        ])
        #expect(RunPlan(for: graph) == .containerPath)
        let run = try GraphRun(graph, plan: plan)
        #expect(run.plan == plan)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.codecName == "h264" && probe.stream("audio")?.codecName == "aac")
        let videoIn = try RemuxChecks.packets(source, "v"), videoOut = try RemuxChecks.packets(out, "v")
        #expect(videoIn.count == 50 && videoOut == videoIn)
        #expect(try RemuxChecks.frames(out, "v") == RemuxChecks.frames(source, "v"))
        let audioIn = try RemuxChecks.packets(source, "a"), audioOut = try RemuxChecks.packets(out, "a")
        if plan == .containerPath {
            #expect(audioIn.count == 88 && audioOut == audioIn)
            #expect(try RemuxChecks.audio(out) == RemuxChecks.audio(source))
        } else {
            #expect(RemuxChecks.aacPacketsPassed(of: audioIn).contains(audioOut),
                    "GStreamer 1.\(GStreamer.version.minor): \(audioIn.count) packets in, \(audioOut.count) out; last \(audioIn.suffix(2)) vs \(audioOut.suffix(2))")
        }
    }

    /// A codec demux does not pass is refused by name when the stream appears.
    @Test func anotherCodecIsRefusedByName() throws {
        let mp3 = folder.appendingPathComponent("tone.mp3").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libmp3lame", "-y", mp3])
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(mp3)" } },
              "demux": { "type": "demux" }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> demux.in", "demux.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("out")
        while output.copyNextSampleBuffer() != nil {}
        let report = run.wait()
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains("not AAC") && message.contains("demux"), "\(message)")
    }

    /// Into an MP4 without re-encoding: HEVC and H.264 out of Matroska, which stores no decode
    /// times (worked out from the presentation times, so the B-frames play in order), AV1, and
    /// ALAC out of an M4A, its magic cookie kept, and VP9 out of WebM (its `vpcC` written from
    /// the stream; GStreamer's MP4 muxer refused it): every frame decodes as the source's, every
    /// sample is there. HEVC is tagged hvc1, as Apple's players need.
    @Test(arguments: [RemuxChecks.Source.hevc, .h264Matroska, .av1, .alac, .vp9Opus])
    func remuxIntoMP4KeepsEveryFrameAndSample(_ source: RemuxChecks.Source) throws {
        let input = try source.make(in: folder)
        let port = try MediaProbe(input).stream("video") != nil ? "video" : "audio"
        let out = folder.appendingPathComponent("remuxed.mp4").path
        let report = try RemuxChecks.run(input, into: "sink.mp4", at: out, ports: [port])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        if port == "video" {
            let frames = try RemuxChecks.frames(input, "v")
            #expect(frames.count == 50)
            #expect(try RemuxChecks.frames(out, "v") == frames)
        } else {
            let (md5, samples) = try RemuxChecks.audio(input)
            let remuxed = try RemuxChecks.audio(out)
            #expect(samples == 88_200 && remuxed.samples == samples, "\(remuxed.samples) samples of \(samples)")
            #expect(remuxed.md5 == md5)
        }
        if source.name == RemuxChecks.Source.hevc.name {
            let tag = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", out])
            #expect(tag.trimmingCharacters(in: .whitespacesAndNewlines) == "hvc1")
        }
    }

    /// A track whose codec the sink it feeds cannot hold passes the loader (demux's output may be
    /// any of its codecs) and fails the run when the track appears, naming the file, the codec and
    /// what the sink takes; nothing is written.
    @Test(arguments: [
        ("tone.flac", "sink.webm", "audio", "audio track is FLAC, which what demux.audio feeds does not take (it takes Opus)"),
        ("alac.m4a", "sink.mkv", "audio", "audio track is ALAC, which what demux.audio feeds does not take (it takes AAC, Opus or FLAC)"),
        ("h264.mkv", "sink.webm", "video", "video track is H.264, which what demux.video feeds does not take (it takes VP9 or AV1)"),
    ])
    func aCodecTheSinkCannotHoldFailsTheRunByName(_ name: String, _ sink: String, _ port: String, _ words: String) throws {
        let source = [RemuxChecks.Source.flac, .alac, .h264Matroska].first { $0.name == name }!
        let input = try source.make(in: folder)
        let out = folder.appendingPathComponent("out.\(sink.dropFirst(5))").path
        let report = try RemuxChecks.run(input, into: sink, at: out, ports: [port])
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        let message = report.error?.description ?? ""
        #expect(message.contains("node \"demux\"") && message.contains("\"\(input)\"'s \(words)"), "\(message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [name])
    }

    /// A damaged file (an MP4 cut before its index, an Ogg page whose length was overwritten)
    /// fails the run with an error naming it, and nothing is written.
    @Test func aDamagedFileFailsNamingIt() throws {
        for (source, cut, sink, ports) in [(RemuxChecks.Source.h264AAC, true, "sink.mkv", ["audio", "video"]), (.opus, false, "sink.ogg", ["audio"])] {
            let input = try source.make(in: folder)
            var bytes = try Data(contentsOf: URL(fileURLWithPath: input))
            if cut {
                bytes = bytes.prefix(bytes.count / 2)
            } else {
                for i in 60..<400 { bytes[i] = UInt8(truncatingIfNeeded: i &* 7) }
            }
            try bytes.write(to: URL(fileURLWithPath: input))
            let out = folder.appendingPathComponent("out.\(sink.dropFirst(5))").path
            let report = try RemuxChecks.run(input, into: sink, at: out, ports: ports)
            #expect(report.status == .failed)
            let message = report.error?.description ?? ""
            #expect(message.contains("\"\(input)\"") && (message.contains("cut short") || message.contains("not finished")), "\(message)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [source.name])
            try FileManager.default.removeItem(atPath: input)
        }
    }

    /// Opus out of Ogg into an MP4: Ogg times only a page's end, and MP4's muxer refuses a sample
    /// without a time ("Buffer has no PTS"); opusparse times each packet. Every packet arrives as
    /// stored. (The samples decoded are not compared: no edit list trims the stream's padding,
    /// which an Ogg's granule positions do, so a decoder gives a few hundred samples more.)
    @Test func opusIntoMP4KeepsThePackets() throws {
        let input = try RemuxChecks.Source.opus.make(in: folder)
        let out = folder.appendingPathComponent("opus.mp4").path
        let report = try RemuxChecks.run(input, into: "sink.mp4", at: out, ports: ["audio"])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let packets = try RemuxChecks.packets(input, "a")
        #expect(packets.count == 101)
        #expect(try RemuxChecks.packets(out, "a") == packets)
    }
}
