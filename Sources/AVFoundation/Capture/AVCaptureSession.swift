import GraphKitCore

/// Connects capture inputs to outputs and runs them, as AVFoundation's: underneath, one graph
/// (`capture.video` → [`effect.rotate`] → [`effect.mirror`] → `sink.app`, `capture.audio` →
/// `sink.app`) whose samples a thread per media kind hands to the outputs as `CMSampleBuffer`s,
/// timed on the graph's clock (video and audio on one clock, rising).
///
/// One input of each kind, and at most one output of each class (a video data output, an audio
/// data output, a movie file output): what Apple allows on most devices. One video branch feeds
/// every video output: its pixel format is the video data output's (BGRA when there is none), its
/// size the output's `videoSettings` width and height when given, else the preset's, and its
/// orientation and mirroring those of the video data output's connection (else the movie
/// output's). Changes made while running apply when `commitConfiguration` is called (or at once,
/// outside a configuration block) by restarting the graph.
///
/// `startRunning` blocks until capture runs (as Apple's: call it off the main thread); a failure
/// then, or later, posts `.AVCaptureSessionRuntimeError` with the error under
/// `AVCaptureSessionErrorKey`, and the session stops. `stopRunning` returns within a second,
/// and no delegate callback starts after it returns.
open class AVCaptureSession: NSObject, @unchecked Sendable {
    // Unchecked: its state is under `state`'s lock; NSObject's conformance cannot be checked.

    public struct Preset: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let photo = Preset(rawValue: "AVCaptureSessionPresetPhoto")
        public static let high = Preset(rawValue: "AVCaptureSessionPresetHigh")
        public static let medium = Preset(rawValue: "AVCaptureSessionPresetMedium")
        public static let low = Preset(rawValue: "AVCaptureSessionPresetLow")
        public static let qvga320x240 = Preset(rawValue: "AVCaptureSessionPreset320x240")
        public static let cif352x288 = Preset(rawValue: "AVCaptureSessionPreset352x288")
        public static let vga640x480 = Preset(rawValue: "AVCaptureSessionPreset640x480")
        public static let qHD960x540 = Preset(rawValue: "AVCaptureSessionPreset960x540")
        public static let iFrame960x540 = Preset(rawValue: "AVCaptureSessionPresetiFrame960x540")
        public static let hd1280x720 = Preset(rawValue: "AVCaptureSessionPreset1280x720")
        public static let iFrame1280x720 = Preset(rawValue: "AVCaptureSessionPresetiFrame1280x720")
        public static let hd1920x1080 = Preset(rawValue: "AVCaptureSessionPreset1920x1080")
        public static let hd4K3840x2160 = Preset(rawValue: "AVCaptureSessionPreset3840x2160")
        public static let inputPriority = Preset(rawValue: "AVCaptureSessionPresetInputPriority")

        /// The frame size this preset asks for; nil: the device's active format.
        var size: (width: Int, height: Int)? {
            switch self {
            case .low: (192, 144)
            case .medium: (480, 360)
            case .qvga320x240: (320, 240)
            case .cif352x288: (352, 288)
            case .vga640x480: (640, 480)
            case .qHD960x540, .iFrame960x540: (960, 540)
            case .hd1280x720, .iFrame1280x720: (1280, 720)
            case .hd1920x1080: (1920, 1080)
            case .hd4K3840x2160: (3840, 2160)
            default: nil
            }
        }
        static let all: [Preset] = [.photo, .high, .medium, .low, .qvga320x240, .cif352x288, .vga640x480, .qHD960x540, .iFrame960x540,
                                    .hd1280x720, .iFrame1280x720, .hd1920x1080, .hd4K3840x2160, .inputPriority]
    }

    struct State {
        var preset = Preset.high
        var inputs: [AVCaptureInput] = []
        var outputs: [AVCaptureOutput] = []
        var configuring = 0
        var changed = false
        var run: CaptureRun?
        /// Why capture is interrupted (a device another program holds), while it is.
        var interruption: InterruptionReason?
        /// Counts starts and stops: a retry made for an earlier one does nothing.
        var attempt = 0
    }
    let state = Guarded(State())
    /// Starts, stops, restarts and retries, one at a time (a retry's graph is made while a
    /// stop waits, and the stop then wins).
    private let operations = DispatchQueue(label: "graphkit.AVCaptureSession.operations")
    /// Where the session's own notifications are posted from, in order.
    private let noticeQueue = DispatchQueue(label: "graphkit.AVCaptureSession.notifications")

    public override init() { super.init() }

    /// A session let go while running stops: its graph, threads and delegates' deliveries end.
    deinit {
        if let run = state.withLock({ $0.run }) {
            run.stop()
            for output in state.withLock({ $0.outputs }) { output.sessionDidChange(running: false) }
        }
    }

    // MARK: Preset

    open var sessionPreset: Preset {
        get { state.withLock { $0.preset } }
        set {
            guard canSetSessionPreset(newValue) else { return }
            state.withLock { $0.preset = newValue }
            configurationChanged()
        }
    }
    open func canSetSessionPreset(_ preset: Preset) -> Bool { Preset.all.contains(preset) }

    // MARK: Inputs and outputs

    open var inputs: [AVCaptureInput] { state.withLock { $0.inputs } }
    open var outputs: [AVCaptureOutput] { state.withLock { $0.outputs } }
    open var connections: [AVCaptureConnection] { outputs.flatMap(\.connections) }

    /// One input of each media kind.
    open func canAddInput(_ input: AVCaptureInput) -> Bool { state.withLock { Self.admits(input, $0) } }
    private static func admits(_ input: AVCaptureInput, _ s: State) -> Bool {
        !s.inputs.contains { $0 === input || $0.mediaType == input.mediaType }
    }
    open func addInput(_ input: AVCaptureInput) {
        // Checked and added under one lock: two threads adding at once cannot both pass.
        let added = state.withLock { s in
            guard Self.admits(input, s) else { return false }
            s.inputs.append(input)
            return true
        }
        guard added else { return }
        relink()
        configurationChanged()
    }
    open func removeInput(_ input: AVCaptureInput) {
        state.withLock { $0.inputs.removeAll { $0 === input } }
        relink()
        configurationChanged()
    }

    /// One output of each class, not in another session.
    open func canAddOutput(_ output: AVCaptureOutput) -> Bool { state.withLock { Self.admits(output, $0) } }
    private static func admits(_ output: AVCaptureOutput, _ s: State) -> Bool {
        !output.acceptedMediaTypes.isEmpty && !s.outputs.contains { $0 === output || type(of: $0) == type(of: output) }
    }
    open func addOutput(_ output: AVCaptureOutput) {
        let added = state.withLock { s in
            guard Self.admits(output, s) else { return false }
            s.outputs.append(output)
            return true
        }
        guard added else { return }
        relink()
        configurationChanged()
    }
    open func removeOutput(_ output: AVCaptureOutput) {
        let removed = state.withLock { s in
            defer { s.outputs.removeAll { $0 === output } }
            return s.outputs.contains { $0 === output }
        }
        if removed { output.linked.withLock { $0 = [] } }
        relink()
        configurationChanged()
    }

    /// Connections from every input to every output that takes its media (kept where they were,
    /// so their settings stay).
    private func relink() {
        let (inputs, outputs) = state.withLock { ($0.inputs, $0.outputs) }
        for output in outputs {
            output.linked.withLock { links in
                var kept: [AVCaptureConnection] = []
                for case let input as AVCaptureDeviceInput in inputs where output.acceptedMediaTypes.contains(input.mediaType) {
                    kept.append(links.first { $0.device === input.device } ??
                                AVCaptureConnection(mediaType: input.mediaType, device: input.device, output: output))
                }
                links = kept
            }
        }
    }

    // MARK: Configuration blocks

    open func beginConfiguration() { state.withLock { $0.configuring += 1 } }

    /// Applies the changes made since `beginConfiguration`: a running session restarts its graph.
    open func commitConfiguration() {
        let apply = state.withLock { s in
            s.configuring = max(0, s.configuring - 1)
            defer { if s.configuring == 0 { s.changed = false } }
            return s.configuring == 0 && s.changed && s.run != nil
        }
        if apply { restart() }
    }

    private func configurationChanged() {
        let apply = state.withLock { s in
            s.changed = true
            return s.configuring == 0 && s.run != nil
        }
        if apply {
            state.withLock { $0.changed = false }
            restart()
        }
    }

    private func restart() {
        operations.sync {
            post(stopCapture(), notify: false)
            post(startCapture(notify: false))
        }
    }

    // MARK: Running

    /// True from `startRunning()` to `stopRunning()`, a runtime error or an interruption (the
    /// session goes on by itself when the device is let go, and is running again then).
    open var isRunning: Bool { state.withLock { $0.run != nil && $0.interruption == nil } }
    /// True while a camera or microphone the session uses is held by another program: the
    /// session has posted `AVCaptureSessionWasInterrupted` and tries again each second.
    open var isInterrupted: Bool { state.withLock { $0.interruption != nil } }
    /// iOS's audio session switches: accepted, no effect (Linux has no application audio session).
    open var automaticallyConfiguresApplicationAudioSession = true
    open var usesApplicationAudioSession = true
    open var automaticallyConfiguresCaptureDeviceForWideColor = true

    /// Starts capture and returns once it runs (or has failed: see the class's discussion).
    /// During an interruption it tries at once (and the interruption goes on if the device is
    /// still held).
    open func startRunning() {
        operations.sync {
            guard !isRunning else { return Notices() }
            return startCapture(notify: true)
        }.post(from: self)
    }

    /// Stops capture: returns within a second, and no delegate callback starts after it
    /// returns; an interrupted session stops trying again.
    open func stopRunning() {
        operations.sync { stopCapture() }.post(from: self)
    }

    /// Notifications to post once an operation is done, outside `operations` (an observer may
    /// call `startRunning()` or `stopRunning()`).
    struct Notices: @unchecked Sendable {
        // Unchecked: the user infos hold an NSError or an Int, made here and never changed.
        var names: [(NSNotification.Name, [AnyHashable: Any]?)] = []
        static func + (a: Notices, b: Notices) -> Notices { Notices(names: a.names + b.names) }
        mutating func add(_ name: NSNotification.Name, _ info: [AnyHashable: Any]? = nil) { names.append((name, info)) }
        func post(from session: AVCaptureSession) {
            for (name, info) in names { NotificationCenter.default.post(name: name, object: session, userInfo: info) }
        }
    }

    /// Posts `notices` once the operation in hand is done (from a queue of their own when
    /// called on `operations` by the session itself).
    private func post(_ notices: Notices, notify: Bool = true) {
        guard notify, !notices.names.isEmpty else { return }
        noticeQueue.async { [self] in notices.post(from: self) }
    }

    /// On `operations`. A new attempt: the graph is made (which takes a while) and kept only if
    /// no stop or other start came meanwhile; `retrying`: only if the interruption it retries
    /// for is still the session's last word.
    private func startCapture(notify: Bool, retrying: Int? = nil) -> Notices {
        guard let (inputs, outputs, preset, attempt) = state.withLock({ s -> ([AVCaptureInput], [AVCaptureOutput], Preset, Int)? in
            if let retrying, s.attempt != retrying || s.interruption == nil { return nil }
            s.attempt += 1
            return (s.inputs, s.outputs, s.preset, s.attempt)
        }) else { return Notices() }
        let plan = CaptureRun.Plan(inputs: inputs, outputs: outputs, preset: preset)
        for case let movie as AVCaptureMovieFileOutput in outputs { movie.prepare(plan.moviePlan) }
        for output in outputs { output.sessionDidChange(running: true) }
        var notices = Notices()
        do {
            let run = try CaptureRun(plan: plan, delivering: { [weak self] video in self?.delivering(video: video, attempt) }) { [weak self] error in
                self?.captureFailed(error, attempt: attempt)
            }
            let (kept, interrupted) = state.withLock { s -> (Bool, Bool) in
                guard s.attempt == attempt else { return (false, false) }
                s.run = run
                return (true, s.interruption != nil)
            }
            guard kept else {
                run.stop()
                for output in outputs { output.sessionDidChange(running: false) }
                return notices
            }
            run.start()
            if notify && !interrupted { notices.add(.AVCaptureSessionDidStartRunning) }
        } catch {
            if let reason = Self.interruptionReason(error) { return interrupt(reason, attempt: attempt) }
            for output in outputs { output.sessionDidChange(running: false) }
            notices.add(.AVCaptureSessionRuntimeError, [AVCaptureSessionErrorKey: avError(error)])
        }
        return notices
    }

    /// On `operations`: the run (and any interruption) ends; DidStopRunning when it was running.
    private func stopCapture() -> Notices {
        let (run, wasRunning) = state.withLock { s -> (CaptureRun?, Bool) in
            defer { (s.run, s.interruption) = (nil, nil) }
            s.attempt += 1
            return (s.run, s.run != nil && s.interruption == nil)
        }
        run?.stop()
        if run != nil { for output in outputs { output.sessionDidChange(running: false) } }
        var notices = Notices()
        if wasRunning { notices.add(.AVCaptureSessionDidStopRunning) }
        return notices
    }

    /// The graph failed while running: the session stops and says why; a device held by
    /// another program interrupts it instead, and it tries again each second. Nothing, when a
    /// stop or a start came after the failed run's.
    private func captureFailed(_ error: Error, attempt: Int) {
        operations.async { [weak self] in
            guard let self, self.state.withLock({ $0.attempt == attempt }) else { return }
            if let reason = Self.interruptionReason(error) {
                self.post(self.interrupt(reason, attempt: attempt))
                return
            }
            var notices = self.stopCapture()
            notices = Notices(names: [(.AVCaptureSessionRuntimeError, [AVCaptureSessionErrorKey: avError(error)])]) + notices
            if notices.names.count == 1 { notices.add(.AVCaptureSessionDidStopRunning) }
            self.post(notices)
        }
    }

    // MARK: Interruptions

    /// Why a session is interrupted, as AVFoundation's; Linux gives the two a device held by
    /// another program gives (the V4L2 camera refuses its format, the sound card is held).
    public enum InterruptionReason: Int, Sendable {
        case videoDeviceNotAvailableInBackground = 1, audioDeviceInUseByAnotherClient = 2, videoDeviceInUseByAnotherClient = 3
        case videoDeviceNotAvailableWithMultipleForegroundApps = 4, videoDeviceNotAvailableDueToSystemPressure = 5
    }

    /// The reason a failure interrupts the session: the camera or the microphone busy
    /// (GraphKit's `deviceBusy` from the capture node); nil for any other failure, a busy
    /// element elsewhere in the graph included.
    static func interruptionReason(_ error: Error) -> InterruptionReason? {
        guard let e = error as? GraphError, e.code == .deviceBusy else { return nil }
        switch e.node {
        case "camera": return .videoDeviceInUseByAnotherClient
        case "microphone": return .audioDeviceInUseByAnotherClient
        default: return nil
        }
    }

    /// On `operations`: the failed run goes; the first interruption is posted, with
    /// DidStopRunning as Apple's session posts it; a new run is tried in a second, unless a
    /// stop or a start comes first.
    private func interrupt(_ reason: InterruptionReason, attempt: Int) -> Notices {
        guard let (run, first) = state.withLock({ s -> (CaptureRun?, Bool)? in
            guard s.attempt == attempt else { return nil }
            defer { (s.run, s.interruption) = (nil, reason) }
            return (s.run, s.interruption == nil)
        }) else { return Notices() }
        run?.stop()
        for output in outputs { output.sessionDidChange(running: false) }
        var notices = Notices()
        if first {
            notices.add(.AVCaptureSessionWasInterrupted, [AVCaptureSessionInterruptionReasonKey: reason.rawValue])
            notices.add(.AVCaptureSessionDidStopRunning)
        }
        operations.asyncAfter(deadline: .now() + 1) { [weak self] in
            guard let self else { return }
            self.post(self.startCapture(notify: false, retrying: attempt))
        }
        return notices
    }

    /// A run's first sample of a kind: an interruption of that kind's device is over, and the
    /// session runs again.
    private func delivering(video: Bool, _ attempt: Int) {
        let ended = state.withLock { s -> Bool in
            guard s.attempt == attempt, s.run != nil, let reason = s.interruption,
                  (reason == .audioDeviceInUseByAnotherClient) != video else { return false }
            s.interruption = nil
            return true
        }
        if ended {
            post(Notices(names: [(.AVCaptureSessionInterruptionEnded, nil), (.AVCaptureSessionDidStartRunning, nil)]))
        }
    }

    // MARK: Sizes and formats

    /// The frames' size (after rotation) a video output gets from `device`.
    static func frameSize(for device: AVCaptureDevice, output: AVCaptureOutput, preset: Preset?) -> (width: Int, height: Int) {
        let upright = uprightSize(for: device, output: output, preset: preset)
        let angle = output.connection(with: .video)?.videoRotationAngle ?? 0
        return angle == 90 || angle == 270 ? (upright.height, upright.width) : upright
    }

    /// The size the camera is asked for, before any rotation.
    static func uprightSize(for device: AVCaptureDevice, output: AVCaptureOutput?, preset: Preset?) -> (width: Int, height: Int) {
        if let data = output as? AVCaptureVideoDataOutput, let size = data.requestedSize { return size }
        if let size = preset?.size { return size }
        let d = device.activeFormat.dimensions
        return (Int(d.width), Int(d.height))
    }

    /// The rate and channels a microphone is captured at.
    static func audioFormat(for device: AVCaptureDevice, output: AVCaptureAudioDataOutput?) -> (rate: Int, channels: Int) {
        let pcm = device.activeFormat.formatDescription.audioStreamBasicDescription
        return (output?.requestedRate ?? Int(pcm?.mSampleRate ?? 48_000), output?.requestedChannels ?? Int(pcm?.mChannelsPerFrame ?? 1))
    }
}

extension NSNotification.Name {
    public static let AVCaptureSessionRuntimeError = NSNotification.Name("AVCaptureSessionRuntimeErrorNotification")
    public static let AVCaptureSessionDidStartRunning = NSNotification.Name("AVCaptureSessionDidStartRunningNotification")
    public static let AVCaptureSessionDidStopRunning = NSNotification.Name("AVCaptureSessionDidStopRunningNotification")
    /// Posted when a device the session uses is held by another program (see
    /// ``AVCaptureSession/InterruptionReason``); `AVCaptureSessionInterruptionEnded` when capture goes on.
    public static let AVCaptureSessionWasInterrupted = NSNotification.Name("AVCaptureSessionWasInterruptedNotification")
    public static let AVCaptureSessionInterruptionEnded = NSNotification.Name("AVCaptureSessionInterruptionEndedNotification")
    public static let AVCaptureDeviceWasConnected = NSNotification.Name("AVCaptureDeviceWasConnectedNotification")
    public static let AVCaptureDeviceWasDisconnected = NSNotification.Name("AVCaptureDeviceWasDisconnectedNotification")
}

extension AVCaptureSession {
    /// The notifications' Swift names, as Apple's SDK spells them.
    public static let runtimeErrorNotification = NSNotification.Name.AVCaptureSessionRuntimeError
    public static let didStartRunningNotification = NSNotification.Name.AVCaptureSessionDidStartRunning
    public static let didStopRunningNotification = NSNotification.Name.AVCaptureSessionDidStopRunning
    public static let wasInterruptedNotification = NSNotification.Name.AVCaptureSessionWasInterrupted
    public static let interruptionEndedNotification = NSNotification.Name.AVCaptureSessionInterruptionEnded
}

extension AVCaptureDevice {
    public static let wasConnectedNotification = NSNotification.Name.AVCaptureDeviceWasConnected
    public static let wasDisconnectedNotification = NSNotification.Name.AVCaptureDeviceWasDisconnected
}

/// The `NSError` a runtime error notification carries.
public let AVCaptureSessionErrorKey = "AVCaptureSessionErrorKey"
public let AVCaptureSessionInterruptionReasonKey = "AVCaptureSessionInterruptionReasonKey"
