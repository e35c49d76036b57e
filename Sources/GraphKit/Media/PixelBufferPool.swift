import CGStreamer
import CGraphKitGlue
import Synchronization

/// A video frame app code draws into: a raw video ``SampleBuffer`` (like `CVPixelBuffer`, which
/// is a `CVImageBuffer`), with its size and row stride at hand.
public typealias PixelBuffer = SampleBuffer

extension SampleBuffer {
    /// The frame's width in pixels; 0 when the buffer is not raw video.
    public var width: Int { videoFormatIfAny?.width ?? 0 }
    /// The frame's height in pixels; 0 when the buffer is not raw video.
    public var height: Int { videoFormatIfAny?.height ?? 0 }
    /// The frame's pixel format; nil when the buffer is not raw video.
    public var pixelFormat: PixelFormat? { videoFormatIfAny?.pixelFormat }
    /// Bytes from one row of the first plane to the next (at least 4 × width for BGRA).
    public var bytesPerRow: Int {
        guard let v = videoFormatIfAny else { return 0 }
        return planeLayout(v).first?.stride ?? 0
    }

    private var videoFormatIfAny: MediaFormat.VideoFormat? {
        if case .rawVideo(let v)? = format { return v }
        return nil
    }
}

/// Frames to draw into, recycled, like `CVPixelBufferPool`: a frame goes back to the pool when
/// the last holder lets go of it (the encoder, once it has read it), so a steady stream reuses
/// the same few frames instead of allocating and page-faulting megabytes per frame.
/// ``allocations`` counts the frames the pool had to make: it stops growing once the stream
/// is steady.
public final class PixelBufferPool: Sendable {
    public let format: MediaFormat.VideoFormat
    private let pool: Mutex<UInt>  // the GstBufferPool's address
    private let made = Atomic<Int>(0)

    /// A pool of `width` × `height` frames of `pixelFormat` (GStreamer's default layout).
    public init(pixelFormat: PixelFormat = .bgra, width: Int, height: Int, frameRate: FrameRate = FrameRate(0, 1)) throws(GraphError) {
        GStreamer.initialize()
        format = .init(pixelFormat: pixelFormat, width: width, height: height, frameRate: frameRate)
        let size = width > 0 && height > 0 ? gk_video_frame_size(pixelFormat.gstName, gint(width), gint(height)) : 0
        guard size > 0, let raw = gk_frame_pool_new(MediaFormat.rawVideo(format).capsString, guint(size)) else {
            throw GraphError(.usage, "cannot make a pool of \(width)x\(height) \(pixelFormat.gstName) frames: width and height must be from 1 to 16384")
        }
        pool = Mutex(UInt(bitPattern: raw))
    }

    deinit {
        pool.withLock { if let p = UnsafeMutablePointer<GstBufferPool>(bitPattern: $0) { gk_frame_pool_free(p) } }
    }

    /// A frame to draw into (its pixels are whatever the last user left: draw every one).
    public func makePixelBuffer() throws(GraphError) -> PixelBuffer {
        var isNew: Int32 = 0
        let address = pool.withLock { p -> UInt in
            guard let raw = UnsafeMutablePointer<GstBufferPool>(bitPattern: p) else { return 0 }
            return UInt(bitPattern: gk_frame_pool_acquire_counted(raw, &isNew))
        }
        guard let buffer = UnsafeMutablePointer<GstBuffer>(bitPattern: address) else {
            throw GraphError(.runFailed, "the pool of \(format.width)x\(format.height) \(format.pixelFormat.gstName) frames gave no frame")
        }
        if isNew != 0 { made.add(1, ordering: .relaxed) }
        return SampleBuffer(owning: buffer, format: .rawVideo(format))
    }

    /// How many frames the pool has allocated: each a miss, when no used frame was free.
    public var allocations: Int { made.load(ordering: .relaxed) }
}
