@_spi(Engine) import Assets
@_spi(Engine) import GraphKitCore

/// What draws one range of a video composition, as AVFoundation's protocol.
public protocol AVVideoCompositionInstructionProtocol: AnyObject {
    var timeRange: CMTimeRange { get }
    var enablePostProcessing: Bool { get }
    var containsTweening: Bool { get }
    var requiredSourceTrackIDs: [NSValue]? { get }
    var passthroughTrackID: CMPersistentTrackID { get }
}

/// How a composition's video is drawn, as AVFoundation's `AVVideoComposition`: frames of
/// ``renderSize`` every ``frameDuration``, each by the instruction whose range holds its time.
/// Applied by `AVAssetExportSession.videoComposition` (and read back as set). GraphKit draws
/// one video track: each instruction shows the layer of the track the export encodes, cropped,
/// transformed (a move, a turn, a scale) and faded over the background; the layers of other
/// tracks are checked but not drawn (an export re-encodes one video track).
open class AVVideoComposition: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; its values are set before it is given to an export,
    // which copies them (as Apple's properties copy).
    public internal(set) var frameDuration: CMTime
    public internal(set) var renderSize: CGSize
    public internal(set) var renderScale: Float = 1
    public internal(set) var instructions: [any AVVideoCompositionInstructionProtocol]
    public internal(set) var sourceTrackIDForFrameTiming: CMPersistentTrackID = kCMPersistentTrackID_Invalid
    /// The CIFilter handler of a composition made by ``init(asset:applyingCIFiltersWithHandler:)``.
    var filterApplier: (@Sendable (AVAsynchronousCIImageFilteringRequest) -> Void)?

    init(frameDuration: CMTime, renderSize: CGSize, instructions: [any AVVideoCompositionInstructionProtocol]) {
        self.frameDuration = frameDuration
        self.renderSize = renderSize
        self.instructions = instructions
    }

    /// An immutable composition with this one's values (NSCopying's `copy()`): changing a mutable
    /// original afterwards does not change it. The instructions are shared, as Apple's copy shares them.
    open func copy() -> Any { copyValues(into: AVVideoComposition(frameDuration: frameDuration, renderSize: renderSize, instructions: instructions)) }

    /// A mutable composition with this one's values (NSMutableCopying's `mutableCopy()`).
    open func mutableCopy() -> Any { copyValues(into: AVMutableVideoComposition()) }

    private func copyValues<C: AVVideoComposition>(into c: C) -> C {
        c.frameDuration = frameDuration
        c.renderSize = renderSize
        c.renderScale = renderScale
        c.instructions = instructions
        c.sourceTrackIDForFrameTiming = sourceTrackIDForFrameTiming
        c.filterApplier = filterApplier
        return c
    }

    /// The composition that shows `asset` as it is: its first video track's natural size turned
    /// by its preferred transform, at its frame rate (30 frames a second when it states none),
    /// one instruction over the whole asset whose layer applies the track's preferred transform.
    public convenience init(propertiesOf asset: AVAsset) {
        self.init(frameDuration: .invalid, renderSize: .zero, instructions: [])
        adopt(propertiesOf: asset)
    }

    /// ``init(propertiesOf:)``, as iOS 16's asynchronous form.
    open class func videoComposition(withPropertiesOf asset: AVAsset) async throws -> AVVideoComposition {
        _ = try await asset.load(.tracks)
        return AVVideoComposition(propertiesOf: asset)
    }

    /// A composition that hands each frame of `asset`'s first video track to `applier` as a
    /// `CIImage`, and shows the image the handler finishes with: ``init(propertiesOf:)``'s
    /// render size and frame rate, the frame upright (its preferred transform applied) at the
    /// render size, BGRA. The handler may finish at once or later, on any thread; reading waits
    /// for it, and gives up when the export or reader is cancelled.
    public convenience init(asset: AVAsset, applyingCIFiltersWithHandler applier: @escaping @Sendable (AVAsynchronousCIImageFilteringRequest) -> Void) {
        self.init(propertiesOf: asset)
        filterApplier = applier
    }

    /// ``init(asset:applyingCIFiltersWithHandler:)``, as iOS 16's asynchronous form.
    open class func videoComposition(with asset: AVAsset, applyingCIFiltersWithHandler applier: @escaping @Sendable (AVAsynchronousCIImageFilteringRequest) -> Void) async throws -> AVVideoComposition {
        _ = try await asset.load(.tracks)
        return AVVideoComposition(asset: asset, applyingCIFiltersWithHandler: applier)
    }

    /// ``init(asset:applyingCIFiltersWithHandler:)``, with a completion handler.
    open class func videoComposition(with asset: AVAsset, applyingCIFiltersWithHandler applier: @escaping @Sendable (AVAsynchronousCIImageFilteringRequest) -> Void,
                                     completionHandler: @escaping @Sendable (AVVideoComposition?, (any Error)?) -> Void) {
        asset.loadValuesAsynchronously(forKeys: ["tracks"]) {
            completionHandler(AVVideoComposition(asset: asset, applyingCIFiltersWithHandler: applier), nil)
        }
    }

    /// Apple's rules: one video track gives its own timing (``sourceTrackIDForFrameTiming``,
    /// its shortest frame as `frameDuration`); more give the highest nominal rate; none 30 fps.
    func adopt(propertiesOf asset: AVAsset) {
        let videoTracks = (try? asset.loadedTracks())?.filter { $0.mediaType == .video } ?? []
        let track = videoTracks.first
        let transform = track?.transform ?? .identity
        let natural = track?.size ?? .zero
        let turned = natural.applying(transform)
        renderSize = CGSize(width: abs(turned.width), height: abs(turned.height))
        let rate = videoTracks.map { $0.frameRate }.max() ?? 0
        frameDuration = rate > 0 ? CMTimeMakeWithSeconds(1 / Double(rate), preferredTimescale: 600) : CMTime(value: 1, timescale: 30)
        if videoTracks.count == 1, let track {
            sourceTrackIDForFrameTiming = track.trackID
            if track.shortestFrame.isNumeric, track.shortestFrame > .zero { frameDuration = track.shortestFrame }
        }
        let duration = (try? asset.loadedDuration()) ?? .zero
        let instruction = AVMutableVideoCompositionInstruction()
        instruction.timeRange = CMTimeRange(start: .zero, duration: duration)
        if let track {
            let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
            layer.setTransform(transform, at: .zero)
            instruction.layerInstructions = [layer]
        }
        instructions = [instruction]
    }

    /// GraphKit's value of it, as an export draws it; refused, naming the place, where a time is
    /// not a number or an instruction is not one of AVFoundation's own classes.
    func engineValue() throws(GraphError) -> VideoComposition {
        guard let duration = frameDuration.mediaTime, duration > .zero else {
            throw GraphError(.usage, at: "videoComposition.frameDuration", "\(frameDuration) is not a frame duration: set one such as CMTime(value: 1, timescale: 30)")
        }
        guard renderSize.width.isFinite, renderSize.height.isFinite, renderSize.width >= 1, renderSize.height >= 1 else {
            throw GraphError(.usage, at: "videoComposition.renderSize", "\(renderSize) is not a size to render: set renderSize")
        }
        var converted: [VideoComposition.Instruction] = []
        for (i, any) in instructions.enumerated() {
            guard let instruction = any as? AVVideoCompositionInstruction, let range = instruction.timeRange.mediaTimeRange else {
                throw GraphError(.usage, at: "videoComposition.instructions[\(i)]",
                                 "an instruction must be an AVVideoCompositionInstruction with a numeric timeRange (GraphKit has no custom compositors)")
            }
            let rgb = instruction.backgroundColor?.rgb ?? (red: 0, green: 0, blue: 0)
            converted.append(VideoComposition.Instruction(timeRange: range, backgroundColor: .init(red: rgb.red, green: rgb.green, blue: rgb.blue),
                                                          layers: instruction.layerInstructions.map(\.layer)))
        }
        var value = VideoComposition(renderSize: (Int(renderSize.width.rounded()), Int(renderSize.height.rounded())), frameDuration: duration,
                                     instructions: converted, frameFilter: filterApplier.map(AVAsynchronousCIImageFilteringRequest.frameFilter))
        value.followsSourceTiming = sourceTrackIDForFrameTiming != kCMPersistentTrackID_Invalid
        return value
    }
}

/// A video composition being put together, as AVFoundation's `AVMutableVideoComposition`.
open class AVMutableVideoComposition: AVVideoComposition, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires.
    public init() { super.init(frameDuration: .invalid, renderSize: .zero, instructions: []) }

    /// ``AVVideoComposition/init(propertiesOf:)``, mutable.
    public convenience init(propertiesOf asset: AVAsset) {
        self.init()
        adopt(propertiesOf: asset)
    }

    open override class func videoComposition(withPropertiesOf asset: AVAsset) async throws -> AVMutableVideoComposition {
        _ = try await asset.load(.tracks)
        return AVMutableVideoComposition(propertiesOf: asset)
    }

    /// ``AVVideoComposition/init(asset:applyingCIFiltersWithHandler:)``, mutable.
    public convenience init(asset: AVAsset, applyingCIFiltersWithHandler applier: @escaping @Sendable (AVAsynchronousCIImageFilteringRequest) -> Void) {
        self.init(propertiesOf: asset)
        filterApplier = applier
    }

    open override class func videoComposition(with asset: AVAsset, applyingCIFiltersWithHandler applier: @escaping @Sendable (AVAsynchronousCIImageFilteringRequest) -> Void) async throws -> AVMutableVideoComposition {
        _ = try await asset.load(.tracks)
        return AVMutableVideoComposition(asset: asset, applyingCIFiltersWithHandler: applier)
    }

    public override var frameDuration: CMTime {
        get { super.frameDuration }
        set { super.frameDuration = newValue }
    }
    public override var renderSize: CGSize {
        get { super.renderSize }
        set { super.renderSize = newValue }
    }
    public override var renderScale: Float {
        get { super.renderScale }
        set { super.renderScale = newValue }
    }
    public override var instructions: [any AVVideoCompositionInstructionProtocol] {
        get { super.instructions }
        set { super.instructions = newValue }
    }
    public override var sourceTrackIDForFrameTiming: CMPersistentTrackID {
        get { super.sourceTrackIDForFrameTiming }
        set { super.sourceTrackIDForFrameTiming = newValue }
    }
}

/// One range of a video composition and the layers drawn in it, as AVFoundation's.
open class AVVideoCompositionInstruction: AVVideoCompositionInstructionProtocol, @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; set up before the composition is given to an export.
    public internal(set) var timeRange: CMTimeRange = .invalid
    /// Nil: black, as AVFoundation's.
    public internal(set) var backgroundColor: CGColor?
    /// Front first.
    public internal(set) var layerInstructions: [AVVideoCompositionLayerInstruction] = []
    public internal(set) var enablePostProcessing = true
    public var containsTweening: Bool { true }
    public var requiredSourceTrackIDs: [NSValue]? { nil }
    public var passthroughTrackID: CMPersistentTrackID { kCMPersistentTrackID_Invalid }
    init() {}
}

open class AVMutableVideoCompositionInstruction: AVVideoCompositionInstruction, @unchecked Sendable {
    public override init() { super.init() }
    public override var timeRange: CMTimeRange {
        get { super.timeRange }
        set { super.timeRange = newValue }
    }
    public override var backgroundColor: CGColor? {
        get { super.backgroundColor }
        set { super.backgroundColor = newValue }
    }
    public override var layerInstructions: [AVVideoCompositionLayerInstruction] {
        get { super.layerInstructions }
        set { super.layerInstructions = newValue }
    }
    public override var enablePostProcessing: Bool {
        get { super.enablePostProcessing }
        set { super.enablePostProcessing = newValue }
    }
}

/// How one track is drawn in an instruction, as AVFoundation's: its transform, opacity and crop
/// over time. Before the first value set, the transform is the identity, the opacity 1 and the
/// crop the whole frame; a value set at a time holds until the next; a ramp changes linearly.
open class AVVideoCompositionLayerInstruction: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; set up before its composition is given to an export.
    public internal(set) var trackID: CMPersistentTrackID
    var layer: VideoComposition.Layer

    init(trackID: CMPersistentTrackID) {
        self.trackID = trackID
        layer = VideoComposition.Layer(trackID: Int(trackID))
    }

    /// The transform ramp in effect at `time`; false before the first value set.
    public func getTransformRamp(for time: CMTime, start startTransform: UnsafeMutablePointer<CGAffineTransform>?,
                                 end endTransform: UnsafeMutablePointer<CGAffineTransform>?, timeRange: UnsafeMutablePointer<CMTimeRange>?) -> Bool {
        rampReport(layer.transform, at: time, startTransform, endTransform, timeRange, CGAffineTransform.init)
    }

    /// The opacity ramp in effect at `time`; false before the first value set.
    public func getOpacityRamp(for time: CMTime, startOpacity: UnsafeMutablePointer<Float>?, endOpacity: UnsafeMutablePointer<Float>?,
                               timeRange: UnsafeMutablePointer<CMTimeRange>?) -> Bool {
        rampReport(layer.opacity, at: time, startOpacity, endOpacity, timeRange) { Float($0) }
    }

    /// The crop ramp in effect at `time`; false before the first value set.
    public func getCropRectangleRamp(for time: CMTime, startCropRectangle: UnsafeMutablePointer<CGRect>?,
                                     endCropRectangle: UnsafeMutablePointer<CGRect>?, timeRange: UnsafeMutablePointer<CMTimeRange>?) -> Bool {
        rampReport(layer.crop, at: time, startCropRectangle, endCropRectangle, timeRange, CGRect.init)
    }
}

open class AVMutableVideoCompositionLayerInstruction: AVVideoCompositionLayerInstruction, @unchecked Sendable {
    public init() { super.init(trackID: kCMPersistentTrackID_Invalid) }

    /// The layer of `track`.
    public convenience init(assetTrack track: AVAssetTrack) {
        self.init()
        trackID = track.trackID
    }

    public override var trackID: CMPersistentTrackID {
        get { super.trackID }
        set {
            super.trackID = newValue
            layer.trackID = Int(newValue)
        }
    }

    /// `transform` from `time` on. A time that is not a number changes nothing.
    public func setTransform(_ transform: CGAffineTransform, at time: CMTime) {
        guard let t = time.mediaTime else { return }
        layer.transform.set(LayerTransform(transform), at: t)
    }

    /// From `startTransform` to `endTransform` across `timeRange`, element by element.
    public func setTransformRamp(fromStart startTransform: CGAffineTransform, toEnd endTransform: CGAffineTransform, timeRange: CMTimeRange) {
        guard let r = timeRange.mediaTimeRange else { return }
        layer.transform.ramp(from: LayerTransform(startTransform), to: LayerTransform(endTransform), over: r)
    }

    /// `opacity` (0 transparent, 1 opaque) from `time` on.
    public func setOpacity(_ opacity: Float, at time: CMTime) {
        guard let t = time.mediaTime else { return }
        layer.opacity.set(Double(opacity), at: t)
    }

    /// From `startOpacity` to `endOpacity` across `timeRange`: a fade.
    public func setOpacityRamp(fromStartOpacity startOpacity: Float, toEndOpacity endOpacity: Float, timeRange: CMTimeRange) {
        guard let r = timeRange.mediaTimeRange else { return }
        layer.opacity.ramp(from: Double(startOpacity), to: Double(endOpacity), over: r)
    }

    /// Only `cropRectangle` of the track's frames (in their stored pixels) is drawn, from `time`.
    public func setCropRectangle(_ cropRectangle: CGRect, at time: CMTime) {
        guard let t = time.mediaTime else { return }
        layer.crop = (layer.crop ?? Timeline(before: .whole)).with { $0.set(VideoComposition.Rectangle(cropRectangle), at: t) }
    }

    public func setCropRectangleRamp(fromStartCropRectangle startCropRectangle: CGRect, toEndCropRectangle endCropRectangle: CGRect, timeRange: CMTimeRange) {
        guard let r = timeRange.mediaTimeRange else { return }
        layer.crop = (layer.crop ?? Timeline(before: .whole)).with {
            $0.ramp(from: VideoComposition.Rectangle(startCropRectangle), to: VideoComposition.Rectangle(endCropRectangle), over: r)
        }
    }
}

/// What the `get…Ramp(for:…)` calls report: the point of `timeline` in effect at `time`, its
/// start and end values (as `convert` makes them) and its range; false before the first.
func rampReport<V, T>(_ timeline: Timeline<V>?, at time: CMTime, _ start: UnsafeMutablePointer<T>?, _ end: UnsafeMutablePointer<T>?,
                      _ range: UnsafeMutablePointer<CMTimeRange>?, _ convert: (V) -> T) -> Bool {
    guard let t = time.mediaTime, let point = timeline?.ramp(at: t) else { return false }
    start?.pointee = convert(point.start)
    end?.pointee = convert(point.end)
    range?.pointee = CMTimeRange(point.range)
    return true
}

extension LayerTransform {
    init(_ t: CGAffineTransform) { self.init(a: Double(t.a), b: Double(t.b), c: Double(t.c), d: Double(t.d), tx: Double(t.tx), ty: Double(t.ty)) }
}

extension CGAffineTransform {
    init(_ t: LayerTransform) { self.init(a: t.a, b: t.b, c: t.c, d: t.d, tx: t.tx, ty: t.ty) }
}

extension VideoComposition.Rectangle {
    init(_ r: CGRect) { self.init(x: Double(r.origin.x), y: Double(r.origin.y), width: Double(r.size.width), height: Double(r.size.height)) }
    /// Before a crop is set: all of the frame, however large.
    static let whole = VideoComposition.Rectangle(x: -1e9, y: -1e9, width: 2e9, height: 2e9)
}

extension CGRect {
    init(_ r: VideoComposition.Rectangle) { self.init(x: r.x, y: r.y, width: r.width, height: r.height) }
}

extension Timeline {
    /// A copy changed by `change`.
    func with(_ change: (inout Timeline) -> Void) -> Timeline {
        var copy = self
        change(&copy)
        return copy
    }
}
