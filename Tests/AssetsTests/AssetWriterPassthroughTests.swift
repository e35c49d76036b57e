import Assets
import Foundation
import GraphKit
import GraphKitTesting
import MediaContainers
import TestSupport
import Testing

/// A writer whose inputs are all passthrough keeps its samples' own times and writes the
/// session's start as each track's edit, as AVFoundation does: the samples before the session
/// stay in the file (a later picture may need them) and are not shown.
@Suite(.media, .timeLimit(.minutes(5))) struct AssetWriterPassthroughTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A 2-second H.264 file of 25 fps, a key frame every 10 (no B-frames: the reader's times
    /// are the file's).
    func source() throws -> String {
        let path = folder.appendingPathComponent("source.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-t", "2", "-c:v", "libx264",
                                         "-bf", "0", "-g", "10", "-pix_fmt", "yuv420p", "-y", path])
        return path
    }

    /// Every packet of `path`'s video, shown or not (ffprobe with the edit list ignored: it
    /// leaves out what comes before the key frame an edit needs): size and MD5 of each.
    func packets(_ path: String) throws -> [String] {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-ignore_editlist", "1", "-select_streams", "v:0", "-show_entries", "packet=size,data_hash",
                                          "-show_data_hash", "md5", "-of", "csv=p=0", path])
            .split(separator: "\n").map(String.init)
    }

    /// The pictures `path` shows (ffmpeg, edit lists applied): each one's MD5, in order.
    func shown(_ path: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// `source`'s video read as stored, each sample moved `offset` later, into a passthrough
    /// writer whose session starts at `session` and ends at `end` (said after markAsFinished(),
    /// as apps often do: the file is finished only by finishWriting()); the file's path.
    func rewrap(_ source: String, offset: MediaTime, session: MediaTime, end: MediaTime? = nil, name: String) async throws -> String {
        let asset = try Asset(path: source)
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .video), outputSettings: .stored(.video))
        try reader.add(output)
        try reader.startReading()
        let out = folder.appendingPathComponent(name).path
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: PassthroughSettings(mediaType: .video))
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: session)
        for try await sample in output.samples {
            var moved = sample
            moved.presentationTime = sample.presentationTime.map { $0 + offset }
            moved.decodeTime = sample.decodeTime.map { $0 + offset }
            try await input.append(moved)
        }
        input.markAsFinished()
        // The run could end here, before finishWriting() says where the file starts and ends.
        try await Task.sleep(for: .milliseconds(300))
        if let end { try writer.endSession(atSourceTime: end) }
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        return out
    }

    /// The session at the first sample's time, as a capture's or a reader's first sample starts
    /// it (here 100 s in): every packet, byte-identical, shown from 0 for the source's 2 s.
    @Test func aSessionAtTheFirstSampleStartsTheFileThere() async throws {
        let source = try source()
        let out = try await rewrap(source, offset: MediaTime(value: 100, timescale: 1), session: MediaTime(value: 100, timescale: 1), name: "late.mp4")
        #expect(try packets(out) == packets(source))
        #expect(abs(try MediaProbe(out).duration - 2) < 0.01)
        let all = try shown(source)
        #expect(all.count == 50)
        #expect(try shown(out) == all)
    }

    /// A session that starts before the first sample (at 0, the samples from 0.5 s): the file
    /// starts at the session all the same, its track with an empty edit of 0.5 s, as
    /// AVFoundation inserts one "to preserve synchronization between tracks"; every packet
    /// byte-identical and every picture shown, from 0.5 s.
    @Test func aSessionBeforeTheFirstSampleKeepsTheLead() async throws {
        let source = try source()
        let out = try await rewrap(source, offset: MediaTime(value: 1, timescale: 2), session: .zero, name: "lead.mp4")
        #expect(try packets(out) == packets(source))
        // The movie's own duration: ffprobe's format duration says 2.5 with FFmpeg 5.1 and
        // leaves the lead out with 7.1.
        let bytes = try #require(FileBytes(path: out))
        let movie = try #require(try MP4File(bytes).movie())
        #expect(abs(Double(try #require(movie.header).duration) / Double(movie.timescale) - 2.5) < 0.01)
        let start = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time", "-of", "csv=p=0", out])
        #expect(abs((Double(start.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1) - 0.5) < 0.001, "\(start)")
        #expect(try shown(out) == shown(source))
    }

    /// The session from 0.6 s, between key frames (0.4 and 0.8 s), to 1.6 s or to the end: every
    /// packet stays in the file, and it shows from the picture at 0.6 s (frame 15) for 1 s or
    /// 1.4 s, each picture as the source's decodes.
    @Test(arguments: [true, false]) func samplesBeforeTheSessionStayAndAreNotShown(ended: Bool) async throws {
        let source = try source()
        let out = try await rewrap(source, offset: .zero, session: MediaTime(value: 3, timescale: 5),
                                   end: ended ? MediaTime(value: 8, timescale: 5) : nil, name: "window.mp4")
        let original = try packets(source)
        #expect(original.count == 50)
        #expect(try packets(out) == original, "every packet is in the file")
        #expect(abs(try MediaProbe(out).duration - (ended ? 1 : 1.4)) < 0.01)
        let all = try shown(source)
        #expect(all.count == 50)
        #expect(try shown(out) == Array(all[15..<(ended ? 40 : 50)]))
    }

    /// A fragmented file is written as it goes, on the session's clock: a passthrough sample
    /// before the session is refused, saying why and what to do, rather than written at 0.
    @Test func aFragmentedFileRefusesASampleBeforeTheSession() async throws {
        let source = try source()
        let asset = try Asset(path: source)
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .video), outputSettings: .stored(.video))
        try reader.add(output)
        try reader.startReading()
        let out = folder.appendingPathComponent("fragmented.mp4").path
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        writer.movieFragmentInterval = MediaTime(value: 1, timescale: 1)
        let input = AssetWriterInput(mediaType: .video, outputSettings: PassthroughSettings(mediaType: .video))
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: MediaTime(value: 3, timescale: 5))
        var refused: GraphError?
        for try await sample in output.samples {
            do { try await input.append(sample) } catch { refused = error; break }
        }
        #expect(refused?.code == .usage && refused?.message.contains("before the session's start (0.6 s)") == true, "\(String(describing: refused))")
        writer.cancelWriting()
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
