import CGStreamer
import CGraphKitGlue
import Synchronization

/// Recycled frames for an effect to write into when its input frame is shared, like
/// `CVPixelBufferPool`: a GStreamer buffer pool, made for the first frame format it is asked
/// for and remade when that format changes. A frame goes back to the pool when its last holder
/// lets go, so a steady stream reuses the same few frames instead of allocating (and
/// page-faulting) megabytes per frame.
///
/// Used through `SampleBuffer.withPixelPlanes(writingInto:_:)`; one per node.
public final class FramePool: Sendable {
    private struct State {
        var pool: UnsafeMutablePointer<GstBufferPool>?
        var format: MediaFormat.VideoFormat?
    }
    private let state = Mutex(State())

    public init() {}

    deinit {
        state.withLock { if let pool = $0.pool { gk_frame_pool_free(pool) } }
    }

    /// A frame of `format` in GStreamer's default layout (one new reference).
    func frame(_ format: MediaFormat.VideoFormat) throws(GraphError) -> UnsafeMutablePointer<GstBuffer> {
        // The buffer leaves the lock as an address: a new reference the caller owns.
        let address = try state.withLock { (s: inout State) throws(GraphError) -> UInt in
            // Only the layout matters: a change of frame rate keeps the pool.
            let sameLayout = s.format?.pixelFormat == format.pixelFormat && s.format?.width == format.width && s.format?.height == format.height
            var pool = sameLayout ? s.pool : nil
            if pool == nil {
                if let old = s.pool { gk_frame_pool_free(old) }
                s.pool = nil
                s.format = format
                let size = gk_video_frame_size(format.pixelFormat.gstName, gint(format.width), gint(format.height))
                guard size > 0, let made = gk_frame_pool_new(MediaFormat.rawVideo(format).capsString, guint(size)) else {
                    throw GraphError(.runFailed, "cannot make a pool of \(format.width)x\(format.height) \(format.pixelFormat.gstName) frames")
                }
                s.pool = made
                pool = made
            }
            guard let pool, let buffer = gk_frame_pool_acquire(pool) else {
                throw GraphError(.runFailed, "cannot take a frame from the pool of \(format.width)x\(format.height) \(format.pixelFormat.gstName) frames")
            }
            return UInt(bitPattern: buffer)
        }
        guard let buffer = UnsafeMutablePointer<GstBuffer>(bitPattern: address) else {
            throw GraphError(.runFailed, "the frame pool gave no frame")  // not reached: made from a buffer above
        }
        return buffer
    }
}
