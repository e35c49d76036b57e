import CGStreamer
import CGraphKitGlue
import GraphKitCore

extension GraphRun {
    /// Where a run started with ``GraphRun/start(at:)`` begins in its sources' media.
    public enum Seek: Sendable, Hashable {
        /// At the keyframe at or before the time (the frame a decoder can start from, no frame
        /// before it decoded): the first frame is that keyframe, with its own time.
        case keyframe(atOrBefore: MediaTime)
        /// Exactly at the time: decoded from the keyframe before it, the frames before it left
        /// out by the decoders; the first frame is the one showing at the time, and sound starts
        /// at the time.
        case exact(MediaTime)

        public var time: MediaTime {
            switch self {
            case .keyframe(let t), .exact(let t): t
            }
        }
    }
}

extension Pipeline {
    /// A flushing seek of the paused pipeline to `position` (GStreamer's `gst_element_seek`:
    /// KEY_UNIT | SNAP_BEFORE, or ACCURATE), then PLAYING. A pull-mode demuxer (qtdemux, reading
    /// a file) does the flush and the seek on this thread, so what was decoded while prerolling
    /// has left every queue when this returns. The error says the position and why.
    func seek(_ position: GraphRun.Seek) -> GraphError? {
        let ns = position.time.nanoseconds
        let mode: GstSeekFlags = switch position {
        case .keyframe: GstSeekFlags(GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_BEFORE.rawValue)
        case .exact: GST_SEEK_FLAG_ACCURATE
        }
        let flags = GstSeekFlags(GST_SEEK_FLAG_FLUSH.rawValue | mode.rawValue)
        guard gst_element_seek(raw, 1.0, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET, gint64(clamping: ns),
                               GST_SEEK_TYPE_NONE, -1) != 0 else {
            return GraphError(.runFailed, at: "GraphRun.start(at:)",
                              "cannot start at \(position.time.seconds) s: the graph's sources cannot seek (a live source, or a stream read in order)")
        }
        guard gk_element_set_state(raw, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else {
            return GraphError(.runFailed, at: "GraphRun.start(at:)", "the pipeline could not play after seeking to \(position.time.seconds) s")
        }
        return nil
    }
}
