import CGStreamer
import CGraphKitGlue
import GraphKitCore
import Synchronization

extension GraphRun {
    /// Where a run started with ``GraphRun/start(at:)`` begins in its sources' media.
    public enum Seek: Sendable, Hashable {
        /// At the keyframe at or before the time (the frame a decoder can start from, no frame
        /// before it decoded): the first frame is that keyframe, with its own time.
        case keyframe(atOrBefore: MediaTime)
        /// At the keyframe at or after the time (KEY_UNIT | SNAP_AFTER): the first frame is the
        /// first keyframe from the time on, with its own time (a thumbnailer's keyframe within a
        /// tolerance after the time). Past the last keyframe the demuxer gives what it has there.
        case nextKeyframe(atOrAfter: MediaTime)
        /// Exactly at the time: decoded from the keyframe before it, the frames before it left
        /// out by the decoders; the first frame is the one showing at the time, and sound starts
        /// at the time.
        case exact(MediaTime)
        /// As `start`, and the sources end at `end` (GStreamer's segment stop): the demuxer sends
        /// end of stream there, so the run completes with the media up to `end`, decoders leaving
        /// out what is past it. What an export of a time range runs with.
        indirect case until(_ start: Seek, end: MediaTime)

        public var time: MediaTime {
            switch self {
            case .keyframe(let t), .nextKeyframe(let t), .exact(let t): t
            case .until(let start, _): start.time
            }
        }

        /// Where the sources end; nil: at their end.
        public var end: MediaTime? {
            if case .until(_, let end) = self { end } else { nil }
        }

        /// This start, ending at `end`.
        public func ending(at end: MediaTime) -> Seek { .until(self.starting, end: end) }

        /// The start alone, without an end.
        var starting: Seek {
            if case .until(let start, _) = self { start.starting } else { self }
        }
    }
}

extension Pipeline {
    /// A flushing seek of the paused pipeline to `position` (GStreamer's `gst_element_seek`:
    /// KEY_UNIT | SNAP_BEFORE or SNAP_AFTER, or ACCURATE), then PLAYING. A pull-mode demuxer (qtdemux, reading
    /// a file) does the flush and the seek on this thread, so what was decoded while prerolling
    /// has left every queue when this returns. The error says the position and why.
    func seek(_ position: GraphRun.Seek) -> GraphError? {
        let ns = position.time.nanoseconds
        if let end = position.end, !(end.isFinite && end > position.time) {
            return GraphError(.usage, at: "GraphRun.start(at:)", "cannot end at \(end.seconds) s: the end must be a finite time after the start (\(position.time.seconds) s)")
        }
        let mode: GstSeekFlags = switch position.starting {
        case .keyframe, .until: GstSeekFlags(GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_BEFORE.rawValue)
        case .nextKeyframe: GstSeekFlags(GST_SEEK_FLAG_KEY_UNIT.rawValue | GST_SEEK_FLAG_SNAP_AFTER.rawValue)
        case .exact: GST_SEEK_FLAG_ACCURATE
        }
        let flags = GstSeekFlags(GST_SEEK_FLAG_FLUSH.rawValue | mode.rawValue)
        // The range is [start, end), and the demuxer gives a sample stamped at the stop too: the
        // stop is a nanosecond before the end.
        let stop: (GstSeekType, gint64) = position.end.map { (GST_SEEK_TYPE_SET, gint64(clamping: $0.nanoseconds) - 1) } ?? (GST_SEEK_TYPE_NONE, -1)
        // Not while the run stops it, nor after (see stateChanges): the flushing seek wakes
        // every streaming thread it waits for, so a stop waits for it no longer than it takes.
        return stateChanges.withLock { stopped -> GraphError? in
            guard !stopped else {
                return GraphError(.usage, at: "GraphRun.seek(to:)", "the run ended before it could seek to \(position.time.seconds) s")
            }
            guard gst_element_seek(raw, 1.0, GST_FORMAT_TIME, flags, GST_SEEK_TYPE_SET, gint64(clamping: ns),
                                   stop.0, stop.1) != 0 else {
                return GraphError(.runFailed, at: "GraphRun.start(at:)",
                                  "cannot start at \(position.time.seconds) s: the graph's sources cannot seek (a live source, or a stream read in order)")
            }
            guard gk_element_set_state(raw, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE else {
                return GraphError(.runFailed, at: "GraphRun.start(at:)", "the pipeline could not play after seeking to \(position.time.seconds) s")
            }
            return nil
        }
    }
}
