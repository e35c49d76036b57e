import AVFoundation
import Effects
import GraphKit
import ImageIO
import UniformTypeIdentifiers

// A client's program: AVFoundation code as written for Apple's platforms (a movie from drawn
// frames, read back, its poster saved with ImageIO), then a graph composed in code with a node of
// the client's own. Exits 1 with the reason on the first thing that is not as it should be.

func check(_ condition: Bool, _ what: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write("MediaApp: \(what())\n".data(using: .utf8)!)
        exit(1)
    }
}

let folder = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory())
let movieURL = folder.appendingPathComponent("drawn.mp4")
let toneURL = folder.appendingPathComponent("tone.m4a")
try? FileManager.default.removeItem(at: movieURL)
try? FileManager.default.removeItem(at: toneURL)

// 1. AVAssetWriter with a pixel buffer adaptor: 30 frames of 160x120, one second.
let writer = try AVAssetWriter(outputURL: movieURL, fileType: .mp4)
let input = AVAssetWriterInput(mediaType: .video, outputSettings: [
    AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 160, AVVideoHeightKey: 120,
])
input.expectsMediaDataInRealTime = false
let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
    kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
    kCVPixelBufferWidthKey as String: 160, kCVPixelBufferHeightKey as String: 120,
])
check(writer.canAdd(input), "the writer cannot add a video input")
writer.add(input)
check(writer.startWriting(), "startWriting failed: \(String(describing: writer.error))")
writer.startSession(atSourceTime: .zero)
for frame in 0..<30 {
    while !input.isReadyForMoreMediaData { usleep(1000) }
    var buffer: CVPixelBuffer?
    guard let pool = adaptor.pixelBufferPool,
          CVPixelBufferPoolCreatePixelBuffer(kCFAllocatorDefault, pool, &buffer) == kCVReturnSuccess,
          let pixels = buffer else { check(false, "no pixel buffer from the adaptor's pool"); break }
    CVPixelBufferLockBaseAddress(pixels, [])
    memset(CVPixelBufferGetBaseAddress(pixels)!, Int32(frame * 8), CVPixelBufferGetBytesPerRow(pixels) * 120)
    CVPixelBufferUnlockBaseAddress(pixels, [])
    check(adaptor.append(pixels, withPresentationTime: CMTimeMake(value: Int64(frame), timescale: 30)),
          "append of frame \(frame) failed: \(String(describing: writer.error))")
}
input.markAsFinished()
let finished = DispatchSemaphore(value: 0)
writer.finishWriting { finished.signal() }
finished.wait()
check(writer.status == .completed, "the writer ended \(writer.status.rawValue): \(String(describing: writer.error))")

// 2. Read back: the asset's duration and track, and every frame decoded by AVAssetReader.
let asset = AVURLAsset(url: movieURL)
let duration = try await asset.load(.duration)
check(abs(CMTimeGetSeconds(duration) - 1) < 0.001, "duration \(CMTimeGetSeconds(duration)) s, not 1 s")
guard let track = try await asset.loadTracks(withMediaType: .video).first else { check(false, "no video track"); exit(1) }
check(try await track.load(.naturalSize) == CGSize(width: 160, height: 120), "natural size is not 160x120")
let reader = try AVAssetReader(asset: asset)
let output = AVAssetReaderTrackOutput(track: track, outputSettings: [
    kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
])
reader.add(output)
check(reader.startReading(), "startReading failed: \(String(describing: reader.error))")
var frames = 0
while let sample = output.copyNextSampleBuffer() {
    if CMSampleBufferGetImageBuffer(sample) != nil { frames += 1 }
}
check(reader.status == .completed, "the reader ended \(reader.status.rawValue): \(String(describing: reader.error))")
check(frames == 30, "read \(frames) frames of 30")

// 2b. A poster frame saved as a JPEG with ImageIO, and read back.
let posterURL = folder.appendingPathComponent("poster.jpg")
let poster = try AVAssetImageGenerator(asset: asset).copyCGImage(at: .zero, actualTime: nil)
guard let destination = CGImageDestinationCreateWithURL(posterURL as CFURL, UTType.jpeg.identifier as CFString, 1, nil) else {
    check(false, "no JPEG destination"); exit(1)
}
CGImageDestinationAddImage(destination, poster, [kCGImageDestinationLossyCompressionQuality: 0.8] as CFDictionary)
check(CGImageDestinationFinalize(destination), "the poster was not written")
let posterSource = CGImageSourceCreateWithURL(posterURL as CFURL, nil)
let posterProperties = posterSource.flatMap { CGImageSourceCopyPropertiesAtIndex($0, 0, nil) as? [CFString: Any] }
check(posterProperties?[kCGImagePropertyPixelWidth] as? Int == 160, "the poster is not 160 pixels wide")

// 3. A graph composed in code: PCM from Swift through the client's own node to an M4A.
let graph = try GraphLoader(registry: .withEffects).load([
    "version": 1,
    "nodes": [
        "feed": ["type": "source.app"],
        "invert": ["type": "effect.invert"],
        "aac": ["type": "encode.aac", "params": ["bitrate": 96_000]],
        "file": ["type": "sink.mp4", "params": ["path": .string(toneURL.path)]],
    ],
    "edges": ["feed.out -> invert.in", "invert.out -> aac.in", "aac.out -> file.audio"],
])
let run = try GraphRun(graph)
try run.start()
let feed = try run.input("feed")
let format = MediaFormat.pcm(.init(sampleRate: 48_000, channels: 1, sampleFormat: .s16le))
for second in 0..<2 {
    let samples = (0..<48_000).map { Int16(12_000 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
    try await feed.append(SampleBuffer(format: format, bytes: samples.withUnsafeBytes { Array($0) },
                                       presentationTime: MediaTime(value: Int64(second * 48_000), timescale: 48_000),
                                       duration: MediaTime(value: 48_000, timescale: 48_000)))
}
feed.markAsFinished()
let report = await run.report()
check(report.status == .completed, "the graph ended \(report.status)")
let tone = AVURLAsset(url: toneURL)
let toneDuration = CMTimeGetSeconds(try await tone.load(.duration))
check(abs(toneDuration - 2) < 0.05, "the M4A lasts \(toneDuration) s, not 2 s")
check(try await tone.loadTracks(withMediaType: .audio).count == 1, "the M4A has no audio track")

print("MediaApp: \(frames) frames written and read back; a \(String(format: "%.2f", toneDuration)) s M4A from a graph composed in code")
