import AVFoundation
import GraphKitCore
import Testing

/// The product as a client builds it: code written for Apple's platforms, `import AVFoundation`,
/// against GraphKit's shared library.
@Suite struct ClientTests {
    /// A movie from drawn frames, read back: the modules work as a client links them.
    @Test(.timeLimit(.minutes(10)))
    func aMovieWrittenIsReadBack() async throws {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("compat-\(getpid()).mp4")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [
            AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 160, AVVideoHeightKey: 120,
        ])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
            kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
            kCVPixelBufferWidthKey as String: 160, kCVPixelBufferHeightKey as String: 120,
        ])
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        for frame in 0..<30 {
            while !input.isReadyForMoreMediaData { usleep(1000) }
            var buffer: CVPixelBuffer?
            #expect(CVPixelBufferPoolCreatePixelBuffer(nil, try #require(adaptor.pixelBufferPool), &buffer) == kCVReturnSuccess)
            let pixels = try #require(buffer)
            CVPixelBufferLockBaseAddress(pixels, [])
            memset(try #require(CVPixelBufferGetBaseAddress(pixels)), Int32(frame * 8), CVPixelBufferGetBytesPerRow(pixels) * 120)
            CVPixelBufferUnlockBaseAddress(pixels, [])
            #expect(adaptor.append(pixels, withPresentationTime: CMTime(value: CMTimeValue(frame), timescale: 30)))
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")

        let asset = AVURLAsset(url: url)
        let duration = try await asset.load(.duration)
        #expect(abs(CMTimeGetSeconds(duration) - 1) < 0.001, "duration \(CMTimeGetSeconds(duration))")
        let tracks = try await asset.loadTracks(withMediaType: .video)
        #expect(tracks.count == 1)
        #expect(try await tracks[0].load(.naturalSize) == CGSize(width: 160, height: 120))
    }

    /// One engine in the process: GraphKit's types come from libGraphKit.so, not from a second
    /// copy linked into the client (which would have its own registry: docs/PLUGINS.md).
    @Test func theEngineIsTheSharedLibrary() throws {
        let address = UInt(bitPattern: unsafeBitCast(MediaTime.self as Any.Type, to: UnsafeRawPointer.self))
        // /proc/self/maps: "start-end perms offset dev inode path"; the mapping holding the address.
        // (Read to its end: /proc files state no size.)
        let file = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: try #require(try file.readToEnd()), as: UTF8.self)
        let image = maps.split(separator: "\n").first { line in
            let range = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            return range.count == 2 && (range[0]..<range[1]).contains(address)
        }.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).last }
        #expect(image?.hasSuffix("/libGraphKit.so") == true, "MediaTime (\(String(address, radix: 16))) is defined in \(image.map(String.init) ?? "no file")")
    }
}
