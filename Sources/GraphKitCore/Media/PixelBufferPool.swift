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
    private let source: any FrameSourcing
    private let made = Atomic<Int>(0)

    /// A pool of `width` × `height` frames of `pixelFormat` (GStreamer's default layout).
    public init(pixelFormat: PixelFormat = .bgra, width: Int, height: Int, frameRate: FrameRate = FrameRate(0, 1)) throws(GraphError) {
        format = .init(pixelFormat: pixelFormat, width: width, height: height, frameRate: frameRate)
        guard (1...16384).contains(width), (1...16384).contains(height),
              let source = SampleStorageAllocation.current.makeFrameSource(format) else {
            throw GraphError(.usage, "cannot make a pool of \(width)x\(height) \(pixelFormat.gstName) frames: width and height must be from 1 to 16384")
        }
        self.source = source
    }

    /// A frame to draw into (its pixels are whatever the last user left: draw every one).
    public func makePixelBuffer() throws(GraphError) -> PixelBuffer {
        guard let (storage, isNew) = source.frame() else {
            throw GraphError(.runFailed, "the pool of \(format.width)x\(format.height) \(format.pixelFormat.gstName) frames gave no frame")
        }
        if isNew { made.add(1, ordering: .relaxed) }
        return SampleBuffer(storage: storage, format: .rawVideo(format))
    }

    /// How many frames the pool has allocated: each a miss, when no used frame was free.
    public var allocations: Int { made.load(ordering: .relaxed) }
}
