// A waveform: an audio track read to 16-bit PCM with AVAssetReader, reduced to one peak per
// bin, as waveform views on iOS and macOS do it, and drawn with CoreGraphics into a PNG when a
// third argument names one. AVFoundation, CoreGraphics and ImageIO code as written for Apple's
// platforms, compiled unchanged against GraphKit's modules on Linux.
//
//   swift run example-avfoundation-waveform talk.m4a [bins] [waveform.png]
import AVFoundation
import ImageIO
import UniformTypeIdentifiers

let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    print("usage: example-avfoundation-waveform FILE [bins]")
    exit(64)
}
let url = URL(fileURLWithPath: arguments[1])
let binCount = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20

func readWaveform() async throws -> (peaks: [Float], frames: Int, channels: Int, seconds: Double) {
    let asset = AVURLAsset(url: url)
    let (duration, tracks) = try await asset.load(.duration, .tracks)
    guard let track = tracks.first(where: { $0.mediaType == .audio }) else {
        throw NSError(domain: "waveform", code: 1, userInfo: [NSLocalizedDescriptionKey: "no audio track"])
    }
    let formatDescriptions = try await track.load(.formatDescriptions)
    guard let description = formatDescriptions.first,
          let asbd = CMAudioFormatDescriptionGetStreamBasicDescription(description)?.pointee else {
        throw NSError(domain: "waveform", code: 2, userInfo: [NSLocalizedDescriptionKey: "no stream description"])
    }
    let channels = Int(asbd.mChannelsPerFrame)
    let expectedFrames = Int(CMTimeGetSeconds(duration) * asbd.mSampleRate)

    let reader = try AVAssetReader(asset: asset)
    let outputSettings: [String: Any] = [
        AVFormatIDKey: Int(kAudioFormatLinearPCM),
        AVLinearPCMBitDepthKey: 16,
        AVLinearPCMIsBigEndianKey: false,
        AVLinearPCMIsFloatKey: false,
        AVLinearPCMIsNonInterleaved: false,
    ]
    let output = AVAssetReaderTrackOutput(track: track, outputSettings: outputSettings)
    output.alwaysCopiesSampleData = false
    guard reader.canAdd(output) else {
        throw reader.error ?? NSError(domain: "waveform", code: 3, userInfo: [NSLocalizedDescriptionKey: "cannot add the output"])
    }
    reader.add(output)
    guard reader.startReading() else {
        throw reader.error ?? NSError(domain: "waveform", code: 4, userInfo: nil)
    }

    let framesPerBin = max(1, expectedFrames / binCount)
    var peaks: [Float] = []
    var binPeak: Int16 = 0
    var inBin = 0
    var frames = 0
    while reader.status == .reading {
        guard let sampleBuffer = output.copyNextSampleBuffer(),
              let blockBuffer = CMSampleBufferGetDataBuffer(sampleBuffer) else { break }
        let length = CMBlockBufferGetDataLength(blockBuffer)
        var samples = [Int16](repeating: 0, count: length / MemoryLayout<Int16>.size)
        samples.withUnsafeMutableBytes { bytes in
            _ = CMBlockBufferCopyDataBytes(blockBuffer, atOffset: 0, dataLength: length, destination: bytes.baseAddress!)
        }
        let count = CMSampleBufferGetNumSamples(sampleBuffer)
        for frame in 0..<count {
            for channel in 0..<channels {
                let sample = samples[frame * channels + channel]
                binPeak = max(binPeak, sample == .min ? .max : abs(sample))
            }
            inBin += 1
            if inBin == framesPerBin {
                peaks.append(Float(binPeak) / Float(Int16.max))
                binPeak = 0
                inBin = 0
            }
        }
        frames += count
    }
    if reader.status == .failed {
        throw reader.error ?? NSError(domain: "waveform", code: 5, userInfo: nil)
    }
    if inBin > 0 { peaks.append(Float(binPeak) / Float(Int16.max)) }
    return (peaks, frames, channels, CMTimeGetSeconds(duration))
}

/// The peaks as bars centred on a line, 4 pixels a bin, 100 high: a CGContext over memory it
/// allocates (origin bottom-left, as on a Mac), written as a PNG with ImageIO.
func drawWaveform(_ peaks: [Float], to url: URL) -> Bool {
    let width = max(1, peaks.count * 4), height = 100
    guard let ctx = CGContext(data: nil, width: width, height: height, bitsPerComponent: 8, bytesPerRow: 0,
                              space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue) else { return false }
    ctx.setFillColor(CGColor(red: 0.1, green: 0.1, blue: 0.1, alpha: 1))
    ctx.fill(CGRect(x: 0, y: 0, width: width, height: height))
    ctx.setFillColor(CGColor(red: 0.2, green: 0.8, blue: 0.4, alpha: 1))
    let mid = CGFloat(height) / 2
    for (i, peak) in peaks.enumerated() {
        let bar = max(1, CGFloat(peak) * mid)
        ctx.fill(CGRect(x: CGFloat(i * 4), y: mid - bar, width: 3, height: bar * 2))
    }
    guard let image = ctx.makeImage(),
          let destination = CGImageDestinationCreateWithURL(url as CFURL, UTType.png.identifier as CFString, 1, nil) else { return false }
    CGImageDestinationAddImage(destination, image, nil)
    return CGImageDestinationFinalize(destination)
}

do {
    let waveform = try await readWaveform()
    print("read \(waveform.frames) frames of \(waveform.channels) channels (\(String(format: "%.3f", waveform.seconds)) s)")
    print("peaks " + waveform.peaks.map { String(format: "%.3f", $0) }.joined(separator: " "))
    let bars = waveform.peaks.map { String(repeating: "#", count: Int(($0 * 40).rounded())) }
    for bar in bars { print("|" + bar) }
    if arguments.count > 3 {
        let png = URL(fileURLWithPath: arguments[3])
        guard drawWaveform(waveform.peaks, to: png) else {
            print("error: cannot draw \(png.path)")
            exit(1)
        }
        print("drew \(png.path)")
    }
} catch {
    print("error: \(error.localizedDescription)")
    exit(1)
}
