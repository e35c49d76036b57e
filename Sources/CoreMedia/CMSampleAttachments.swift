@_spi(Engine) import GraphKitCore

// Per-sample attachments, as CoreMedia's: what a passthrough reader's compressed samples say
// about their dependencies (a keyframe is a sync sample; the others carry NotSync), read by
// segmenters and editors to find where a stream can be cut, and set by code that makes samples.
// Over the engine's keyframe flag: NotSync is the flag's absence on compressed video, and
// setting it marks the sample for the muxer a writer feeds.

/// CoreFoundation's array: `[Any]` here, so `attachments as? [[CFString: Any]]` compiles.
public typealias CFArray = [Any]

/// The sample is not a sync sample (a keyframe): it needs earlier samples to decode.
public let kCMSampleAttachmentKey_NotSync: CFString = "NotSync"
/// The sample is a partial sync sample (an open-GOP I-frame).
public let kCMSampleAttachmentKey_PartialSync: CFString = "PartialSync"
/// The sample refers to others to decode (a P- or B-frame).
public let kCMSampleAttachmentKey_DependsOnOthers: CFString = "DependsOnOthers"
/// Other samples refer to this one.
public let kCMSampleAttachmentKey_IsDependedOnByOthers: CFString = "IsDependedOnByOthers"
/// The sample carries redundant coding.
public let kCMSampleAttachmentKey_HasRedundantCoding: CFString = "HasRedundantCoding"
/// Later samples may be shown before this one (B-frames follow).
public let kCMSampleAttachmentKey_EarlierDisplayTimesAllowed: CFString = "EarlierDisplayTimesAllowed"
/// A renderer shows the sample at once, whatever its time.
public let kCMSampleAttachmentKey_DisplayImmediately: CFString = "DisplayImmediately"
/// The sample is decoded but not shown.
public let kCMSampleAttachmentKey_DoNotDisplay: CFString = "DoNotDisplay"

/// One dictionary per sample in the buffer (for PCM, one per frame), or nil when the buffer has
/// none and `createIfNecessary` is false. Compressed video has them: a keyframe's says it does
/// not depend on others, another's carries `kCMSampleAttachmentKey_NotSync` as true. Raw frames
/// and audio have none (every sample is a sync sample), so the empty dictionaries are made only
/// when asked for. The array is a copy: change attachments through ``CMSampleBuffer/sampleAttachments``.
public func CMSampleBufferGetSampleAttachmentsArray(_ sbuf: CMSampleBuffer, createIfNecessary: Bool) -> CFArray? {
    let all = sbuf.attachments
    guard createIfNecessary || all.contains(where: { !$0.isEmpty }) else { return nil }
    return all.map { $0.mapValues(\.value) as [String: Any] }
}

extension CMSampleBuffer {
    /// The attachments of each sample (for PCM, of each frame), as CoreMedia's Swift overlay
    /// gives them: `sampleBuffer.sampleAttachments.first?[.notSync] as? Bool`.
    public var sampleAttachments: SampleAttachmentsArray { SampleAttachmentsArray(buffer: self) }

    /// Every sample's attachments, in order.
    public struct SampleAttachmentsArray: RandomAccessCollection, Sendable {
        let buffer: CMSampleBuffer
        public var startIndex: Int { 0 }
        public var endIndex: Int { Swift.max(buffer.numSamples, 1) }
        public subscript(position: Int) -> PerSampleAttachmentsDictionary {
            precondition(indices.contains(position), "sample \(position) of \(count)")
            return PerSampleAttachmentsDictionary(buffer: buffer, index: position)
        }
    }

    /// One sample's attachments; setting a value changes the buffer's (as CoreMedia's mutable
    /// dictionaries do).
    public struct PerSampleAttachmentsDictionary: Sequence, Sendable {
        let buffer: CMSampleBuffer
        let index: Int

        /// A per-sample attachment's name.
        public struct Key: RawRepresentable, Hashable, Sendable {
            public let rawValue: CFString
            public init(rawValue: CFString) { self.rawValue = rawValue }
            public static let notSync = Key(rawValue: kCMSampleAttachmentKey_NotSync)
            public static let partialSync = Key(rawValue: kCMSampleAttachmentKey_PartialSync)
            public static let dependsOnOthers = Key(rawValue: kCMSampleAttachmentKey_DependsOnOthers)
            public static let isDependedOnByOthers = Key(rawValue: kCMSampleAttachmentKey_IsDependedOnByOthers)
            public static let hasRedundantCoding = Key(rawValue: kCMSampleAttachmentKey_HasRedundantCoding)
            public static let earlierDisplayTimesAllowed = Key(rawValue: kCMSampleAttachmentKey_EarlierDisplayTimesAllowed)
            public static let displayImmediately = Key(rawValue: kCMSampleAttachmentKey_DisplayImmediately)
            public static let doNotDisplay = Key(rawValue: kCMSampleAttachmentKey_DoNotDisplay)
        }

        public subscript(key: Key) -> Any? {
            get { buffer.attachments[index][key.rawValue]?.value }
            nonmutating set { buffer.setAttachment(key.rawValue, newValue.map(CMSampleBuffer.AttachmentValue.init), at: index) }
        }

        public func makeIterator() -> some IteratorProtocol<(key: Key, value: Any)> {
            buffer.attachments[index].sorted { $0.key < $1.key }.map { (key: Key(rawValue: $0.key), value: $0.value.value as Any) }.makeIterator()
        }
    }
}

extension CMSampleBuffer {
    /// An attachment's value, held as one of the property-list types CoreMedia's are.
    package struct AttachmentValue: @unchecked Sendable {
        // Unchecked: a Bool, number or string (what a CFBoolean or CFNumber attachment holds),
        // set whole and never changed in place.
        let value: Any
        init(_ value: Any) { self.value = value }
    }

    /// Each sample's attachments: NotSync and DependsOnOthers from the engine's keyframe flag
    /// for compressed video, with what was set on the buffer over them.
    var attachments: [[CFString: AttachmentValue]] {
        let (sample, extra) = (self.sample, setAttachments)
        var derived: [CFString: AttachmentValue] = [:]
        switch sample.format {
        case .h264?, .video?:
            let sync = sample.flags.contains(.keyframe)
            if !sync { derived[kCMSampleAttachmentKey_NotSync] = AttachmentValue(true) }
            derived[kCMSampleAttachmentKey_DependsOnOthers] = AttachmentValue(!sync)
        default:
            break
        }
        return (0..<max(numSamples, 1)).map { i in derived.merging(extra[i] ?? [:]) { $1 } }
    }
}

// MARK: Capture's dropped frames

/// Why a capture output dropped the frame `captureOutput(_:didDrop:from:)` is told of.
public let kCMSampleBufferAttachmentKey_DroppedFrameReason: CFString = "DroppedFrameReason"
/// The frame came while the delegate was still busy with an earlier one.
public let kCMSampleBufferDroppedFrameReason_FrameWasLate: CFString = "FrameWasLate"
/// The output had no buffer to put the frame in.
public let kCMSampleBufferDroppedFrameReason_OutOfBuffers: CFString = "OutOfBuffers"
/// Frames were lost before the output (the device).
public let kCMSampleBufferDroppedFrameReason_Discontinuity: CFString = "Discontinuity"
