@_spi(Engine) import Assets
@_spi(Engine) import CoreVideo
@_spi(Engine) import GraphKitCore
import CoreImage

extension AVAssetImageGenerator {
    /// `frame` (the stored frame at `actual`, BGRA) drawn by `composition` as an export draws
    /// the frame of that time, then fitted into `box` (a side of 0 or less: any). `stopped`
    /// wakes a CIFilter handler's wait (the generator's images were cancelled). The asset's
    /// first video track is the one drawn, as everywhere in GraphKit's compositor.
    func drawn(_ frame: SampleBuffer, at actual: MediaTime, by composition: AVVideoComposition, fittedIn box: CGSize,
               stopped: @escaping @Sendable () -> Bool) throws(GraphError) -> SampleBuffer {
        let value = try composition.engineValue()
        guard let track = asset.tracks(withMediaType: .video).first else {
            throw GraphError(.usage, at: "videoComposition", "the asset has no video track to draw")
        }
        let duration = (try? asset.loadedDuration())?.mediaTime ?? actual + value.frameDuration
        try value.check(duration: duration, trackIDs: [Int(track.trackID)])
        var stamped = frame
        stamped.presentationTime = actual
        stamped.duration = value.frameDuration
        var effects = CompositionEffects(offset: .zero, from: actual, video: (value, trackID: Int(track.trackID)))
        guard let out = try effects.process(stamped, end: actual + value.frameDuration, stopped: stopped).first else {
            throw GraphError(.runFailed, at: "videoComposition", "the composition drew no frame at \(actual.seconds) s")
        }
        return try Self.fitted(out, in: box)
    }

    /// `frame` scaled down (bilinear) to fit in `box`, keeping its shape, as `maximumSize` asks;
    /// as it is when it fits or the box says nothing.
    static func fitted(_ frame: SampleBuffer, in box: CGSize) throws(GraphError) -> SampleBuffer {
        guard case .rawVideo(let v)? = frame.format else { return frame }
        let w = Double(v.width), h = Double(v.height)
        var scale = 1.0
        if box.width.isFinite, box.width > 0 { scale = min(scale, Double(box.width) / w) }
        if box.height.isFinite, box.height > 0 { scale = min(scale, Double(box.height) / h) }
        guard scale < 1 else { return frame }
        let width = max(1, Int((w * scale).rounded())), height = max(1, Int((h * scale).rounded()))
        var made: CVPixelBuffer?
        guard CVPixelBufferCreate(nil, width, height, kCVPixelFormatType_32BGRA, nil, &made) == kCVReturnSuccess, let out = made else {
            throw GraphError(.runFailed, at: "maximumSize", "no \(width)x\(height) picture could be made")
        }
        let image = CIImage(cvPixelBuffer: CVPixelBuffer(sample: frame, videoFormat: v))
            .transformed(by: CGAffineTransform(scaleX: CGFloat(Double(width) / w), y: CGFloat(Double(height) / h)))
        scaler.render(image, to: out)
        return out.sample
    }

    private static let scaler = CIContext()
}
