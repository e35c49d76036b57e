import Assets
@_spi(Engine) import GraphKitCore

/// Appends pixel buffers with their times to a video input, and hands out frames from a pool,
/// as AVFoundation's: over GraphKit's `AssetWriterInputPixelBufferAdaptor` (the pool is its
/// pool; a frame goes back to it once the encoder has read it and your variable is gone).
///
/// `sourcePixelBufferAttributes` take `kCVPixelBufferPixelFormatTypeKey` (32BGRA, 32RGBA,
/// 420YpCbCr8Planar, 420YpCbCr8BiPlanar…), `kCVPixelBufferWidthKey` and
/// `kCVPixelBufferHeightKey` (by default the input's output size).
open class AVAssetWriterInputPixelBufferAdaptor: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its attributes are let, its pool in a Mutex.
    public let assetWriterInput: AVAssetWriterInput
    public let sourcePixelBufferAttributes: [String: Any]?
    package let adaptor: AssetWriterInputPixelBufferAdaptor?
    private let pixelFormatType: OSType
    private let attributesError: String?
    private let pool = Guarded<CVPixelBufferPool?>(nil)

    public init(assetWriterInput input: AVAssetWriterInput, sourcePixelBufferAttributes: [String: Any]?) {
        assetWriterInput = input
        self.sourcePixelBufferAttributes = sourcePixelBufferAttributes
        let a = sourcePixelBufferAttributes ?? [:]
        var problem: String?
        let type = CoreVideo.pixelFormatType(in: a, default: kCVPixelFormatType_32BGRA) ?? {
            problem = "kCVPixelBufferPixelFormatTypeKey must be a pixel format code (or an array of them)"
            return kCVPixelFormatType_32BGRA
        }()
        let format = PixelFormat(cvPixelFormat: type)
        if problem == nil, format == nil {
            problem = "pixel format '\(type.fourCharacters)' is not one GraphKit holds: use kCVPixelFormatType_32BGRA, _32RGBA, _420YpCbCr8Planar, _420YpCbCr8BiPlanarVideoRange or _420YpCbCr10BiPlanarVideoRange"
        }
        let video = input.input?.outputSettings as? VideoSettings
        let width = a[kCVPixelBufferWidthKey].flatMap(settingsInteger) ?? video?.width
        let height = a[kCVPixelBufferHeightKey].flatMap(settingsInteger) ?? video?.height
        pixelFormatType = type
        if problem == nil, let format, let width, let height, let gk = input.input, input.mediaType == .video {
            adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: gk,
                                                         sourcePixelBufferAttributes: PixelBufferAttributes(pixelFormat: format, width: width, height: height))
        } else {
            adaptor = nil
        }
        attributesError = problem ?? (adaptor == nil ? "the adaptor needs a video input with H.264 settings (or kCVPixelBufferWidthKey and kCVPixelBufferHeightKey)" : nil)
    }

    /// Frames to draw into: nil until the writer has started writing, as in AVFoundation.
    public var pixelBufferPool: CVPixelBufferPool? {
        pool.withLock { p in
            if let p { return p }
            guard let gkPool = adaptor?.pixelBufferPool else { return nil }
            p = CVPixelBufferPool(pool: gkPool, pixelFormatType: pixelFormatType, attributes: sourcePixelBufferAttributes ?? [:])
            return p
        }
    }

    /// Appends `pixelBuffer`, shown at `presentationTime`, waiting while the encoder is behind.
    /// False when it was not taken: see the writer's `status` and `error`.
    @discardableResult
    public func append(_ pixelBuffer: CVPixelBuffer, withPresentationTime presentationTime: CMTime) -> Bool {
        guard let writer = assetWriterInput.writer else { return false }
        guard let adaptor else {
            writer.fail(avError(.operationNotAllowed, "cannot append to the pixel buffer adaptor: \(attributesError ?? "it has no input")"))
            return false
        }
        guard let t = presentationTime.mediaTime, t.isFinite else {
            writer.fail(avError(.operationNotAllowed, "the presentation time \(presentationTime) is not a number; give each frame a numeric time"))
            return false
        }
        do {
            try adaptor.append(pixelBuffer.sample, withPresentationTime: t)
            return true
        } catch {
            writer.fail(error)
            return false
        }
    }
}
