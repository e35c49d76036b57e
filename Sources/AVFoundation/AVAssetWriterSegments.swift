import Assets
import GraphKitCore
import MediaContainers
import Synchronization
// UTType (AVAssetWriter(contentType:)) is UniformTypeIdentifiers', which AVFoundation's headers
// import and so re-export on Apple's platforms.
@_exported import UniformTypeIdentifiers

// HLS from AVAssetWriter, by Apple's names (AVFoundation's AVAssetWriter.h and
// AVAssetSegmentReport.h): a writer made with init(contentType:), its outputFileTypeProfile,
// preferredOutputSegmentInterval, initialSegmentStartTime, a delegate receiving each segment's
// data, type and report, and flushSegment(); over GraphKit's AssetWriter in segment mode.

/// `AVFileTypeProfile`: the form of the segments.
public struct AVFileTypeProfile: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public static let mpeg4AppleHLS = AVFileTypeProfile("MPEG4AppleHLS")
    public static let mpeg4CMAFCompliant = AVFileTypeProfile("MPEG4CMAFCompliant")

    var assets: FileTypeProfile? {
        switch self {
        case .mpeg4AppleHLS: .mpeg4AppleHLS
        case .mpeg4CMAFCompliant: .mpeg4CMAFCompliant
        default: nil
        }
    }
}

/// `AVAssetSegmentType`.
public enum AVAssetSegmentType: Int, Sendable {
    case initialization = 1
    case separable = 2
}

/// `AVAssetSegmentReportSampleInformation`: a sample's place in the segment's data.
public final class AVAssetSegmentReportSampleInformation: NSObject, Sendable {
    public let presentationTimeStamp: CMTime
    public let offset: Int
    public let length: Int
    public let isSyncSample: Bool

    init(_ info: AssetWriter.SampleInformation) {
        presentationTimeStamp = CMTime(info.presentationTime)
        offset = info.offset
        length = info.length
        isSyncSample = info.isSyncSample
    }
}

/// `AVAssetSegmentTrackReport`: one track's part of a segment.
public final class AVAssetSegmentTrackReport: NSObject, Sendable {
    public let trackID: CMPersistentTrackID
    public let mediaType: AVMediaType
    public let earliestPresentationTimeStamp: CMTime
    public let duration: CMTime
    public let firstVideoSampleInformation: AVAssetSegmentReportSampleInformation?

    init(_ report: AssetWriter.SegmentTrackReport) {
        trackID = CMPersistentTrackID(clamping: report.trackID)
        mediaType = report.mediaType == .video ? .video : .audio
        earliestPresentationTimeStamp = CMTime(report.earliestPresentationTime)
        duration = CMTime(report.duration)
        firstVideoSampleInformation = report.firstVideoSample.map(AVAssetSegmentReportSampleInformation.init)
    }
}

/// `AVAssetSegmentReport`: what a segment holds.
public final class AVAssetSegmentReport: NSObject, Sendable {
    public let segmentType: AVAssetSegmentType
    public let trackReports: [AVAssetSegmentTrackReport]

    init(_ report: AssetWriter.SegmentReport) {
        segmentType = report.kind == .initialization ? .initialization : .separable
        trackReports = report.trackReports.map(AVAssetSegmentTrackReport.init)
    }
}

/// `AVAssetWriterDelegate`. Both methods are optional, as in AVFoundation: the one with a report
/// is called; its default calls the one without.
public protocol AVAssetWriterDelegate: NSObjectProtocol, Sendable {
    func assetWriter(_ writer: AVAssetWriter, didOutputSegmentData segmentData: Data, segmentType: AVAssetSegmentType,
                     segmentReport: AVAssetSegmentReport?)
    func assetWriter(_ writer: AVAssetWriter, didOutputSegmentData segmentData: Data, segmentType: AVAssetSegmentType)
}

extension AVAssetWriterDelegate {
    public func assetWriter(_ writer: AVAssetWriter, didOutputSegmentData segmentData: Data, segmentType: AVAssetSegmentType,
                            segmentReport: AVAssetSegmentReport?) {
        assetWriter(writer, didOutputSegmentData: segmentData, segmentType: segmentType)
    }

    public func assetWriter(_ writer: AVAssetWriter, didOutputSegmentData segmentData: Data, segmentType: AVAssetSegmentType) {}
}

/// The GraphKit writer's delegate, calling the app's with Apple's types.
final class SegmentForwarder: AssetWriterDelegate {
    weak let writer: AVAssetWriter?
    weak let delegate: (any AVAssetWriterDelegate)?

    init(writer: AVAssetWriter, delegate: any AVAssetWriterDelegate) {
        self.writer = writer
        self.delegate = delegate
    }

    func assetWriter(_: AssetWriter, didOutput segment: AssetWriter.Segment) throws {
        guard let writer, let delegate else { return }
        delegate.assetWriter(writer, didOutputSegmentData: Data(segment.data),
                             segmentType: segment.kind == .initialization ? .initialization : .separable,
                             segmentReport: AVAssetSegmentReport(segment.report))
    }
}

extension AVAssetWriter {
    /// The segments' form (`.mpeg4AppleHLS`, `.mpeg4CMAFCompliant`); nil (the default) writes a
    /// file. Set it before `startWriting()`, on a writer made with `init(contentType:)`.
    public var outputFileTypeProfile: AVFileTypeProfile? {
        get {
            switch writer.outputFileTypeProfile {
            case .mpeg4AppleHLS?: .mpeg4AppleHLS
            case .mpeg4CMAFCompliant?: .mpeg4CMAFCompliant
            case nil: nil
            }
        }
        set {
            guard let newValue else {
                writer.outputFileTypeProfile = nil
                return
            }
            guard let profile = newValue.assets else {
                fail(avError(.operationNotAllowed, "GraphKit writes the .mpeg4AppleHLS and .mpeg4CMAFCompliant profiles, not \(newValue.rawValue)"))
                return
            }
            writer.outputFileTypeProfile = profile
        }
    }

    /// How long each segment aims to be: invalid (the default) lets the writer choose (6 s);
    /// `.indefinite` cuts only where `flushSegment()` asks. Segments start on key frames, so
    /// they last at least the distance between two.
    public var preferredOutputSegmentInterval: CMTime {
        get { state.withLock { $0.segmentInterval } }
        set {
            state.withLock { $0.segmentInterval = newValue }
            writer.preferredOutputSegmentInterval = newValue.isIndefinite ? .positiveInfinity : newValue.isValid ? newValue.mediaTime : nil
        }
    }

    /// Where the segments' clock starts: the session's start is at this time in the segments.
    public var initialSegmentStartTime: CMTime {
        get { state.withLock { $0.initialSegmentStartTime } }
        set {
            state.withLock { $0.initialSegmentStartTime = newValue }
            writer.initialSegmentStartTime = newValue.isNumeric ? newValue.mediaTime : nil
        }
    }

    /// Receives each segment, on a thread of the writer's own (held weakly, as AVFoundation's).
    public var delegate: (any AVAssetWriterDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// Ends the current segment and hands it to the delegate (when the next key frame appended
    /// reaches the segmenter): for a writer whose `preferredOutputSegmentInterval` is
    /// `.indefinite`; otherwise the writer fails (AVFoundation raises an exception).
    public func flushSegment() {
        do {
            try writer.flushSegment()
        } catch {
            fail(error)
        }
    }

    /// startWriting() of a writer of segments: its delegate, behind the bridge.
    func startSegmentDelivery() {
        let forwarder = state.withLock { s -> SegmentForwarder? in
            guard let delegate = s.delegate else { return nil }
            s.forwarder = SegmentForwarder(writer: self, delegate: delegate)
            return s.forwarder
        }
        writer.delegate = forwarder
    }
}
