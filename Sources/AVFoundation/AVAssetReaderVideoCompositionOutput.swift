@_spi(Engine) import Assets
@_spi(Engine) import GraphKitCore

/// Reads video drawn by a video composition, as AVFoundation's
/// `AVAssetReaderVideoCompositionOutput`: frames of the composition's render size at its frame
/// rate, each the track's decoded frame cropped, transformed and faded as the instruction of its
/// time says. GraphKit draws one track: the first of `videoTracks` (the others are refused by
/// name when the output is made); frames come as BGRA (the default) or 4:2:0
/// (`kCVPixelFormatType_420YpCbCr8Planar`), what `videoSettings` asks. Set ``videoComposition``
/// before reading starts: without one, the first `copyNextSampleBuffer()` fails the reader.
open class AVAssetReaderVideoCompositionOutput: AVAssetReaderOutput, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; what it adds is let or in a Mutex.
    public let videoTracks: [AVAssetTrack]
    public let videoSettings: [String: Any]?

    private struct Drawing {
        var composition: AVVideoComposition?
        /// Made at the first read, from the composition as it was then.
        var effects: CompositionEffects?
        var end = MediaTime.zero
        var pending: [SampleBuffer] = []
        var ended = false
    }
    private let drawing = Guarded(Drawing())

    public init(videoTracks: [AVAssetTrack], videoSettings: [String: Any]?) {
        self.videoTracks = videoTracks
        self.videoSettings = videoSettings
        var made: AssetReaderTrackOutput?
        var problem: String?
        do throws(SettingsError) {
            guard let track = videoTracks.first, track.mediaType == .video else {
                throw SettingsError("a video composition output draws a video track; give one")
            }
            guard videoTracks.count == 1 else {
                throw SettingsError("GraphKit's compositor draws one video track; \(videoTracks.count) were given (tracks \(videoTracks.map { String($0.trackID) }.joined(separator: ", ")))")
            }
            let settings = try ReaderSettings.read(videoSettings ?? [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA], mediaType: .video)
            guard case .pixels(let format) = settings, format == .bgra || format == .i420 else {
                throw SettingsError("a video composition output gives BGRA or 4:2:0 planar frames (kCVPixelFormatType_32BGRA, kCVPixelFormatType_420YpCbCr8Planar)")
            }
            guard let file = track.track, !(track is AVCompositionTrack) else {
                throw SettingsError("a video composition output reads a file's track; a composition's is exported with its videoComposition")
            }
            made = AssetReaderTrackOutput(track: file, outputSettings: settings)
        } catch {
            problem = error.message
        }
        super.init(output: made, mediaType: .video, problem: problem)
    }

    /// How the frames are drawn; set it before reading starts.
    public var videoComposition: AVVideoComposition? {
        get { drawing.withLock { $0.composition } }
        set { drawing.withLock { $0.composition = newValue } }
    }

    /// GraphKit has no custom compositors: always nil.
    public var customVideoCompositor: AnyObject? { nil }

    /// The next drawn frame, blocking until it is decoded and drawn; nil at the end, before
    /// reading starts, or after a failure (then see the reader's `status` and `error`).
    public override func copyNextSampleBuffer() -> CMSampleBuffer? {
        guard let output, let reader, !reader.failed else { return nil }
        // Taken out while frames are pulled and drawn (the pull blocks), put back after.
        var state = drawing.withLock { d in
            defer { d.pending = [] }
            return d
        }
        defer { drawing.withLock { $0 = state } }
        if state.effects == nil {
            do throws(GraphError) {
                state.effects = try effects(state.composition)
                state.end = try end()
            } catch {
                reader.fail(error)
                return nil
            }
        }
        while state.pending.isEmpty, !state.ended {
            guard let sample = output.copyNextSampleBuffer() else {
                state.ended = true
                break
            }
            do throws(GraphError) {
                state.pending = try state.effects?.process(sample, end: state.end, stopped: { [weak reader] in
                    reader.map { $0.status == .cancelled || $0.failed } ?? true
                }) ?? []
            } catch {
                // A handler's wait given up because reading was cancelled: the reader's status
                // stays cancelled, as Apple's, with no error.
                if error.code != .cancelled || reader.status != .cancelled { reader.fail(error) }
                return nil
            }
        }
        guard !state.pending.isEmpty else { return nil }
        return CMSampleBuffer(sample: state.pending.removeFirst())
    }

    /// The drawing of `composition`, checked against the track's asset.
    private func effects(_ composition: AVVideoComposition?) throws(GraphError) -> CompositionEffects {
        guard let composition else {
            throw GraphError(.usage, at: "videoComposition", "an AVAssetReaderVideoCompositionOutput draws by its videoComposition: set one before startReading()")
        }
        let value = try composition.engineValue()
        if value.frameFilter != nil, (output?.outputSettings).map({ $0 != .pixels(.bgra) }) ?? false {
            throw GraphError(.usage, at: "videoSettings", "a CIFilter composition's frames are BGRA: ask for kCVPixelFormatType_32BGRA (the default)")
        }
        let track = videoTracks[0]
        try value.check(duration: try end(), trackIDs: Set(videoTracks.map { Int($0.trackID) }))
        let start = reader?.timeRange.mediaTimeRange?.start ?? .zero
        return CompositionEffects(offset: .zero, from: start, video: (value, trackID: Int(track.trackID)))
    }

    /// Where the frames stop: the reader's range's end, else the asset's.
    private func end() throws(GraphError) -> MediaTime {
        if let range = reader?.timeRange.mediaTimeRange, range.duration.isFinite { return range.end }
        guard let asset = videoTracks.first?.asset, let duration = (try? asset.loadedDuration())?.mediaTime else {
            throw GraphError(.usage, at: "videoTracks", "the track's asset is gone or unreadable")
        }
        return duration
    }
}
