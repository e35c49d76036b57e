import CGStreamer
import CGraphKitGlue
import GraphKitCore

extension Element {
    /// Calls `draw` on the streaming thread with the planes of each raw video frame of `format`
    /// as it leaves this element's source pad `pad`, at the moment it is pushed on (for a live
    /// source, once its clock has reached the frame: what a stamp of the wall clock needs).
    /// The frame is written in place when it is held once, as a source's own frame is; a frame
    /// held elsewhere too is copied first (``SampleBuffer/withMutablePixelPlanes(_:)``), so no
    /// other holder sees the drawing. `draw` must not block. A frame whose planes cannot be
    /// had (smaller than `format` says) fails the run, naming the node.
    public func drawOnEachFrame(leaving pad: String = "src", format: MediaFormat.VideoFormat,
                                _ draw: @escaping @Sendable (_ planes: [SampleBuffer.PixelPlane]) -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        final class Drawing: Sendable {
            let format: MediaFormat
            let element: Element
            let draw: @Sendable ([SampleBuffer.PixelPlane]) -> Void
            init(_ format: MediaFormat.VideoFormat, _ element: Element, _ draw: @escaping @Sendable ([SampleBuffer.PixelPlane]) -> Void) {
                self.format = .rawVideo(format)
                self.element = element
                self.draw = draw
            }
        }
        let box = Unmanaged.passRetained(Drawing(format, self, draw)).toOpaque()
        let id = gk_pad_add_transform(p, { ctx, buffer in
            let d = Unmanaged<Drawing>.fromOpaque(ctx!).takeUnretainedValue()
            var frame = SampleBuffer(owning: buffer!, format: d.format)
            do throws(GraphError) {
                try frame.withMutablePixelPlanes { planes in d.draw(planes) }
            } catch {
                d.element.postError("cannot draw on a frame: \(error.message)")
                return nil
            }
            return frame.retainedBuffer()  // and `frame` lets its own reference go on return
        }, nil, box, { ctx in Unmanaged<Drawing>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }
}
