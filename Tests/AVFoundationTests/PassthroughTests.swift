import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// Passthrough: compressed samples read with `outputSettings: nil` and appended to an input with
/// `outputSettings: nil` (and a `sourceFormatHint`) are muxed as they are, without re-encoding:
/// the packets come out byte-identical, at the same times (ffmpeg's framemd5 on both sides).
@Suite(.media, .timeLimit(.minutes(10))) struct PassthroughTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// Each packet's times in seconds (from the stream's time base), size and MD5, as ffmpeg
    /// reads them without decoding.
    func packets(_ path: String, _ options: [String] = []) throws -> [String] { try Self.packets(path, options) }

    static func packets(_ path: String, _ options: [String] = []) throws -> [String] {
        let map = options.contains("-map") ? [] : ["-map", "0:0"]
        let text = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path] + map + ["-c", "copy"] + options + ["-f", "framemd5", "-"])
        var timeBase = 1.0
        var rows: [String] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#tb 0:") {
                let parts = line.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/").compactMap { Double($0) }
                timeBase = parts[0] / parts[1]
            }
            guard !line.hasPrefix("#") else { continue }
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count >= 6, let dts = Double(f[1]), let pts = Double(f[2]), let duration = Double(f[3]) else { continue }
            rows.append(String(format: "dts %.6f pts %.6f dur %.6f size %@ md5 %@", dts * timeBase, pts * timeBase, duration * timeBase, f[4], f[5]))
        }
        return rows
    }

    /// Reads `source`'s track of `mediaType` as stored and writes it through a passthrough input.
    func remux(_ source: URL, _ mediaType: AVMediaType, to out: URL, fileType: AVFileType) async throws -> (read: Int, writer: AVAssetWriter) {
        let asset = AVURLAsset(url: source)
        let track = try #require(try await asset.loadTracks(withMediaType: mediaType).first)
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: track, outputSettings: nil)
        #expect(reader.canAdd(output))
        reader.add(output)
        #expect(reader.startReading())
        let hint = try await track.load(.formatDescriptions).first
        let writer = try AVAssetWriter(outputURL: out, fileType: fileType)
        let input = AVAssetWriterInput(mediaType: mediaType, outputSettings: nil, sourceFormatHint: hint)
        #expect(writer.canAdd(input))
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        var count = 0
        while let sample = output.copyNextSampleBuffer() {
            let subtype = CMFormatDescriptionGetMediaSubType(CMSampleBufferGetFormatDescription(sample)!)
            #expect(subtype == (mediaType == .audio ? kAudioFormatMPEG4AAC : kCMVideoCodecType_H264))
            #expect(CMSampleBufferGetNumSamples(sample) == 1 && CMSampleBufferGetImageBuffer(sample) == nil)
            #expect(input.append(sample), "\(String(describing: writer.error))")
            count += 1
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        input.markAsFinished()
        await writer.finishWriting()
        return (count, writer)
    }

    @Test func aacPacketsComeOutByteIdentical() async throws {
        let source = folder.appendingPathComponent("tone.aac")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-ac", "2", "-c:a", "aac", "-b:a", "128k", "-y", source.path])
        let out = folder.appendingPathComponent("tone.m4a")
        let (read, writer) = try await remux(source, .audio, to: out, fileType: .m4a)
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        // ADTS frames carry a header each, which MP4 does not store: compared without it, as
        // ffmpeg's own remux to MP4 strips it.
        let original = try packets(source.path, ["-bsf:a", "aac_adtstoasc"]), remuxed = try packets(out.path)
        #expect(read == original.count && original.count > 80)
        // Every packet's bytes and times, and every duration but the last: GStreamer's muxer
        // takes the last packet's length from nanosecond stamps, which the AAC parser
        // accumulates truncated, and writes it a sample short (1023 of 1024, as gst-launch-1.0's
        // aacparse ! mp4mux does).
        #expect(remuxed.count == original.count)
        let withoutLastDuration = { (rows: [String]) in rows.enumerated().map { i, row in
            i == rows.count - 1 ? row.replacingOccurrences(of: #"dur [0-9.]+ "#, with: "", options: .regularExpression) : row } }
        #expect(withoutLastDuration(remuxed) == withoutLastDuration(original),
                "first difference: \(zip(original, remuxed).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "none")")
    }

    /// H.264 with B-frames: the composition offsets (pts ≠ dts) are kept.
    @Test func h264WithBFramesComesOutByteIdentical() async throws {
        let source = folder.appendingPathComponent("bframes.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", "-bf", "2",
                                         "-pix_fmt", "yuv420p", "-y", source.path])
        let out = folder.appendingPathComponent("remuxed.mp4")
        let (read, writer) = try await remux(source, .video, to: out, fileType: .mp4)
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let original = try packets(source.path), remuxed = try packets(out.path)
        #expect(read == 50 && original.count == 50)
        #expect(original.contains { row in row.split(separator: " ")[1] != row.split(separator: " ")[3] }, "the source has B-frames")
        #expect(remuxed == original, "first difference: \(zip(original, remuxed).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "counts \(original.count) vs \(remuxed.count)")")
    }

    /// A movie ffmpeg wrote (H.264 with B-frames and AAC, each track with its edit list: the
    /// B-frames' delay and the encoder's priming), each track rewrapped alone: every packet
    /// comes out, byte-identical, at the times ffmpeg gives the original's (edit lists applied),
    /// as AVFoundation's passthrough writer keeps them.
    @Test(arguments: [AVMediaType.video, .audio])
    func aTrackOfAnMP4ComesOutWhole(_ mediaType: AVMediaType) async throws {
        let source = folder.appendingPathComponent("movie-\(mediaType.rawValue).mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
                                         "-t", "3.8", "-c:v", "libx264", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "96k", "-y", source.path])
        let out = folder.appendingPathComponent("rewrapped-\(mediaType.rawValue).mp4")
        let (read, writer) = try await remux(source, mediaType, to: out, fileType: .mp4)
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let map = mediaType == .video ? "0:v:0" : "0:a:0"
        let original = try packets(source.path, ["-map", map]), remuxed = try packets(out.path)
        #expect(read == original.count, "read \(read) of \(original.count) packets")
        #expect(remuxed.count == original.count, "wrote \(remuxed.count) of \(original.count) packets")
        #expect(remuxed == original, "first difference: \(zip(original, remuxed).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "counts \(original.count) vs \(remuxed.count)")")
    }

    /// A passthrough input takes encoded samples only; a hint of another format is refused by name.
    @Test func passthroughRefusals() throws {
        var asbd = AudioStreamBasicDescription(mSampleRate: 48000, mFormatID: kAudioFormatLinearPCM, mFormatFlags: kAudioFormatFlagIsSignedInteger,
                                               mBytesPerPacket: 2, mFramesPerPacket: 1, mBytesPerFrame: 2, mChannelsPerFrame: 1, mBitsPerChannel: 16, mReserved: 0)
        var pcm: CMAudioFormatDescription?
        CMAudioFormatDescriptionCreate(allocator: nil, asbd: &asbd, layoutSize: 0, layout: nil, magicCookieSize: 0, magicCookie: nil, extensions: nil, formatDescriptionOut: &pcm)
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("x.m4a"), fileType: .m4a)
        let refused = AVAssetWriterInput(mediaType: .audio, outputSettings: nil, sourceFormatHint: pcm)
        #expect(!writer.canAdd(refused))
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: nil)
        #expect(writer.canAdd(input))
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        var block: CMBlockBuffer?
        CMBlockBufferCreateWithMemoryBlock(allocator: nil, memoryBlock: nil, blockLength: 64, blockAllocator: nil, customBlockSource: nil,
                                           offsetToData: 0, dataLength: 64, flags: 0, blockBufferOut: &block)
        var sb: CMSampleBuffer?
        CMAudioSampleBufferCreateReadyWithPacketDescriptions(allocator: nil, dataBuffer: block!, formatDescription: pcm!, sampleCount: 32,
                                                             presentationTimeStamp: .zero, packetDescriptions: nil, sampleBufferOut: &sb)
        #expect(!input.append(sb!))
        #expect(writer.status == .failed)
        let message = writer.error.map { $0.localizedDescription } ?? ""
        #expect(message.contains("AAC"), "\(message)")
    }
}
