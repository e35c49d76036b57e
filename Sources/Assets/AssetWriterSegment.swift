import GraphKitCore
import MediaContainers

/// How an ``AssetWriter`` writing segments shapes them (`AVFileTypeProfile`): both are fragmented
/// MP4 (an initialization segment, then media segments each a `moof` + `mdat` starting on a key
/// frame) as HLS carries it (RFC 8216 3.3); GraphKit writes one form, which meets both.
public enum FileTypeProfile: String, Sendable, Hashable {
    /// `AVFileTypeProfile.mpeg4AppleHLS`.
    case mpeg4AppleHLS
    /// `AVFileTypeProfile.mpeg4CMAFCompliant` (ISO/IEC 23000-19).
    case mpeg4CMAFCompliant
}

extension AssetWriter {
    /// A segment a writer in segment mode gives out (``AssetWriterDelegate`` or
    /// ``AssetWriter/segments``): its bytes, its type and what it holds.
    public struct Segment: Sendable {
        /// `AVAssetSegmentType`.
        public enum Kind: String, Sendable, Hashable {
            /// The initialization segment (`ftyp` + `moov`): once, first.
            case initialization
            /// A media segment (`moof` + `mdat`), playable after the initialization segment alone.
            case separable
        }

        public var kind: Kind
        public var data: [UInt8]
        /// What it holds, track by track (an initialization segment's has no track reports).
        public var report: SegmentReport
    }

    /// `AVAssetSegmentReport`.
    public struct SegmentReport: Sendable {
        public var kind: Segment.Kind
        public var trackReports: [SegmentTrackReport]
    }

    /// `AVAssetSegmentTrackReport`: one track's part of a media segment, on the segments' clock
    /// (the session's start at ``AssetWriter/initialSegmentStartTime``).
    public struct SegmentTrackReport: Sendable {
        public var trackID: Int
        public var mediaType: MediaType
        public var earliestPresentationTime: MediaTime
        public var duration: MediaTime
        /// The video track's first sample (`AVAssetSegmentReportSampleInformation`); nil for audio.
        public var firstVideoSample: SampleInformation?
    }

    /// `AVAssetSegmentReportSampleInformation`: where a sample is in the segment's bytes.
    public struct SampleInformation: Sendable {
        public var presentationTime: MediaTime
        public var offset: Int
        public var length: Int
        public var isSyncSample: Bool
    }
}

extension AssetWriter.Segment {
    /// A media segment as the segmenter made it, reported.
    init(_ segment: HLSSegmenter.Segment) {
        let reports = segment.tracks.map { span in
            let scale = Int32(clamping: span.timescale)
            return AssetWriter.SegmentTrackReport(
                trackID: Int(span.trackID), mediaType: span.isVideo ? .video : .audio,
                earliestPresentationTime: MediaTime(value: span.earliestPresentationTime, timescale: scale),
                duration: MediaTime(value: span.duration, timescale: scale),
                firstVideoSample: span.isVideo
                    ? AssetWriter.SampleInformation(presentationTime: MediaTime(value: span.firstSamplePresentationTime, timescale: scale),
                                                    offset: span.firstSampleOffset, length: span.firstSampleSize,
                                                    isSyncSample: span.startsWithSyncSample)
                    : nil)
        }
        self.init(kind: .separable, data: segment.bytes, report: AssetWriter.SegmentReport(kind: .separable, trackReports: reports))
    }

    init(initialization bytes: [UInt8]) {
        self.init(kind: .initialization, data: bytes, report: AssetWriter.SegmentReport(kind: .initialization, trackReports: []))
    }
}

/// Receives a segment writer's segments, as `AVAssetWriterDelegate` does: each call comes on the
/// writer's own delivery thread, in order (the initialization segment first), never with a lock
/// of GraphKit's held. A slow delegate slows the writer (the encoders wait once a few segments
/// are waiting to be delivered); one that throws fails the writer with its error;
/// ``AssetWriter/cancelWriting()`` does not wait for a call in progress.
public protocol AssetWriterDelegate: AnyObject, Sendable {
    func assetWriter(_ writer: AssetWriter, didOutput segment: AssetWriter.Segment) throws
}
