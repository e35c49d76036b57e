import GraphKitCore
import GraphKitRuntime
import Nodes

/// A running capture session's engine: the graph, and a thread per media kind that pulls its
/// samples and hands them to the outputs. Pulls wake when the graph stops (``stop()``) or fails;
/// a failure while running is reported once, through `failed`.
final class CaptureRun: @unchecked Sendable {
    // Unchecked: the plan holds the session's outputs and connections (NSObject subclasses whose
    // own state is locked); the threads and flags are under `state`'s lock.

    /// What the session's configuration asks of the engine.
    struct Plan {
        struct Video { var device: AVCaptureDevice; var width: Int; var height: Int; var fps: Int; var pixelFormat: PixelFormat
                       var pixelFormatType: OSType; var angle: CGFloat; var mirrored: Bool }
        struct Audio { var device: AVCaptureDevice; var rate: Int; var channels: Int }
        var video: Video?
        var audio: Audio?
        /// Each output with the connection it receives a kind on.
        var videoReceivers: [(AVCaptureOutput, AVCaptureConnection)] = []
        var audioReceivers: [(AVCaptureOutput, AVCaptureConnection)] = []

        init(inputs: [AVCaptureInput], outputs: [AVCaptureOutput], preset: AVCaptureSession.Preset) {
            for output in outputs {
                for connection in output.connections where connection.isEnabled {
                    if connection.mediaType == .video { videoReceivers.append((output, connection)) } else { audioReceivers.append((output, connection)) }
                }
            }
            // The video data output decides the branch's format, size and turn; else the first.
            let lead = videoReceivers.first { $0.0 is AVCaptureVideoDataOutput } ?? videoReceivers.first
            if let (output, connection) = lead {
                let device = connection.device
                let size = AVCaptureSession.uprightSize(for: device, output: output, preset: preset)
                let code = (output as? AVCaptureVideoDataOutput)?.framePixelFormatType ?? kCVPixelFormatType_32BGRA
                video = Video(device: device, width: size.width, height: size.height, fps: device.framesPerSecond,
                              pixelFormat: PixelFormat(cvPixelFormat: code) ?? .bgra, pixelFormatType: code,
                              angle: connection.videoRotationAngle, mirrored: connection.isVideoMirrored)
            }
            if let (output, connection) = audioReceivers.first(where: { $0.0 is AVCaptureAudioDataOutput }) ?? audioReceivers.first {
                let format = AVCaptureSession.audioFormat(for: connection.device, output: output as? AVCaptureAudioDataOutput)
                audio = Audio(device: connection.device, rate: format.rate, channels: format.channels)
            }
        }

        var moviePlan: AVCaptureMovieFileOutput.Plan {
            let turned = video.map { $0.angle == 90 || $0.angle == 270 ? ($0.height, $0.width) : ($0.width, $0.height) }
            return .init(video: turned.map { (width: $0.0, height: $0.1) }, audio: audio.map { (rate: $0.rate, channels: $0.channels) })
        }

        /// The graph, as JSON.
        var graph: String {
            var nodes: [String] = [], edges: [String] = []
            if let v = video {
                nodes.append(#""camera": { "type": "capture.video", "params": { "device": "\#(v.device.engineDevice)", "width": \#(v.width), "height": \#(v.height), "fps": \#(v.fps), "pixelFormat": "\#(v.pixelFormat.rawValue)" } }"#)
                var last = "camera"
                if v.angle != 0 {
                    nodes.append(#""turn": { "type": "effect.rotate", "params": { "degrees": "\#(Int(v.angle))" } }"#)
                    edges.append(#""\#(last).out -> turn.in""#)
                    last = "turn"
                }
                if v.mirrored {
                    nodes.append(#""mirror": { "type": "effect.mirror", "params": { "axis": "horizontal" } }"#)
                    edges.append(#""\#(last).out -> mirror.in""#)
                    last = "mirror"
                }
                nodes.append(#""video": { "type": "sink.app", "params": { "maxBuffers": 4 } }"#)
                edges.append(#""\#(last).out -> video.in""#)
            }
            if let a = audio {
                nodes.append(#""microphone": { "type": "capture.audio", "params": { "device": "\#(a.device.engineDevice)", "sampleRate": \#(a.rate), "channels": \#(a.channels) } }"#)
                nodes.append(#""audio": { "type": "sink.app", "params": { "maxBuffers": 32 } }"#)
                edges.append(#""microphone.out -> audio.in""#)
            }
            return #"{ "version": 1, "name": "AVCaptureSession", "nodes": { \#(nodes.joined(separator: ", ")) }, "edges": [\#(edges.joined(separator: ", "))] }"#
        }
    }

    let plan: Plan
    let run: GraphRun?
    private let failed: @Sendable (Error) -> Void
    private let delivering: @Sendable (_ video: Bool) -> Void
    struct State {
        var stopping = false
        /// The kinds that have delivered a sample: video, audio.
        var delivered: Set<Bool> = []
        var reported = false
        var threadsLeft = 0
    }
    private let state = Condition(State())

    /// `delivering` is called at the first sample of each kind (true: video); `failed` once, if
    /// the graph fails.
    init(plan: Plan, delivering: @escaping @Sendable (_ video: Bool) -> Void = { _ in }, failed: @escaping @Sendable (Error) -> Void) throws {
        self.plan = plan
        self.failed = failed
        self.delivering = delivering
        if plan.video == nil && plan.audio == nil {
            run = nil
            return
        }
        let graph = try GraphLoader(registry: .builtIn).load(json: plan.graph)
        let run = try GraphRun(graph)
        try run.start()
        self.run = run
    }

    func start() {
        guard let run else { return }
        if plan.video != nil, let output = try? run.output("video") { pull(output, to: plan.videoReceivers, video: plan.video) }
        if plan.audio != nil, let output = try? run.output("audio") { pull(output, to: plan.audioReceivers, video: nil) }
    }

    private func pull(_ output: MediaOutput, to receivers: [(AVCaptureOutput, AVCaptureConnection)], video: Plan.Video?) {
        state.withLock { $0.threadsLeft += 1 }
        let thread = Thread { [self] in
            // This thread pulls one kind: only its first sample needs the lock.
            var delivered = false
            while let sample = output.copyNextSampleBuffer() {
                if !delivered {
                    delivered = true
                    if state.withLock({ $0.delivered.insert(video != nil).inserted }) { delivering(video != nil) }
                }
                let buffer = Self.sampleBuffer(sample, video: video)
                for (receiver, connection) in receivers { receiver.receive(buffer, from: connection) }
            }
            ended()
        }
        thread.name = video == nil ? "AVCaptureSession audio" : "AVCaptureSession video"
        thread.start()
    }

    /// A frame as Apple's capture gives it: its pixel buffer in the code asked for ('420f' is the
    /// engine's NV12, said to be full range).
    static func sampleBuffer(_ sample: SampleBuffer, video: Plan.Video?) -> CMSampleBuffer {
        if let video, case .rawVideo(let v)? = sample.format, video.pixelFormatType == kCVPixelFormatType_420YpCbCr8BiPlanarFullRange {
            let pixels = CVPixelBuffer(sample: sample, videoFormat: v, pixelFormatType: video.pixelFormatType)
            let pts = sample.presentationTime.map { CMTime($0) } ?? .invalid
            let duration = sample.duration.map { CMTime($0) } ?? .invalid
            return CMSampleBuffer(imageBuffer: pixels, presentationTimeStamp: pts, duration: duration)
        }
        return CMSampleBuffer(sample: sample)
    }

    /// A pulling thread ends: at the stop, or because the graph ended by itself (a failure).
    private func ended() {
        let report = state.withLock(wakingWaiters: true) { s -> Bool in
            s.threadsLeft -= 1
            guard !s.stopping, !s.reported else { return false }
            s.reported = true
            return true
        }
        guard report, let run else { return }
        let error = run.wait().error ?? GraphError(.runFailed, "capture ended: the device stopped giving samples")
        failed(error)
    }

    /// Stops the graph; returns when the pulling threads have ended, or after a second.
    func stop() {
        state.withLock { $0.stopping = true }
        run?.cancel()
        state.wait(until: { $0.threadsLeft == 0 }, atMost: 1) { _ in }
    }
}
