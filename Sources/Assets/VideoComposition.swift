@_spi(Engine) import GraphKitCore

/// How a composition's video is drawn, as AVFoundation's `AVVideoComposition`: frames of
/// ``renderSize`` every ``frameDuration``, each made by the ``Instruction`` whose range holds its
/// time, from the layer of the track it shows: the frame as stored, cropped, moved by an affine
/// transform into the render's coordinates, at an opacity over the background colour. Each of
/// the three may change over time (set at a time, or ramped linearly across a range).
///
/// Times are the composition's (the export's range starts wherever it starts; the instructions
/// are looked up by composition time). Rendering is done by ``VideoCompositionRenderer`` on the
/// 4:2:0 frames an export encodes, between the reader and the encoder.
public struct VideoComposition: Sendable, Hashable {
    public var renderSize: (width: Int, height: Int) {
        get { (renderWidth, renderHeight) }
        set { (renderWidth, renderHeight) = newValue }
    }
    var renderWidth: Int
    var renderHeight: Int
    /// One output frame's length (`frameDuration`, 1/30 s for 30 frames a second).
    public var frameDuration: MediaTime
    public var instructions: [Instruction]
    /// Code that takes each frame as the instructions drew it and gives the frame to show
    /// (AVFoundation's `applyingCIFiltersWithHandler`); nil: the drawn frame is shown. Frames
    /// are then BGRA throughout.
    public var frameFilter: FrameFilter?
    /// One frame for each of the source's, at its time (AVFoundation's
    /// `sourceTrackIDForFrameTiming`), instead of one every ``frameDuration``: a variable frame
    /// rate (a phone's video) is kept as it is.
    public var followsSourceTiming = false

    public init(renderSize: (width: Int, height: Int), frameDuration: MediaTime, instructions: [Instruction],
                frameFilter: FrameFilter? = nil) {
        renderWidth = renderSize.width
        renderHeight = renderSize.height
        self.frameDuration = frameDuration
        self.instructions = instructions
        self.frameFilter = frameFilter
    }

    /// A frame's last step, done by the caller's code: given the frame drawn at the render size
    /// (BGRA), its composition time, and whether the reading has stopped (a filter that waits
    /// for code of its own must give up when it has), the frame to show, of the same size and
    /// format. Equal to itself only: two compositions with different filters are not the same.
    public final class FrameFilter: Sendable, Hashable {
        public typealias Apply = @Sendable (_ frame: SampleBuffer, _ compositionTime: MediaTime,
                                            _ stopped: @Sendable () -> Bool) throws(GraphError) -> SampleBuffer
        let apply: Apply
        public init(_ apply: @escaping Apply) { self.apply = apply }
        public static func == (a: FrameFilter, b: FrameFilter) -> Bool { a === b }
        public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    }

    /// What draws the frames of one range: the layers, front first, over the background.
    public struct Instruction: Sendable, Hashable {
        public var timeRange: MediaTimeRange
        /// Y′CbCr-free colour: red, green, blue from 0 to 1; black by default, as Apple's.
        public var backgroundColor: RGB
        public var layers: [Layer]
        public init(timeRange: MediaTimeRange, backgroundColor: RGB = .black, layers: [Layer]) {
            self.timeRange = timeRange
            self.backgroundColor = backgroundColor
            self.layers = layers
        }
    }

    /// One track's place in an instruction: its transform, crop and opacity over time.
    public struct Layer: Sendable, Hashable {
        public var trackID: Int
        public var transform: Timeline<LayerTransform>
        public var opacity: Timeline<Double>
        /// In the track's own (stored) pixel coordinates; nil: the whole frame.
        public var crop: Timeline<Rectangle>?
        public init(trackID: Int, transform: Timeline<LayerTransform> = Timeline(before: .identity),
                    opacity: Timeline<Double> = Timeline(before: 1), crop: Timeline<Rectangle>? = nil) {
            self.trackID = trackID
            self.transform = transform
            self.opacity = opacity
            self.crop = crop
        }
    }

    public struct RGB: Sendable, Hashable {
        public var red: Double, green: Double, blue: Double
        public init(red: Double, green: Double, blue: Double) { (self.red, self.green, self.blue) = (red, green, blue) }
        public static let black = RGB(red: 0, green: 0, blue: 0)
    }

    public struct Rectangle: Sendable, Hashable, Interpolable {
        public var x: Double, y: Double, width: Double, height: Double
        public init(x: Double, y: Double, width: Double, height: Double) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }
        public func interpolated(to other: Rectangle, at f: Double) -> Rectangle {
            Rectangle(x: x + (other.x - x) * f, y: y + (other.y - y) * f, width: width + (other.width - width) * f, height: height + (other.height - height) * f)
        }
        public var isFinite: Bool { [x, y, width, height].allSatisfy(\.isFinite) }
    }

    /// The render size an export encodes: even sides (4:2:0), at least 2.
    var encodedSize: (width: Int, height: Int) { (max(2, renderWidth & ~1), max(2, renderHeight & ~1)) }

    /// Refuses what cannot be drawn, naming it: a render size or frame duration out of range,
    /// instructions that overlap or leave a gap in `[0, duration)`, a value that is not a number.
    public func check(duration: MediaTime, trackIDs: Set<Int>) throws(GraphError) {
        guard (2...16_384).contains(renderWidth), (2...16_384).contains(renderHeight) else {
            throw GraphError(.usage, at: "videoComposition.renderSize", "\(renderWidth)x\(renderHeight) is not a size to render: each side from 2 to 16384")
        }
        guard frameDuration.isFinite, frameDuration > .zero, frameDuration >= MediaTime(value: 1, timescale: 1000) else {
            throw GraphError(.usage, at: "videoComposition.frameDuration", "\(frameDuration) is not a frame duration: give one from 1/1000 s up, such as CMTime(value: 1, timescale: 30)")
        }
        var end = MediaTime.zero
        for (i, instruction) in instructions.enumerated() {
            let at = "videoComposition.instructions[\(i)]"
            guard instruction.timeRange.start.isFinite, instruction.timeRange.duration.isFinite else {
                throw GraphError(.usage, at: "\(at).timeRange", "\(instruction.timeRange) is not a range of the composition")
            }
            guard instruction.timeRange.start == end else {
                throw GraphError(.usage, at: "\(at).timeRange", instruction.timeRange.start > end
                                 ? "the instructions leave \(end.seconds)–\(instruction.timeRange.start.seconds) s without one: they must follow each other from 0 with no gap"
                                 : "it starts at \(instruction.timeRange.start.seconds) s, inside the one before (which ends at \(end.seconds) s)")
            }
            end = instruction.timeRange.end
            for (j, layer) in instruction.layers.enumerated() {
                guard trackIDs.contains(layer.trackID) else {
                    throw GraphError(.usage, at: "\(at).layerInstructions[\(j)]", "track \(layer.trackID) is not a video track of the asset (it has \(trackIDs.sorted().map(String.init).joined(separator: ", ")))")
                }
                guard layer.transform.isFinite, layer.opacity.isFinite, layer.crop?.isFinite ?? true else {
                    throw GraphError(.usage, at: "\(at).layerInstructions[\(j)]", "a transform, opacity or crop of track \(layer.trackID) is not a finite number")
                }
            }
        }
        guard end >= duration else {
            throw GraphError(.usage, at: "videoComposition.instructions", "the instructions end at \(end.seconds) s, before the composition does (\(duration.seconds) s): they must cover all of it")
        }
    }

    /// The layer of `trackID` drawn at `time`, with the background: nil layer where the time's
    /// instruction does not show the track (the frame is the background alone).
    func layer(of trackID: Int, at time: MediaTime) -> (layer: Layer?, background: RGB) {
        let instruction = instructions.first { $0.timeRange.start <= time && time < $0.timeRange.end } ?? instructions.last
        return (instruction?.layers.first { $0.trackID == trackID }, instruction?.backgroundColor ?? .black)
    }
}

/// A value that ramps linearly.
public protocol Interpolable: Sendable, Hashable {
    func interpolated(to other: Self, at fraction: Double) -> Self
    /// Whether every number in it is finite (a composition refuses a NaN or infinite value).
    var isFinite: Bool { get }
}

extension Interpolable {
    /// True unless a conforming type says otherwise (a value of numbers says whether each is).
    public var isFinite: Bool { true }
}

extension Double: Interpolable {
    public func interpolated(to other: Double, at f: Double) -> Double { self + (other - self) * f }
}

/// A value over time, as a layer instruction's `setOpacity(_:at:)` and
/// `setOpacityRamp(fromStartOpacity:toEndOpacity:timeRange:)` build it: before the first point
/// the value is `before`; from a set point on, its value until the next; within a ramp, linear
/// from its start to its end value; after the last, the last value.
public struct Timeline<Value: Interpolable>: Sendable, Hashable {
    public struct Point: Sendable, Hashable {
        public var range: MediaTimeRange
        public var start: Value
        public var end: Value
    }
    public let before: Value
    public private(set) var points: [Point] = []

    public init(before: Value) { self.before = before }

    /// `value` from `time` on.
    public mutating func set(_ value: Value, at time: MediaTime) {
        insert(Point(range: MediaTimeRange(start: time, duration: .zero), start: value, end: value))
    }

    /// From `start` to `end` across `range`, then `end`.
    public mutating func ramp(from start: Value, to end: Value, over range: MediaTimeRange) {
        insert(Point(range: range, start: start, end: end))
    }

    private mutating func insert(_ point: Point) {
        points.removeAll { $0.range.start == point.range.start }
        points.append(point)
        points.sort { $0.range.start < $1.range.start }
    }

    /// The value at `time`.
    public func value(at time: MediaTime) -> Value {
        guard let i = points.lastIndex(where: { $0.range.start <= time }) else { return before }
        let p = points[i]
        guard time < p.range.end && p.range.duration > .zero else { return p.end }
        let f = (time - p.range.start).seconds / p.range.duration.seconds
        return p.start.interpolated(to: p.end, at: min(1, max(0, f)))
    }

    /// The point in effect at `time` (a ramp's start and end values and range, or a value set
    /// at a time), as `getOpacityRamp(for:startOpacity:endOpacity:timeRange:)` reports it; nil
    /// before the first.
    public func ramp(at time: MediaTime) -> Point? {
        points.last { $0.range.start <= time }
    }
}

extension Timeline {
    /// Whether every value it takes is finite.
    var isFinite: Bool { before.isFinite && points.allSatisfy { $0.start.isFinite && $0.end.isFinite } }
}

/// A 2-D affine transform as CoreGraphics' `CGAffineTransform`: a point (x, y) goes to
/// (a·x + c·y + tx, b·x + d·y + ty).
public struct LayerTransform: Sendable, Hashable, Interpolable {
    public var a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double
    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }
    public static let identity = LayerTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    public var isFinite: Bool { [a, b, c, d, tx, ty].allSatisfy(\.isFinite) }

    /// Its inverse; nil when it flattens the plane (no picture can be drawn through it).
    var inverted: LayerTransform? {
        let det = a * d - b * c
        guard det.isFinite, abs(det) > 1e-12 else { return nil }
        return LayerTransform(a: d / det, b: -b / det, c: -c / det, d: a / det,
                               tx: (c * ty - d * tx) / det, ty: (b * tx - a * ty) / det)
    }

    /// Element by element, as AVFoundation ramps a transform.
    public func interpolated(to o: LayerTransform, at f: Double) -> LayerTransform {
        LayerTransform(a: a + (o.a - a) * f, b: b + (o.b - b) * f, c: c + (o.c - c) * f, d: d + (o.d - d) * f,
                        tx: tx + (o.tx - tx) * f, ty: ty + (o.ty - ty) * f)
    }
}
