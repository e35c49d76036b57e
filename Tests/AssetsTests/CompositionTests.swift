import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// Compositions (trim and join, issue 31): edits of the time line, and a reader over a
/// composition, on files ffmpeg makes here.
@Suite(.media, .timeLimit(.minutes(10))) struct CompositionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static func t(_ seconds: Double) -> MediaTime { MediaTime(value: Int64((seconds * 8_000).rounded()), timescale: 8_000) }
    static func range(_ start: Double, _ duration: Double) -> MediaTimeRange { MediaTimeRange(start: t(start), duration: t(duration)) }

    /// A WAV at 8 kHz mono whose sample n is (n + offset) mod 4096 − 2048: every sample is known.
    func rampWAV(_ name: String, seconds: Double, offset: Int = 0) throws -> Asset {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "aevalsrc=(mod(n+\(offset)\\,4096)-2048)/32768:s=8000:d=\(seconds)",
                                         "-c:a", "pcm_s16le", "-y", p])
        return try Asset(path: p)
    }

    /// An H.264 MP4 of testsrc at 25 fps, 1 s GOP. Every file is tagged BT.709 whatever its
    /// pattern: FFmpeg 7.1's smptebars says BT.601, which x264 writes into the parameter sets,
    /// and files that say different colours cannot be joined as stored.
    func video(_ name: String, seconds: Double, size: String = "160x120", pattern: String = "testsrc") throws -> Asset {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "\(pattern)=size=\(size):rate=25:duration=\(seconds)",
                                         "-c:v", "libx264", "-g", "25", "-bf", "2", "-pix_fmt", "yuv420p",
                                         "-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709", "-color_range", "tv", "-y", p])
        return try Asset(path: p)
    }

    static func ramp(_ n: Int, offset: Int) -> Int16 { Int16((n + offset) % 4096 - 2048) }

    // MARK: Edits

    /// Inserts push later pieces back, gaps are segments, removes pull them forward, and the
    /// segments always tile the time line from 0.
    @Test func editsKeepTheTimeLineTiled() throws {
        let a = try rampWAV("a.wav", seconds: 2), b = try rampWAV("b.wav", seconds: 1)
        let ta = try a.track(withMediaType: .audio), tb = try b.track(withMediaType: .audio)
        var track = CompositionTrack(mediaType: .audio, trackID: 1)
        try track.insertTimeRange(Self.range(0.5, 1), of: ta, in: a, at: .zero)
        try track.insertTimeRange(Self.range(0, 1), of: tb, in: b, at: Self.t(1))
        #expect(track.duration == Self.t(2))
        // b in the middle of a's piece: a's piece is cut in two around it.
        try track.insertTimeRange(Self.range(0, 0.25), of: tb, in: b, at: Self.t(0.5))
        #expect(track.segments.map(\.sourcePath) == [a.path, b.path, a.path, b.path])
        #expect(track.segments.map(\.sourceRange) == [Self.range(0.5, 0.5), Self.range(0, 0.25), Self.range(1, 0.5), Self.range(0, 1)])
        #expect(track.segments.map(\.destinationRange.start) == [Self.t(0), Self.t(0.5), Self.t(0.75), Self.t(1.25)])
        try track.insertEmptyTimeRange(Self.range(1.25, 0.5))
        #expect(track.segments.map(\.isEmpty) == [false, false, false, true, false])
        #expect(track.duration == Self.t(2.75))
        // Removing across a gap and part of a piece.
        try track.removeTimeRange(Self.range(1.0, 1.0))
        #expect(track.segments.map(\.isEmpty) == [false, false, false, false])
        #expect(track.segments.last?.sourceRange == Self.range(0.25, 0.75))
        #expect(track.duration == Self.t(1.75))
        for (x, y) in zip(track.segments, track.segments.dropFirst()) { #expect(x.destinationRange.end == y.destinationRange.start) }
        // Inserting past the end leaves a gap before.
        try track.insertTimeRange(Self.range(0, 0.5), of: ta, in: a, at: Self.t(3))
        #expect(track.segments.suffix(2).map(\.isEmpty) == [true, false])
        #expect(track.duration == Self.t(3.5))
    }

    /// An empty range, a range past the source's end and a track of another type are refused,
    /// naming the file and the range, and leave the track as it was.
    @Test func badRangesAreRefusedAndChangeNothing() throws {
        let a = try rampWAV("a.wav", seconds: 1)
        let ta = try a.track(withMediaType: .audio)
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio))
        try track.insertTimeRange(Self.range(0, 0.5), of: ta, in: a, at: .zero)
        let before = track.track
        let empty = #expect(throws: GraphError.self) { try track.insertTimeRange(Self.range(0.2, 0), of: ta, in: a, at: .zero) }
        #expect(empty?.description.contains("a.wav") == true)
        #expect(empty?.message.contains("empty") == true)
        let beyond = #expect(throws: GraphError.self) { try track.insertTimeRange(Self.range(0.5, 1), of: ta, in: a, at: .zero) }
        #expect(beyond?.message.contains("past the track's end at 1.0 s") == true, "\(String(describing: beyond))")
        let video = try #require(composition.addMutableTrack(withMediaType: .video))
        let wrongType = #expect(throws: GraphError.self) { try video.insertTimeRange(Self.range(0, 0.5), of: ta, in: a, at: .zero) }
        #expect(wrongType?.message.contains("audio track cannot go into video") == true)
        #expect(track.track == before)
        #expect(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: track.trackID) == nil)
    }

    /// scaleTimeRange, as AVFoundation's: the segments in the range are shown over the new
    /// duration (their source ranges unchanged: played at source / target speed), those after it
    /// move by the difference; a piece across the range's edge is cut there first. A bad range
    /// or duration is refused and changes nothing. A scaled piece cannot be copied as stored:
    /// the passthrough export refuses it, naming it; so does a reader, which does not retime yet.
    @Test func scaleTimeRangeShowsTheRangeOverTheNewDuration() throws {
        let a = try rampWAV("a.wav", seconds: 2), b = try rampWAV("b.wav", seconds: 1)
        let composition = MutableComposition()
        try composition.insertTimeRange(Self.range(0, 2), of: a, at: .zero)
        try composition.insertTimeRange(Self.range(0, 1), of: b, at: Self.t(2))
        let track = try #require(composition.tracks.first)
        // [1 s, 2.5 s) over 3 s: the second half of a, then half of b, twice as long.
        try composition.scaleTimeRange(Self.range(1, 1.5), toDuration: Self.t(3))
        #expect(track.segments.map(\.sourceRange) == [Self.range(0, 1), Self.range(1, 1), Self.range(0, 0.5), Self.range(0.5, 0.5)])
        #expect(track.segments.map(\.destinationRange) == [Self.range(0, 1), Self.range(1, 2), Self.range(3, 1), Self.range(4, 0.5)])
        #expect(composition.duration == Self.t(4.5))
        // Halved again: a scaled piece cut inside keeps its speed.
        try track.scaleTimeRange(Self.range(2, 2), toDuration: Self.t(1))
        #expect(track.segments.map(\.sourceRange) == [Self.range(0, 1), Self.range(1, 0.5), Self.range(1.5, 0.5), Self.range(0, 0.5), Self.range(0.5, 0.5)])
        #expect(track.segments.map(\.destinationRange) == [Self.range(0, 1), Self.range(1, 1), Self.range(2, 0.5), Self.range(2.5, 0.5), Self.range(3, 0.5)])
        let before = track.track
        for (range, duration) in [(Self.range(0.5, 0), Self.t(1)), (Self.range(0, 1), Self.t(0)), (Self.range(5, 1), Self.t(1))] {
            let refused = #expect(throws: GraphError.self) { try track.scaleTimeRange(range, toDuration: duration) }
            #expect(refused?.code == .usage, "\(range) to \(duration)")
        }
        #expect(track.track == before)
        // The reader reads the unscaled first piece, then fails at the scaled one, naming it.
        let reader = try AssetReader(composition: composition.composition)
        let output = try AssetReaderTrackOutput(compositionTrack: track.track, outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(output)
        try reader.startReading()
        while output.copyNextSampleBuffer() != nil {}
        #expect(reader.status == .failed)
        #expect(reader.error?.message.contains("scaled") == true && reader.error?.description.contains(a.path) == true, "\(String(describing: reader.error))")
    }

    // MARK: Reading

    /// Pieces of two files, cut to the sample, read as one: every sample the ranges hold, in
    /// order, exact, with stamps that rise without a hole; a gap gives no sample, and the piece
    /// after it is stamped after the gap.
    @Test func aReaderJoinsAudioPiecesToTheSample() throws {
        let a = try rampWAV("a.wav", seconds: 2), b = try rampWAV("b.wav", seconds: 1, offset: 1000)
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio))
        // 0.3001 s: not on a 40 ms buffer edge, so the cut falls inside a buffer.
        try track.insertTimeRange(MediaTimeRange(start: MediaTime(value: 2_401, timescale: 8_000), duration: MediaTime(value: 4_003, timescale: 8_000)),
                                  of: try a.track(withMediaType: .audio), in: a, at: .zero)
        try track.insertTimeRange(Self.range(0.25, 0.5), of: try b.track(withMediaType: .audio), in: b, at: MediaTime(value: 4_003, timescale: 8_000))
        try track.insertEmptyTimeRange(MediaTimeRange(start: MediaTime(value: 8_003, timescale: 8_000), duration: Self.t(0.5)))
        try track.insertTimeRange(Self.range(0, 0.125), of: try a.track(withMediaType: .audio), in: a, at: MediaTime(value: 12_003, timescale: 8_000))
        let reader = try AssetReader(composition: composition.composition)
        let output = try AssetReaderTrackOutput(compositionTrack: track.track, outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(output)
        try reader.startReading()
        var all: [Int16] = [], stamps: [(MediaTime, MediaTime)] = []
        while let sample = output.copyNextSampleBuffer() {
            all += sample.withAudioSamples(as: Int16.self) { Array($0) }
            stamps.append((try #require(sample.presentationTime), try #require(sample.duration)))
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        let expected = (2_401..<6_404).map { Self.ramp($0, offset: 0) } + (2_000..<6_000).map { Self.ramp($0, offset: 1000) }
            + (0..<1_000).map { Self.ramp($0, offset: 0) }
        #expect(all.count == expected.count)
        #expect(all.indices.first { all[$0] != expected[$0] } == nil, "the first sample that differs")
        for (x, y) in zip(stamps, stamps.dropFirst()) { #expect(y.0 > x.0) }
        // The last piece starts after the gap: 12,003 samples in.
        let afterGap = try #require(stamps.first { $0.0 >= MediaTime(value: 8_003, timescale: 8_000) })
        #expect(abs((afterGap.0 - MediaTime(value: 12_003, timescale: 8_000)).seconds) < 0.000_001)
        let end = try #require(stamps.last.map { $0.0 + $0.1 })
        #expect(abs((end - composition.duration).seconds) < 0.000_01)
    }

    /// Video pieces from mid-GOP: each starts with the frame showing at its range's start (decoded
    /// from the keyframe before, the frames before dropped), stamps rise across the join, and the
    /// frames tile the composition's duration.
    @Test func aReaderJoinsVideoPiecesFromMidGOP() throws {
        let a = try video("a.mp4", seconds: 2), b = try video("b.mp4", seconds: 2, pattern: "smptebars")
        let composition = MutableComposition()
        try composition.insertTimeRange(MediaTimeRange(start: MediaTime(value: 13, timescale: 25), duration: MediaTime(value: 20, timescale: 25)), of: a, at: .zero)
        try composition.insertTimeRange(MediaTimeRange(start: MediaTime(value: 30, timescale: 25), duration: MediaTime(value: 10, timescale: 25)), of: b,
                                        at: MediaTime(value: 20, timescale: 25))
        #expect(composition.duration == MediaTime(value: 30, timescale: 25))
        let track = try #require(composition.composition.tracks(withMediaType: .video).first)
        let reader = try AssetReader(composition: composition.composition)
        let output = try AssetReaderTrackOutput(compositionTrack: track, outputSettings: .pixels(.bgra))
        try reader.add(output)
        try reader.startReading()
        var stamps: [MediaTime] = [], last: MediaTime = .zero
        while let frame = output.copyNextSampleBuffer() {
            let pts = try #require(frame.presentationTime)
            stamps.append(pts)
            last = pts + (frame.duration ?? .zero)
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        #expect(stamps.count == 30)
        #expect(stamps.first == .zero)
        for (x, y) in zip(stamps, stamps.dropFirst()) { #expect(y > x) }
        #expect(abs((last - composition.duration).seconds) < 0.001)
    }

    /// A piece whose file has gone by the time it is read fails reading, naming the piece and
    /// its file, after the pieces before it; cancelling a reader mid-piece ends its output.
    @Test func aMissingPieceFailsReadingByNameAndCancelEnds() throws {
        let a = try rampWAV("a.wav", seconds: 1), b = try rampWAV("b.wav", seconds: 1)
        let composition = MutableComposition()
        try composition.insertTimeRange(Self.range(0, 0.5), of: a, at: .zero)
        try composition.insertTimeRange(Self.range(0, 0.5), of: b, at: Self.t(0.5))
        try FileManager.default.removeItem(atPath: b.path)
        let reader = try AssetReader(composition: composition.composition)
        let output = try AssetReaderTrackOutput(compositionTrack: composition.composition.tracks[0], outputSettings: nil)
        try reader.add(output)
        try reader.startReading()
        var frames = 0
        while let sample = output.copyNextSampleBuffer() { frames += sample.frameCount }
        #expect(frames == 4_000)
        #expect(reader.status == .failed)
        #expect(reader.error?.description.contains("\"\(b.path)\"") == true, "\(String(describing: reader.error))")
        #expect(reader.error?.code == .inputUnreadable)

        let whole = MutableComposition()
        try whole.insertTimeRange(Self.range(0, 1), of: a, at: .zero)
        try whole.insertTimeRange(Self.range(0, 1), of: a, at: Self.t(1))
        let cancelled = try AssetReader(composition: whole.composition)
        let out = try AssetReaderTrackOutput(compositionTrack: whole.composition.tracks[0], outputSettings: nil)
        try cancelled.add(out)
        try cancelled.startReading()
        #expect(out.copyNextSampleBuffer() != nil)
        cancelled.cancelReading()
        #expect(out.copyNextSampleBuffer() == nil)
        #expect(cancelled.status == .cancelled)
    }

    /// A composition reader's video output takes one picture size: pieces of another size are
    /// refused when the output is added, naming the piece and both sizes.
    /// A piece of another size is fitted to the track's natural size (its first piece's), its
    /// shape kept, black bars where it leaves the frame: 320x180 (16:9) into 160x120 (4:3) is a
    /// 160x90 picture between bars, the same picture as ffmpeg's decode scaled to 160x90.
    @Test func videoPiecesOfAnotherSizeAreFittedToTheFirst() throws {
        let a = try video("a.mp4", seconds: 1), b = try video("b.mp4", seconds: 1, size: "320x180", pattern: "testsrc2")
        let composition = MutableComposition()
        try composition.insertTimeRange(Self.range(0, 1), of: a, at: .zero)
        try composition.insertTimeRange(Self.range(0, 1), of: b, at: Self.t(1))
        let track = try #require(composition.composition.tracks(withMediaType: .video).first)
        #expect(track.naturalSize.map { [$0.width, $0.height] } == [160, 120])
        let reader = try AssetReader(composition: composition.composition)
        let output = try AssetReaderTrackOutput(compositionTrack: track, outputSettings: .pixels(.i420))
        try reader.add(output)
        try reader.startReading()
        var frames: [(time: Double, luma: [UInt8])] = []
        while let frame = output.copyNextSampleBuffer() {
            guard case .rawVideo(let v)? = frame.format else { Issue.record("not raw video: \(String(describing: frame.format))"); break }
            #expect(v.width == 160 && v.height == 120)
            // The luma plane, row by row (the decoder's rows may be padded).
            var luma: [UInt8] = []
            var copy = frame
            try copy.withMutablePixelPlanes { planes in
                for row in 0..<120 { luma += UnsafeBufferPointer(start: (planes[0].baseAddress + row * planes[0].bytesPerRow).assumingMemoryBound(to: UInt8.self), count: 160) }
            }
            frames.append(((frame.presentationTime ?? .zero).seconds, luma))
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        #expect(frames.count == 50)
        // b's frame 12, shown at 1.48 s.
        let shown = try #require(frames.first { abs($0.time - 1.48) < 0.01 }).luma
        let rows = { (r: Range<Int>) in r.flatMap { y in shown[(y * 160)..<(y * 160 + 160)] } }
        // The bars: black (video range) above and below the picture.
        let bars = rows(0..<12) + rows(108..<120)
        #expect(bars.allSatisfy { abs(Int($0) - 16) <= 2 }, "bars \(Set(bars).sorted().prefix(8))")
        let expected = Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: try grayFrame(b.path, frame: 12, scale: "160:90")))).prefix(160 * 90))
        #expect(expected.count == 160 * 90)
        // GStreamer puts the picture 14 rows down (ffmpeg's pad would put it 15): the better of the two.
        let difference = (14...15).map { top in
            let ours = rows((top + 2)..<(top + 88)), theirs = Array(expected[(2 * 160)..<(88 * 160)])
            return Double(zip(ours, theirs).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(theirs.count)
        }.min() ?? .infinity
        #expect(difference < 3, "mean absolute luma difference \(difference)")
    }

    /// Frame `frame` of `file` decoded by ffmpeg, scaled to `scale` ("W:H"), as I420 (its luma
    /// plane first, in video range: ffmpeg's `gray` would stretch it): the file it is in.
    func grayFrame(_ file: String, frame: Int, scale: String) throws -> String {
        let out = path("\(URL(fileURLWithPath: file).lastPathComponent)-\(frame).yuv")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-vf", "select=eq(n\\,\(frame)),scale=\(scale)", "-frames:v", "1",
                                         "-f", "rawvideo", "-pix_fmt", "yuv420p", "-y", out])
        return out
    }

    /// Each video packet's frame number (its presentation time at 25 fps), size and MD5, in decode
    /// order, as ffprobe reads them without decoding: from the first shown at or after `start`
    /// (seconds) up to before the first shown at or after `end`, in decode order (a frame decoded
    /// after one shown past the end may be predicted from it).
    func packets(_ path: String, from start: Double = 0, to end: Double = .infinity) throws -> [(frame: Int, packet: String)] {
        let text = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time,size,data_hash",
                                                     "-show_data_hash", "md5", "-of", "csv=p=0", path])
        let all = text.split(separator: "\n").compactMap { line -> (Double, String)? in
            let f = line.split(separator: ",")
            guard f.count == 3, let pts = Double(f[0]) else { return nil }
            return (pts, "\(f[1]) \(f[2])")
        }
        return all.drop { $0.0 < start - 0.000_1 }.prefix { $0.0 < end - 0.000_1 }.map { (Int(($0.0 * 25).rounded()), $0.1) }
    }

    /// Decoded frames' MD5s (ffmpeg's framemd5), in presentation order.
    func frames(_ path: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: ",").last ?? "").trimmingCharacters(in: .whitespaces) }
    }

    /// Ranges of three files joined without re-encoding (read as stored, written through a
    /// passthrough input): the output's packets are the sources' packets in the ranges, byte for
    /// byte, its decoded frames the sources' frames in the ranges, and its stamps rise. A range
    /// that starts between keyframes starts at the keyframe before (as AVFoundation's passthrough).
    @Test func aPassthroughJoinCopiesThePacketsInTheRanges() async throws {
        let a = try video("a.mp4", seconds: 3), b = try video("b.mp4", seconds: 3, pattern: "smptebars"), c = try video("c.mp4", seconds: 2, pattern: "testsrc2")
        let composition = MutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .video))
        let at = { (frames: Int64) in MediaTime(value: frames, timescale: 25) }
        try track.insertTimeRange(MediaTimeRange(start: at(25), duration: at(50)), of: try a.track(withMediaType: .video), in: a, at: .zero)
        try track.insertTimeRange(MediaTimeRange(start: .zero, duration: at(25)), of: try b.track(withMediaType: .video), in: b, at: at(50))
        // From frame 30, between the keyframes at 25 and 50: cut at 25.
        try track.insertTimeRange(MediaTimeRange(start: at(30), duration: at(15)), of: try c.track(withMediaType: .video), in: c, at: at(75))
        // A time range would cut compressed frames from their keyframes: refused, saying what to do.
        let cut = try AssetReader(composition: composition.composition)
        try cut.add(try AssetReaderTrackOutput(compositionTrack: track.track, outputSettings: .stored(.video)))
        cut.timeRange = MediaTimeRange(start: at(10), duration: at(20))
        let refused = #expect(throws: GraphError.self) { try cut.startReading() }
        #expect(refused?.message.contains("removeTimeRange") == true)
        #expect(cut.status == .failed)

        let reader = try AssetReader(composition: composition.composition)
        let output = try AssetReaderTrackOutput(compositionTrack: track.track, outputSettings: .stored(.video))
        try reader.add(output)
        try reader.startReading()
        let out = path("joined.mp4")
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: PassthroughSettings(mediaType: .video))
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        var count = 0, lastDecode = MediaTime.negativeInfinity
        for try await sample in output.samples {
            let dts = try #require(sample.decodeTime ?? sample.presentationTime)
            #expect(dts > lastDecode, "\(count): pts \(sample.presentationTime!) dts \(String(describing: sample.decodeTime))")
            lastDecode = dts
            try await input.append(sample)
            count += 1
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        input.markAsFinished()
        try await writer.finishWriting()
        let pieces = [(a.path, try packets(a.path, from: 1, to: 3)), (b.path, try packets(b.path, from: 0, to: 1)), (c.path, try packets(c.path, from: 1, to: 1.8))]
        let expected = pieces.flatMap { $0.1.map(\.packet) }
        #expect(count == expected.count)
        let joined = try packets(out).map(\.packet)
        #expect(joined == expected, "first difference at \(String(describing: zip(joined, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset))")
        // Decoded, the join shows each source's frames that were kept, in order: none predicted
        // from a frame left out.
        let decoded = try frames(out)
        let sources = try pieces.flatMap { path, kept in try { let all = try frames(path); return kept.map(\.frame).sorted().map { all[$0] } }() }
        #expect(decoded == sources)
        #expect(pieces[0].1.count == 50 && pieces[1].1.count == 25)
    }

    /// The whole of each asset, one after another.
    static func wholes(_ assets: [Asset]) throws -> MutableComposition {
        let composition = MutableComposition()
        for asset in assets {
            try composition.insertTimeRange(MediaTimeRange(start: .zero, duration: asset.duration), of: asset, at: composition.duration)
        }
        return composition
    }

    /// Every track of `composition` read as stored and written through passthrough inputs, each
    /// track from its own task (the muxer interleaves them), into `out`.
    func joinAsStored(_ composition: Composition, to out: String, fileType: Assets.FileType) async throws {
        let reader = try AssetReader(composition: composition)
        let writer = try AssetWriter(outputPath: out, fileType: fileType)
        var pairs: [(AssetReaderTrackOutput, AssetWriterInput)] = []
        for track in composition.tracks {
            let output = try AssetReaderTrackOutput(compositionTrack: track, outputSettings: .stored(track.mediaType))
            try reader.add(output)
            let input = AssetWriterInput(mediaType: track.mediaType, outputSettings: PassthroughSettings(mediaType: track.mediaType))
            try writer.add(input)
            pairs.append((output, input))
        }
        try reader.startReading()
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (output, input) in pairs {
                group.addTask {
                    var last = MediaTime.negativeInfinity
                    for try await sample in output.samples {
                        let pts = try #require(sample.decodeTime ?? sample.presentationTime)
                        #expect(pts > last, "decode times rise")
                        last = pts
                        try await input.append(sample)
                    }
                    input.markAsFinished()
                }
            }
            try await group.waitForAll()
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        try await writer.finishWriting()
    }

    /// Whole AAC files joined without re-encoding: every packet reading each gives, in order, byte
    /// for byte, so the sample count is exactly theirs (1,024 a packet, priming included).
    @Test func aPassthroughJoinOfAACKeepsEveryPacket() async throws {
        var assets: [Asset] = []
        for (n, hz) in [440, 660, 880].enumerated() {
            let p = path("tone\(n).m4a")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=\(hz):sample_rate=48000:duration=\(1 + Double(n) * 0.3)",
                                             "-c:a", "aac", "-b:a", "96k", "-y", p])
            assets.append(try Asset(path: p))
        }
        let composition = try Self.wholes(assets)
        let out = path("joined.m4a")
        try await joinAsStored(composition.composition, to: out, fileType: .m4a)
        // Each packet's MD5 (a packet with side data, the first's skip samples, takes two lines).
        let probe = { (p: String) in try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=data_hash",
                                                                       "-show_data_hash", "md5", "-of", "csv=p=0", p])
            .split(separator: "\n").compactMap { line in line.range(of: "MD5:").map { line[$0.lowerBound...].prefix(36) } } }  // FFmpeg 7.1 adds a comma
        // The packets a file's reader gives: GStreamer 1.22's qtdemux leaves out an AAC track's
        // last packet when it ends past the edit list (docs/GSTREAMER.md: "1.22 loses the last
        // frame"); 1.26 gives it. The join must keep exactly what reading gives.
        var expected: [Substring] = []
        for asset in assets {
            let single = try AssetReader(asset: asset)
            let stored = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio), outputSettings: .stored(.audio))
            try single.add(stored)
            try single.startReading()
            var n = 0
            for try await _ in stored.samples { n += 1 }
            let all = try probe(asset.path)
            #expect(n >= all.count - 1 && n <= all.count, "\(n) of \(all.count)")
            expected += all.prefix(n)
        }
        let joined = try probe(out)
        #expect(joined.count == expected.count)
        #expect(joined == expected, "first difference at \(String(describing: zip(joined, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset))")
    }

    /// Whole files of sound and pictures joined without re-encoding: both tracks go on together,
    /// each piece's sound starting with its pictures, so their lengths do not drift apart from
    /// join to join (AAC comes in whole packets, longer or shorter than the pictures).
    @Test func aPassthroughJoinKeepsSoundWithPictures() async throws {
        var assets: [Asset] = []
        for n in 0..<4 {
            let p = path("av\(n).mp4")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1.3", "-f", "lavfi",
                                             "-i", "sine=frequency=\(300 + 100 * n):sample_rate=44100:duration=1.3", "-c:v", "libx264", "-g", "25",
                                             "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", p])
            assets.append(try Asset(path: p))
        }
        let composition = try Self.wholes(assets)
        let out = path("joined-av.mp4")
        try await joinAsStored(composition.composition, to: out, fileType: .mp4)
        // Each track's packets' times: where it starts and ends.
        let spans = try ["v:0", "a:0"].map { stream -> (start: Double, end: Double) in
            let text = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", out])
            let times = text.split(separator: "\n").compactMap { line -> (Double, Double)? in
                let f = line.split(separator: ",").compactMap { Double($0) }
                return f.count == 2 ? (f[0], f[0] + f[1]) : nil
            }
            return (times.map(\.0).min() ?? 0, times.map(\.1).max() ?? 0)
        }
        let ends = spans.map(\.end)
        // Pictures start within their decode delay of 0 (x264's B-frames: GStreamer's stamps
        // cannot go below 0) and last the composition's duration.
        let total = composition.duration.seconds
        #expect(spans[0].start >= 0 && spans[0].start <= 0.08 + 0.001, "\(spans[0].start)")
        #expect(abs(ends[0] - spans[0].start - total) < 0.05, "video ends at \(ends[0]) s of \(total)")
        // Four joins of AAC drifting 10-20 ms each would end 40-80 ms away.
        #expect(abs(ends[1] - ends[0]) < 0.03, "sound ends at \(ends[1]) s, pictures at \(ends[0]) s")
    }

    /// Joining without re-encoding asks for pieces of one codec and one set of parameters; the
    /// refusal names the piece and what differs.
    @Test func passthroughNamesThePieceThatDiffers() throws {
        let a = try video("a.mp4", seconds: 1), same = try video("same.mp4", seconds: 1, pattern: "smptebars")
        let bigger = try video("bigger.mp4", seconds: 1, size: "320x240")
        let composition = MutableComposition()
        try composition.insertTimeRange(Self.range(0, 1), of: a, at: .zero)
        try composition.insertTimeRange(Self.range(0, 1), of: same, at: Self.t(1))
        let track = try #require(composition.tracks.first)
        try track.track.checkPassthrough()
        try composition.insertTimeRange(Self.range(0, 1), of: bigger, at: Self.t(2))
        let error = #expect(throws: GraphError.self) { try track.track.checkPassthrough() }
        #expect(error?.description.contains("piece 3 (\"\(bigger.path)\")") == true, "\(String(describing: error))")
        #expect(error?.message.contains("320x240, not 160x120") == true)
        let wav = try rampWAV("a.wav", seconds: 1)
        let sound = try #require(composition.addMutableTrack(withMediaType: .audio))
        try sound.insertTimeRange(Self.range(0, 1), of: try wav.track(withMediaType: .audio), in: wav, at: .zero)
        try sound.insertTimeRange(Self.range(0, 1), of: try wav.track(withMediaType: .audio), in: wav, at: Self.t(1))
        let notMP4 = #expect(throws: GraphError.self) { try sound.track.checkPassthrough() }
        #expect(notMP4?.message.contains("not an MP4") == true)
    }
}
