import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// A whole movie rewrapped as AVFoundation code rewraps one (issue 71): an `AVAssetReader` with
/// `outputSettings: nil` on each track, an `AVAssetWriter` with a passthrough input for each,
/// samples appended in decode order. Apple's promise: every packet, byte-identical, at the
/// source's times, the source's edit lists (the B-frames' delay, the AAC encoder's priming)
/// kept; and a session window (`startSession` … `endSession`) plays exactly its window, the
/// samples outside it edited out. Judged packet by packet with ffmpeg, which applies edit lists.
@Suite(.media, .timeLimit(.minutes(10))) struct PassthroughMovieTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// An H.264 (B-frames) + AAC movie as ffmpeg writes it: each track with its edit list.
    func movie(_ name: String, seconds: Double, rate: Int = 25, bFrames: Int = 2) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=\(rate)", "-f", "lavfi",
                                         "-i", "sine=frequency=440:sample_rate=44100", "-t", "\(seconds)", "-c:v", "libx264", "-bf", "\(bFrames)",
                                         "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-y", url.path])
        return url
    }

    /// Reads `source`'s video and audio as stored and writes them through passthrough inputs,
    /// appended in decode order from one loop; `configure` runs before writing starts and
    /// `session` is the session's window (from 0, open-ended, by default). Returns how many
    /// samples of each type were read, and the writer, finished.
    func rewrap(_ source: URL, to out: URL, session: (start: CMTime, end: CMTime?) = (.zero, nil),
                configure: (AVAssetWriter) -> Void = { _ in }) async throws -> (read: [AVMediaType: Int], writer: AVAssetWriter) {
        let asset = AVURLAsset(url: source)
        let reader = try AVAssetReader(asset: asset)
        let writer = try AVAssetWriter(outputURL: out, fileType: .mp4)
        var outputs: [(AVMediaType, AVAssetReaderTrackOutput, AVAssetWriterInput)] = []
        for type in [AVMediaType.video, .audio] {
            let track = try #require(try await asset.loadTracks(withMediaType: type).first)
            let output = AVAssetReaderTrackOutput(track: track, outputSettings: nil)
            #expect(reader.canAdd(output))
            reader.add(output)
            let input = AVAssetWriterInput(mediaType: type, outputSettings: nil, sourceFormatHint: try await track.load(.formatDescriptions).first)
            #expect(writer.canAdd(input))
            writer.add(input)
            outputs.append((type, output, input))
        }
        configure(writer)
        #expect(reader.startReading())
        // Each output reads the file on its own: one can be read to its end before the other.
        var samples: [(input: AVAssetWriterInput, sample: CMSampleBuffer, order: Int)] = []
        var read: [AVMediaType: Int] = [:]
        for (type, output, input) in outputs {
            while let sample = output.copyNextSampleBuffer() {
                samples.append((input, sample, samples.count))
                read[type, default: 0] += 1
            }
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        func decodeTime(_ s: CMSampleBuffer) -> Double {
            let dts = CMSampleBufferGetDecodeTimeStamp(s)
            return (dts.isNumeric ? dts : CMSampleBufferGetPresentationTimeStamp(s)).seconds
        }
        samples.sort { (decodeTime($0.sample), $0.order) < (decodeTime($1.sample), $1.order) }
        #expect(writer.startWriting(), "\(String(describing: writer.error))")
        writer.startSession(atSourceTime: session.start)
        for s in samples {
            guard s.input.append(s.sample) else { break }
        }
        if let end = session.end { writer.endSession(atSourceTime: end) }
        for (_, _, input) in outputs { input.markAsFinished() }
        await writer.finishWriting()
        return (read, writer)
    }

    /// The first difference between two packet lists, for a failure's message.
    func difference(_ original: [String], _ copy: [String]) -> String {
        zip(original, copy).enumerated().first { $0.element.0 != $0.element.1 }.map { "packet \($0.offset): \($0.element.0) vs \($0.element.1)" }
            ?? "counts \(original.count) vs \(copy.count)"
    }

    /// Both tracks of a movie through one reader and one writer (with tags, as an app that
    /// keeps them writes it, or without): every packet of each comes out, byte-identical, at
    /// the times ffmpeg gives the source's (edit lists applied: the first picture at 0, its
    /// decode 2 frames before; the priming packet at -23 ms).
    @Test(arguments: [false, true])
    func aMovieIsRewrappedWhole(withMetadata: Bool) async throws {
        let source = try movie("movie.mp4", seconds: withMetadata ? 6 : 4)
        let out = folder.appendingPathComponent("rewrapped.mp4")
        let (read, writer) = try await rewrap(source, to: out) { writer in
            guard withMetadata else { return }
            let title = AVMutableMetadataItem()
            title.identifier = .commonIdentifierTitle
            title.value = "Rewrapped" as NSString
            writer.metadata = [title]
        }
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        // The reader gives each track's samples from the file's index at the times its edit list
        // shows them (the priming packet at -23 ms, the first picture's decode 2 frames before 0),
        // and the writer, whose clock takes times before 0, writes them with the same edits.
        for (type, map) in [(AVMediaType.video, "0:v:0"), (.audio, "0:a:0")] {
            let original = try PassthroughTests.packets(source.path, ["-map", map]), copy = try PassthroughTests.packets(out.path, ["-map", map])
            #expect(read[type] == original.count, "\(type.rawValue): read \(read[type] ?? 0) of \(original.count) packets")
            #expect(copy.count == original.count, "\(type.rawValue): wrote \(copy.count) of \(original.count) packets")
            #expect(copy == original, "\(type.rawValue): first difference: \(difference(original, copy))")
        }
    }

    /// `outputSettings: nil` gives each track's samples at the times its edit list shows them,
    /// as Apple's reader does: the AAC encoder's priming packet first, 1,024 samples before 0,
    /// and every packet to the last; the first picture shown at 0 and decoded 2 frames before.
    @Test func aReaderGivesSamplesAsStoredAtTheTimesTheEditListShows() async throws {
        let source = try movie("times.mp4", seconds: 2)
        let asset = AVURLAsset(url: source)
        let reader = try AVAssetReader(asset: asset)
        var outputs: [AVMediaType: AVAssetReaderTrackOutput] = [:]
        for type in [AVMediaType.video, .audio] {
            let output = AVAssetReaderTrackOutput(track: try #require(try await asset.loadTracks(withMediaType: type).first), outputSettings: nil)
            reader.add(output)
            outputs[type] = output
        }
        #expect(reader.startReading())
        var times: [AVMediaType: [(pts: CMTime, dts: CMTime)]] = [:]
        for (type, output) in outputs {
            while let s = output.copyNextSampleBuffer() {
                times[type, default: []].append((CMSampleBufferGetPresentationTimeStamp(s), CMSampleBufferGetDecodeTimeStamp(s)))
            }
        }
        #expect(reader.status == .completed)
        let audio = times[.audio] ?? [], video = times[.video] ?? []
        #expect(audio.count == (try PassthroughTests.packets(source.path, ["-map", "0:a:0"])).count)
        #expect(abs((audio.first?.pts.seconds ?? 0) + 1_024.0 / 44_100) < 1e-6, "the priming packet at \(audio.first?.pts.seconds ?? 0) s")
        #expect(abs(audio[1].pts.seconds) < 1e-6)
        #expect(video.count == 50 && video.first?.pts == .zero, "\(String(describing: video.first))")
        #expect(abs((video.first?.dts.seconds ?? 0) + 0.08) < 1e-6, "the first picture decoded at \(video.first?.dts.seconds ?? 0) s")
        #expect(video.map(\.pts.seconds).min() == 0)
    }

    /// A rewrap into a fragmented file (movieFragmentInterval), whose samples are on the
    /// session's clock, keeps every packet of both tracks, in order, byte for byte.
    @Test func aFragmentedRewrapKeepsEveryPacket() async throws {
        let source = try movie("fragments-source.mp4", seconds: 3)
        let out = folder.appendingPathComponent("fragmented.mp4")
        let (read, writer) = try await rewrap(source, to: out) { $0.movieFragmentInterval = CMTime(value: 1, timescale: 1) }
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        for (type, map) in [(AVMediaType.video, "0:v:0"), (.audio, "0:a:0")] {
            let bytes = { (rows: [String]) in rows.map { $0.split(separator: " ").suffix(4).joined(separator: " ") } }
            let original = try PassthroughTests.packets(source.path, ["-map", map]), copy = try PassthroughTests.packets(out.path, ["-map", map])
            #expect(read[type] == original.count && bytes(copy) == bytes(original), "\(type.rawValue): \(difference(bytes(original), bytes(copy)))")
        }
    }

    /// A passthrough file takes samples up to an hour before 0; one earlier fails the writer,
    /// saying so, rather than be written at 0.
    @Test func aSampleMoreThanAnHourBeforeZeroIsRefused() async throws {
        let source = try movie("early-source.mp4", seconds: 1)
        let asset = AVURLAsset(url: source)
        let track = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: track, outputSettings: nil)
        reader.add(output)
        #expect(reader.startReading())
        let sample = try #require(output.copyNextSampleBuffer())
        var timing = CMSampleTimingInfo(duration: CMSampleBufferGetDuration(sample), presentationTimeStamp: CMTime(value: -7_200, timescale: 1), decodeTimeStamp: .invalid)
        var early: CMSampleBuffer?
        #expect(CMSampleBufferCreateCopyWithNewTiming(allocator: nil, sampleBuffer: sample, sampleTimingEntryCount: 1, sampleTimingArray: &timing, sampleBufferOut: &early) == noErr)
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("early.m4a"), fileType: .m4a)
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: nil, sourceFormatHint: try await track.load(.formatDescriptions).first)
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        #expect(!input.append(try #require(early)))
        #expect(writer.status == .failed)
        #expect("\(String(describing: writer.error))".contains("-7200.0 s is more than 3600.0 s before 0"), "\(String(describing: writer.error))")
        reader.cancelReading()
    }

    /// Frames (decoded, edit lists applied, as ffmpeg shows them) of `path`'s video: each one's
    /// MD5, in order.
    func shownFrames(_ path: String, _ filter: [String] = []) throws -> [String] {
        let text = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:v:0"] + filter + ["-f", "framemd5", "-"])
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// startSession(atSourceTime: 0.5 s) … endSession(atSourceTime: 1.5 s) on a passthrough
    /// rewrap: the file plays exactly that second (frames 10 to 29 of a 20 fps source, decoded
    /// as the source's are), the samples before it kept (the key frame later pictures need) and
    /// edited out, as AVFoundation writes them; those after it edited out too. With B-frames and
    /// without.
    @Test(arguments: [0, 2])
    func aSessionWindowOfAPassthroughRewrapPlaysExactlyItsWindow(bFrames: Int) async throws {
        let source = try movie("window-source-\(bFrames).mp4", seconds: 3, rate: 20, bFrames: bFrames)
        let out = folder.appendingPathComponent("window.mp4")
        let (_, writer) = try await rewrap(source, to: out, session: (CMTime(value: 1, timescale: 2), CMTime(value: 3, timescale: 2)))
        let window = try shownFrames(source.path, ["-vf", "select=between(n\\,10\\,29)", "-fps_mode", "passthrough"])
        #expect(window.count == 20)
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let probe = try MediaProbe(out.path)
        #expect(abs(probe.duration - 1.0) < 0.03, "plays \(probe.duration) s")
        let shown = try shownFrames(out.path)
        #expect(shown == window)
    }

    /// The same window on a writer that encodes (frames through the adaptor, 0 to 2 s at 20 fps):
    /// the file plays that second, its 20 frames.
    @Test func aSessionWindowOfAnEncodingWriterPlaysExactlyItsWindow() async throws {
        let out = folder.appendingPathComponent("encoded-window.mp4")
        let writer = try AVAssetWriter(outputURL: out, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 320, AVVideoHeightKey: 240])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: CMTime(value: 1, timescale: 2))
        let pool = try #require(adaptor.pixelBufferPool)
        for n in 0..<40 {
            var pb: CVPixelBuffer?
            #expect(CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pb) == kCVReturnSuccess)
            let frame = try #require(pb)
            CVPixelBufferLockBaseAddress(frame, [])
            memset(CVPixelBufferGetBaseAddress(frame)!, Int32(n * 6), CVPixelBufferGetDataSize(frame))
            CVPixelBufferUnlockBaseAddress(frame, [])
            // (Taken or refused as the known issue below has it: not judged here.)
            guard adaptor.append(frame, withPresentationTime: CMTime(value: Int64(n), timescale: 20)) else { break }
        }
        writer.endSession(atSourceTime: CMTime(value: 3, timescale: 2))
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let duration = try MediaProbe(out.path).duration, shown = try shownFrames(out.path)
        #expect(abs(duration - 1.0) < 0.03, "plays \(duration) s")
        #expect(shown.count == 20)
        // The frames shown are the window's: frame n was filled with the byte n × 6 (grey), so
        // the first is frame 10's grey and the last frame 29's, not 9's or 30's (6 apart).
        let raw = folder.appendingPathComponent("window.gray").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out.path, "-f", "rawvideo", "-pix_fmt", "gray", "-y", raw])
        let grey = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
        let frameBytes = 320 * 240
        #expect(grey.count == 20 * frameBytes)
        let means = stride(from: 0, to: grey.count - frameBytes + 1, by: frameBytes).map { start in
            Double(grey[start..<start + frameBytes].reduce(0) { $0 + Int($1) }) / Double(frameBytes)
        }
        #expect(abs((means.first ?? 0) - 60) < 3, "first frame's grey \(means.first ?? 0), frame 10's is 60")
        #expect(abs((means.last ?? 0) - 174) < 3, "last frame's grey \(means.last ?? 0), frame 29's is 174")
    }
}
