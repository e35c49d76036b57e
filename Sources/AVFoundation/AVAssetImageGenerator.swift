import Assets
import Dispatch
@_spi(Engine) import GraphKitCore

/// Pictures of an asset's video at given times, as AVFoundation's: over GraphKit's
/// `AssetImageGenerator` (each picture found by seeking; the default tolerances give the
/// keyframe nearest the time, `.zero` both the frame showing at the time, with `actualTime` that
/// frame's own time), in the file's colours (its matrix, range and chroma siting).
///
/// Images are `CGImage`s of 8-bit BGRA (see `CGImage`: Linux has no CoreGraphics, and this one
/// is read-only: its size, layout and bytes).
open class AVAssetImageGenerator: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its asset is let, its generator made once under a Mutex.
    /// What ``generateCGImagesAsynchronously(forTimes:completionHandler:)`` says of each time.
    public enum Result: Int, Sendable {
        case succeeded = 0, failed = 1, cancelled = 2
    }

    public let asset: AVAsset
    private let state = Guarded<(generator: AssetImageGenerator?, failure: NSError?)>((nil, nil))
    private let settings = Guarded<(size: CGSize, before: CMTime, after: CMTime, transform: Bool, composition: AVVideoComposition?)>(
        (.zero, .positiveInfinity, .positiveInfinity, false, nil))
    /// Where asynchronous requests are made, one at a time, in order.
    private let queue = DispatchQueue(label: "graphkit.av-asset-image-generator")

    public init(asset: AVAsset) {
        self.asset = asset
    }

    /// The largest image wanted; `.zero` (the default) gives frames at their size.
    public var maximumSize: CGSize {
        get { settings.withLock { $0.size } }
        set { settings.withLock { $0.size = newValue } }
    }

    public var requestedTimeToleranceBefore: CMTime {
        get { settings.withLock { $0.before } }
        set { settings.withLock { $0.before = newValue } }
    }

    public var requestedTimeToleranceAfter: CMTime {
        get { settings.withLock { $0.after } }
        set { settings.withLock { $0.after = newValue } }
    }

    public var appliesPreferredTrackTransform: Bool {
        get { settings.withLock { $0.transform } }
        set { settings.withLock { $0.transform = newValue } }
    }

    /// How each image is drawn, as a composition's export draws the frame of that time (its
    /// instructions, or its CIFilter handler); then fitted into ``maximumSize``. The preferred
    /// transform is the composition's to apply (``appliesPreferredTrackTransform`` is not used).
    public var videoComposition: AVVideoComposition? {
        get { settings.withLock { $0.composition } }
        set { settings.withLock { $0.composition = newValue?.copy() as? AVVideoComposition } }
    }

    /// The image at `requestedTime`; the time of the frame it is goes to `actualTime`. Throws an
    /// `NSError` in `AVFoundationErrorDomain` naming the file and the time.
    open func copyCGImage(at requestedTime: CMTime, actualTime: UnsafeMutablePointer<CMTime>?) throws -> CGImage {
        let (image, time) = try makeImage(at: requestedTime)
        actualTime?.pointee = time
        return image
    }

    /// The image at `time` and the time of the frame it is.
    open func image(at time: CMTime) async throws -> (image: CGImage, actualTime: CMTime) {
        let (generator, request) = try configured()
        guard let t = time.mediaTime, time.isNumeric else { throw invalidTime(time) }
        do {
            let (frame, actual) = try await generator.image(at: t)
            return (try await picture(frame, at: actual, request), CMTime(actual))
        } catch {
            throw avError(error)
        }
    }

    /// Makes an image for each time, in order, and calls `handler` with each: the requested
    /// time, the image, the frame's time, the result, and the error of a failed one. Times are
    /// `NSValue(time:)`.
    open func generateCGImagesAsynchronously(forTimes requestedTimes: [NSValue],
                                             completionHandler handler: @escaping AVAssetImageGeneratorCompletionHandler) {
        let times = requestedTimes.map(\.timeValue)
        let cancels = cancelCount.withLock { $0 }
        queue.async { [self] in
            for time in times {
                if cancelCount.withLock({ $0 }) != cancels {
                    handler(time, nil, .invalid, .cancelled, nil)
                    continue
                }
                do {
                    let (image, actual) = try makeImage(at: time, cancels: cancels)
                    handler(time, image, actual, .succeeded, nil)
                } catch {
                    let e = error as NSError
                    if (e.userInfo[NSUnderlyingErrorKey] as? GraphError)?.code == .cancelled {
                        handler(time, nil, .invalid, .cancelled, nil)
                    } else {
                        handler(time, nil, .invalid, .failed, e)
                    }
                }
            }
        }
    }

    /// Makes the image for `requestedTime` and calls `handler` with it and the frame's time, or
    /// with the error (an `NSError` in `AVFoundationErrorDomain`), on a queue of the generator's.
    open func generateCGImageAsynchronously(for requestedTime: CMTime,
                                            completionHandler handler: @escaping @Sendable (CGImage?, CMTime, (any Error)?) -> Void) {
        queue.async { [self] in
            do {
                let (image, actual) = try makeImage(at: requestedTime)
                handler(image, actual, nil)
            } catch {
                handler(nil, .invalid, error)
            }
        }
    }

    /// The images at `times`, one element a time in the order given, each made when the loop
    /// asks for it (GraphKit's `images(for:)`: one pipeline of the file, sought from time to
    /// time): a time that fails (past the end, not numeric) gives its error and the next goes
    /// on. ``cancelAllCGImageGeneration()`` makes the rest fail as cancelled.
    public func images(for times: [CMTime]) -> Images {
        let made = Swift.Result { try configured() }
        return Images(times: times, generator: made.map(\.0)) { [self] frame, actual in
            guard case .success(let (_, request)) = made else { throw avError(.unknown, "the generator could not be made") }
            return try await picture(frame, at: actual, request)
        }
    }

    /// An asynchronous sequence of images, as AVFoundation's: each element the requested time
    /// and the image with the time of its frame, or the error.
    public struct Images: AsyncSequence, AsyncIteratorProtocol {
        public enum Element {
            case success(requestedTime: CMTime, image: CGImage, actualTime: CMTime)
            case failure(requestedTime: CMTime, error: any Error)

            public var requestedTime: CMTime {
                switch self {
                case .success(let t, _, _), .failure(let t, _): t
                }
            }

            /// The image; throws the error of a failed request.
            public var image: CGImage {
                get throws {
                    switch self {
                    case .success(_, let image, _): image
                    case .failure(_, let error): throw error
                    }
                }
            }

            /// The time of the image's frame; throws the error of a failed request.
            public var actualTime: CMTime {
                get throws {
                    switch self {
                    case .success(_, _, let t): t
                    case .failure(_, let error): throw error
                    }
                }
            }
        }

        private let times: [CMTime]
        private var next = 0
        private let generator: Swift.Result<AssetImageGenerator, any Error>
        /// GraphKit's pictures of the numeric times, in order.
        private var pictures: AsyncStream<AssetImageGenerator.Element>.AsyncIterator?
        /// A frame as its image (drawn by the generator's composition, when it has one).
        private let picture: @Sendable (SampleBuffer, MediaTime) async throws -> CGImage

        init(times: [CMTime], generator: Swift.Result<AssetImageGenerator, any Error>,
             picture: @escaping @Sendable (SampleBuffer, MediaTime) async throws -> CGImage) {
            self.times = times
            self.generator = generator
            self.picture = picture
            if case .success(let g) = generator {
                pictures = g.images(for: times.compactMap { $0.isNumeric ? $0.mediaTime : nil }).makeAsyncIterator()
            }
        }

        public func makeAsyncIterator() -> Images { self }

        public mutating func next() async -> Element? {
            guard next < times.count else { return nil }
            let time = times[next]
            next += 1
            guard time.isNumeric, time.mediaTime != nil else {
                return .failure(requestedTime: time, error: avError(.operationNotAllowed, "cannot make an image at \(time): a requested time is a numeric time"))
            }
            guard case .success = generator else {
                if case .failure(let error) = generator { return .failure(requestedTime: time, error: error) }
                return nil
            }
            guard let element = await pictures?.next() else {
                return .failure(requestedTime: time, error: avError(.unknown, "the images ended before \(time)"))
            }
            do {
                let (frame, actual) = try element.result.get()
                return .success(requestedTime: time, image: try await picture(frame, actual), actualTime: CMTime(actual))
            } catch {
                return .failure(requestedTime: time, error: avError(error))
            }
        }
    }

    private let cancelCount = Guarded(0)

    /// Cancels every image being made or asked for: their handlers are called with `.cancelled`.
    open func cancelAllCGImageGeneration() {
        cancelCount.withLock { $0 += 1 }
        state.withLock { $0.generator }?.cancelAllImageGeneration()
    }

    // MARK: Underneath

    /// The image at `requestedTime`, on the caller's thread; `cancels`: the cancel count its
    /// request was made at (now, when nil).
    private func makeImage(at requestedTime: CMTime, cancels: Int? = nil) throws -> (CGImage, CMTime) {
        var (generator, request) = try configured()
        if let cancels { request.cancels = cancels }
        guard let t = requestedTime.mediaTime, requestedTime.isNumeric else { throw invalidTime(requestedTime) }
        do {
            let (frame, actual) = try generator.image(at: t)
            return (try picture(frame, at: actual, request), CMTime(actual))
        } catch {
            throw avError(error)
        }
    }

    private func invalidTime(_ time: CMTime) -> NSError {
        avError(.operationNotAllowed, "cannot make an image at \(time): a requested time is a numeric time")
    }

    /// What a request is made with: the composition and size when it started, and the cancel
    /// count then (a cancel after it wakes a CIFilter handler's wait).
    struct Request: @unchecked Sendable {
        // Unchecked: the composition is a copy made when it was set, never changed.
        var composition: AVVideoComposition?
        var size: CGSize
        var cancels: Int
    }

    /// GraphKit's generator, made once, with the settings as they are now, and the request's.
    private func configured() throws -> (AssetImageGenerator, Request) {
        let generator = try state.withLock { s throws -> AssetImageGenerator in
            if let g = s.generator { return g }
            let g = AssetImageGenerator(asset: try asset.loaded())
            s.generator = g
            return g
        }
        let s = settings.withLock { $0 }
        // A composition draws the frame as stored (its layer turns it) and is fitted after.
        let drawn = s.composition != nil
        generator.maximumSize = drawn ? (0, 0) : (width: Self.pixels(s.size.width), height: Self.pixels(s.size.height))
        generator.requestedTimeToleranceBefore = Self.tolerance(s.before)
        generator.requestedTimeToleranceAfter = Self.tolerance(s.after)
        generator.appliesPreferredTrackTransform = drawn ? false : s.transform
        return (generator, Request(composition: s.composition, size: s.size, cancels: cancelCount.withLock { $0 }))
    }

    private static func pixels(_ v: CGFloat) -> Int { v.isFinite && v > 0 ? Int(v.rounded(.down)) : 0 }

    /// A tolerance: numeric as it is, an infinity or an invalid time infinite (AVFoundation's
    /// default is `.positiveInfinity`).
    private static func tolerance(_ t: CMTime) -> MediaTime {
        guard t.isNumeric, let m = t.mediaTime else { return .positiveInfinity }
        return m
    }

    /// The image of `frame` (the frame at `actual`): drawn by the request's composition when
    /// it has one; `stopped`: besides a cancel of every image, what else ends a handler's wait.
    private func picture(_ frame: SampleBuffer, at actual: MediaTime, _ request: Request,
                         stopped: @escaping @Sendable () -> Bool = { false }) throws -> CGImage {
        let shown = try request.composition.map { c throws -> SampleBuffer in
            do {
                return try drawn(frame, at: actual, by: c, fittedIn: request.size) { [self] in
                    stopped() || cancelCount.withLock { $0 } != request.cancels
                }
            } catch {
                throw avError(error)
            }
        } ?? frame
        guard let image = CGImage(bgra: shown) else { throw avError(.unknown, "the generator gave a picture that is not BGRA") }
        return image
    }

    /// ``picture(_:at:_:stopped:)`` for the asynchronous forms: a composition's drawing (which
    /// may wait for a CIFilter handler) on a queue of its own, never a Swift concurrency thread;
    /// cancelling the task ends the wait.
    private func picture(_ frame: SampleBuffer, at actual: MediaTime, _ request: Request) async throws -> CGImage {
        guard request.composition != nil else { return try picture(frame, at: actual, request, stopped: { false }) }
        let cancelled = Guarded(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<CGImage, any Error>) in
                Self.drawing.async { [self] in
                    c.resume(with: Swift.Result { try picture(frame, at: actual, request, stopped: { cancelled.withLock { $0 } }) })
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// Where the asynchronous forms draw compositions.
    private static let drawing = DispatchQueue(label: "graphkit.av-asset-image-generator.drawing", attributes: .concurrent)
}

extension NSValue {
    /// A time in an `NSValue`, as AVFoundation's `NSValue(time:)`, for
    /// `generateCGImagesAsynchronously(forTimes:)`. Foundation on Linux cannot box a struct in an
    /// NSValue: the time travels as a range (its value, and its timescale and flags), so
    /// `rangeValue` of one is meaningless; read it with `timeValue`.
    public convenience init(time: CMTime) {
        self.init(range: NSRange(location: Int(time.value), length: Int(UInt32(bitPattern: time.timescale)) | Int(time.flags.rawValue) << 32))
    }

    /// The time an `NSValue(time:)` holds.
    public var timeValue: CMTime {
        let r = rangeValue
        return CMTime(value: CMTimeValue(r.location), timescale: CMTimeScale(bitPattern: UInt32(truncatingIfNeeded: r.length)),
                      flags: CMTimeFlags(rawValue: UInt32(truncatingIfNeeded: r.length >> 32)), epoch: 0)
    }
}

/// What ``AVAssetImageGenerator/generateCGImagesAsynchronously(forTimes:completionHandler:)``
/// calls for each time: the requested time, the image, the frame's time, the result, the error.
public typealias AVAssetImageGeneratorCompletionHandler = @Sendable (CMTime, CGImage?, CMTime, AVAssetImageGenerator.Result, (any Error)?) -> Void
