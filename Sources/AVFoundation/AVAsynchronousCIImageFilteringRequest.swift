@_spi(Engine) import Assets
@_spi(Engine) import CoreVideo
@_spi(Engine) import GraphKitCore
import CoreImage
import Dispatch

/// One frame of a CIFilter video composition (``AVVideoComposition/init(asset:applyingCIFiltersWithHandler:)``),
/// as AVFoundation's: the frame as a `CIImage` (BGRA, the render size, upright), its time in the
/// composition, and the two ways to end it. The handler finishes it once, at once or later from
/// any thread; a second finish is ignored, as is one after the reading has stopped.
open class AVAsynchronousCIImageFilteringRequest: @unchecked Sendable {
    // Unchecked: the three values are let; the outcome is under `outcome`'s lock.
    public let sourceImage: CIImage
    public let compositionTime: CMTime
    public let renderSize: CGSize

    private enum Outcome {
        case image(CIImage, CIContext?)
        case failure(any Error)
    }
    private let outcome = Guarded<Outcome?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(sourceImage: CIImage, compositionTime: CMTime, renderSize: CGSize) {
        self.sourceImage = sourceImage
        self.compositionTime = compositionTime
        self.renderSize = renderSize
    }

    /// The frame to show is `filteredImage`, rendered by `context` (nil: the composition's
    /// own). Its part from (0, 0) to the render size shows; outside its extent the frame is
    /// transparent (black once encoded).
    open func finish(with filteredImage: CIImage, context: CIContext?) { settle(.image(filteredImage, context)) }

    /// The frame cannot be made: the export (or the reader) fails with `error`.
    open func finish(with error: any Error) { settle(.failure(error)) }

    private func settle(_ result: Outcome) {
        let first = outcome.withLock { o -> Bool in
            guard o == nil else { return false }
            o = result
            return true
        }
        if first { finished.signal() }
    }

    /// Waits for the handler to finish, looking every 50 ms whether reading has stopped.
    private func wait(stopped: @Sendable () -> Bool) throws(GraphError) -> (CIImage, CIContext?) {
        while finished.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            if stopped() {
                throw GraphError(.cancelled, at: "videoComposition", "reading stopped while the CIFilter handler had the frame at \(compositionTime.seconds) s")
            }
        }
        switch outcome.withLock({ $0 }) {
        case .image(let image, let context)?: return (image, context)
        case .failure(let error)?:
            throw GraphError(.runFailed, at: "videoComposition",
                             "the CIFilter handler failed the frame at \(compositionTime.seconds) s: \((error as? GraphError)?.message ?? String(describing: error))")
        case nil:
            throw GraphError(.runFailed, at: "videoComposition", "the CIFilter handler's frame at \(compositionTime.seconds) s came back empty")
        }
    }

    /// The engine's frame filter for `applier`: each drawn frame (BGRA) wrapped as a pixel
    /// buffer without a copy, handed over, and the image it finishes with rendered into a frame
    /// of the same size, recycled once its last holder (the encoder, the reader) lets go of it.
    /// `renderSize` is the frame's (the composition's, to even sides for 4:2:0), so the source
    /// image's extent and it agree.
    static func frameFilter(_ applier: @escaping @Sendable (AVAsynchronousCIImageFilteringRequest) -> Void) -> VideoComposition.FrameFilter {
        let shared = CIContext()
        // A recycled frame holds an earlier picture. Rendering writes every pixel (clearing where
        // the image is transparent), so none is cleared first: at 1080p that would cost a third
        // of a colour matrix's render. Only an image too large to render whole is drawn again
        // over a cleared frame, leaving what it could not draw transparent.
        let pool = FramePool()
        return VideoComposition.FrameFilter { frame, time, stopped throws(GraphError) in
            guard case .rawVideo(let v)? = frame.format, v.pixelFormat == .bgra else {
                throw GraphError(.runFailed, at: "videoComposition", "a CIFilter composition takes BGRA frames, and was given \(frame.format.map { "\($0)" } ?? "a buffer of no format")")
            }
            guard !stopped() else {
                throw GraphError(.cancelled, at: "videoComposition", "reading stopped before the frame at \(time.seconds) s was filtered")
            }
            let request = AVAsynchronousCIImageFilteringRequest(sourceImage: CIImage(cvPixelBuffer: CVPixelBuffer(sample: frame, videoFormat: v)),
                                                                compositionTime: CMTime(time), renderSize: CGSize(width: v.width, height: v.height))
            applier(request)
            let (image, context) = try request.wait(stopped: stopped)
            // The pixel buffer alone holds the frame, so rendering writes it in place.
            let out: CVPixelBuffer
            do throws(GraphError) { out = CVPixelBuffer(sample: try SampleBuffer(frameOf: v, from: pool), videoFormat: v) } catch {
                throw GraphError(.runFailed, at: "videoComposition", "no \(v.width)x\(v.height) frame could be made for the filtered image: \(error.message)")
            }
            let whole = CGRect(x: 0, y: 0, width: v.width, height: v.height)
            if !(context ?? shared).render(image, to: out, bounds: whole) {
                CVPixelBufferLockBaseAddress(out, [])
                if let base = CVPixelBufferGetBaseAddress(out) { base.initializeMemory(as: UInt8.self, repeating: 0, count: CVPixelBufferGetDataSize(out)) }
                CVPixelBufferUnlockBaseAddress(out, [])
                (context ?? shared).render(image, to: out, bounds: whole)
            }
            return out.sample
        }
    }
}
