@_spi(Engine) import GraphKitCore
@_spi(Engine) import GraphKitRuntime

/// Appends pixel buffers with their times to a video ``AssetWriterInput``, and hands out frames
/// to draw into from a pool, like `AVAssetWriterInputPixelBufferAdaptor`.
///
/// Frames from ``pixelBufferPool`` are recycled: once the encoder has read a frame, it goes back
/// to the pool, so drawing a movie allocates no frame per frame once the stream is steady
/// (``PixelBufferPool/allocations`` counts the ones made).
public final class AssetWriterInputPixelBufferAdaptor: Sendable {
    public let assetWriterInput: AssetWriterInput
    public let sourcePixelBufferAttributes: PixelBufferAttributes?
    private let pool = Guarded<PixelBufferPool?>(nil)

    /// An adaptor for a video input; `sourcePixelBufferAttributes` says what frames the pool
    /// makes (by default BGRA at the input's output size).
    public init(assetWriterInput: AssetWriterInput, sourcePixelBufferAttributes: PixelBufferAttributes? = nil) {
        self.assetWriterInput = assetWriterInput
        self.sourcePixelBufferAttributes = sourcePixelBufferAttributes
    }

    /// Frames to draw into; nil until the writer has started writing (as in AVFoundation), and
    /// for an input that is not a video input.
    public var pixelBufferPool: PixelBufferPool? {
        pool.withLock { pool in
            if let pool { return pool }
            guard let writer = assetWriterInput.writerForAdaptor, writer.status == .writing,
                  let settings = assetWriterInput.outputSettings as? VideoSettings else { return nil }
            let a = sourcePixelBufferAttributes ?? PixelBufferAttributes(width: settings.width, height: settings.height)
            pool = try? PixelBufferPool(pixelFormat: a.pixelFormat, width: a.width, height: a.height)
            return pool
        }
    }

    /// Appends `pixelBuffer` to be shown at `withPresentationTime`, blocking while the encoder
    /// is behind. From a Swift concurrency task, `await` the async `append`.
    @available(*, noasync, message: "blocks the thread; use await append(_:withPresentationTime:)")
    public func append(_ pixelBuffer: PixelBuffer, withPresentationTime time: MediaTime) throws(GraphError) {
        try assetWriterInput.append(try stamped(pixelBuffer, time))
    }

    /// Appends `pixelBuffer` to be shown at `withPresentationTime`, suspending while the encoder
    /// is behind.
    public func append(_ pixelBuffer: PixelBuffer, withPresentationTime time: MediaTime) async throws(GraphError) {
        try await assetWriterInput.append(try stamped(pixelBuffer, time))
    }

    private func stamped(_ pixelBuffer: PixelBuffer, _ time: MediaTime) throws(GraphError) -> SampleBuffer {
        guard case .rawVideo? = pixelBuffer.format else {
            throw GraphError(.usage, at: assetWriterInput.name,
                             "the pixel buffer is \(pixelBuffer.format?.description ?? "of no format"), not a video frame; take frames from pixelBufferPool")
        }
        guard time.value >= 0 else {
            throw GraphError(.usage, at: assetWriterInput.name, "the presentation time \(time.seconds) s is negative; start at 0 or later")
        }
        var b = pixelBuffer
        b.stampTiming(presentationTime: time, duration: nil)
        return b
    }
}
