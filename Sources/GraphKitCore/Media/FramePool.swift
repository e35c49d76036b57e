/// Recycled frames for an effect to write into when its input frame is shared, like
/// `CVPixelBufferPool`: in a run, a GStreamer buffer pool, made for the first frame format it is
/// asked for and remade when that format changes. A frame goes back to the pool when its last
/// holder lets go, so a steady stream reuses the same few frames instead of allocating (and
/// page-faulting) megabytes per frame.
///
/// Used through `SampleBuffer.withPixelPlanes(writingInto:_:)`; one per node.
public final class FramePool: Sendable {
    private struct State {
        var source: (any FrameSourcing)?
        var format: MediaFormat.VideoFormat?
    }
    private let state = Guarded(State())

    public init() {}

    /// A frame of `format` in the default layout.
    package func frame(_ format: MediaFormat.VideoFormat) throws(GraphError) -> SampleStorage {
        let frame = state.withLock { (s: inout State) -> (SampleStorage)? in
            // Only the layout matters: a change of frame rate keeps the pool.
            let sameLayout = s.format?.pixelFormat == format.pixelFormat && s.format?.width == format.width && s.format?.height == format.height
            if !sameLayout || s.source == nil {
                s.format = format
                s.source = SampleStorageAllocation.current.makeFrameSource(format)
            }
            return s.source?.frame()?.storage
        }
        guard let frame else {
            throw GraphError(.runFailed, "cannot take a frame of \(format.width)x\(format.height) \(format.pixelFormat.gstName) from a pool")
        }
        return frame
    }
}
