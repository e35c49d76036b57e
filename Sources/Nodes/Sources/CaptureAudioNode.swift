import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `capture.audio`: the microphone, like `AVCaptureAudioDataOutput`; `device: "test"` is a
/// built-in test signal, so a graph runs on a machine with no sound card. A microphone is
/// `pipewire:NODE` (a PipeWire audio source, by its `node.name`, through `pipewiresrc`),
/// `pulse:NAME` or `alsa:NAME` (``CaptureDeviceName``); a PipeWire one is checked before the run,
/// fails the run when it sends nothing within 5 s and ends the stream when it stops sending for
/// 3 s (``SilentSourceWatch``).
///
/// Example:
/// ```json
/// "mic": { "type": "capture.audio", "params": { "sampleRate": 44100, "channels": 1, "duration": 10 } }
/// ```
public final class CaptureAudioNode: ElementNode, LiveNode, StopAware, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "capture.audio",
        category: .source,
        summary: "Microphone or a test signal, as 16-bit PCM",
        outputs: [PortDescriptor("out", .pcm([.s16le]),
                                 carries: .decided(by: [.sampleRate: sampleRate, .channels: channels]) { p in
                                     let (rate, channels) = (p[CaptureAudioNode.sampleRate], p[CaptureAudioNode.channels])
                                     return .pcm([.s16le], sampleRates: rate...rate, channels: channels...channels)
                                 },
                                 help: "interleaved S16LE PCM at sampleRate and channels")],
        parameters: [device, wave, frequency, sampleRate, channels, duration, live],
        unboundedWhen: .equals(duration, 0),
        example: #"{ "type": "capture.audio", "params": { "sampleRate": 44100, "channels": 1, "duration": 10 } }"#
    )

    public static let device = Parameter<String>("device", default: "test",
                                          help: "\"test\" for a built-in signal, \"pipewire:NODE\" (a PipeWire node.name), \"pulse:NAME\" or \"alsa:NAME\" for a device (a bare name is an ALSA device)")
    public enum Wave: String, ParameterEnum { case sine, square, saw, silence, whiteNoise = "white-noise" }
    public static let wave = Parameter<Wave>("wave", default: .sine, help: "the test device's signal")
    public static let frequency = Parameter<Double>("frequency", 1...20_000, default: 440, help: "the test signal's frequency in Hz")
    public static let sampleRate = Parameter<Int>("sampleRate", 8_000...192_000, default: 44_100, help: "frames per second")
    public static let channels = Parameter<Int>("channels", 1...2, default: 1, help: "1 (mono) or 2 (stereo)")
    public static let duration = Parameter<Double>("duration", 0...86_400, default: 0, help: "seconds to capture; 0 captures until stopped")
    public static let live = Parameter<Bool>("live", default: true,
                                      help: "test device only: false produces as fast as the graph takes it, with exact timestamps")

    let context: NodeContext
    let device: String
    let rate: Int
    let channels: Int
    let duration: Double
    let source: CaptureDeviceName
    /// A PipeWire microphone's watch (nil for the others).
    let silence: SilentSourceWatch?

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let p = context.parameters
        device = p[Self.device]
        rate = p[Self.sampleRate]
        channels = p[Self.channels]
        duration = p[Self.duration]
        source = CaptureDeviceName(audio: device)
        if case .pipeWire = source { silence = SilentSourceWatch("microphone \"\(device)\"") } else { silence = nil }
    }

    public func prepare() throws(GraphError) {
        try source.checkPresent(camera: false, context, device: device)
        silence?.start()
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        silence?.stop()
    }

    public func runWillCancel() {
        silence?.runWillCancel()
    }

    public var isLive: Bool { device != "test" || context.parameters[Self.live] }
    public var mediaDescription: String? { device == "test" ? "the test signal" : "audio device \"\(device)\"" }
    public var expectedDuration: MediaTime? {
        duration > 0 ? MediaTime(value: Int64(frameCount), timescale: Int32(rate)) : nil
    }

    /// The samples a duration asks for, at least one.
    var frameCount: Int { duration > 0 ? max(1, Int((duration * Double(rate)).rounded())) : 0 }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let caps = MediaFormat.pcm(.init(sampleRate: rate, channels: channels, sampleFormat: .s16le)).capsString
        let source: Element
        var lastBufferCut = false
        if device == "test" {
            let frames = frameCount
            let perBuffer = Self.framesPerBuffer(total: frames)
            lastBufferCut = frames % perBuffer != 0
            source = try bin.make("audiotestsrc", name: "source", [
                "is-live": isLive, "wave": context.parameters[Self.wave].rawValue,
                "freq": context.parameters[Self.frequency], "samplesperbuffer": perBuffer,
            ])
            if frames > 0 { try source.set("num-buffers", (frames + perBuffer - 1) / perBuffer) }
        } else if case .pipeWire(let node) = self.source {
            // PipeWire's buffers are its graph's quantum, whatever it is: the duration is cut
            // after the conversion (below), to the buffer. Copied out of PipeWire's buffers (a
            // few kilobytes each): a node has a handful, and one whose buffers a slow consumer
            // holds runs out and stops for good (PipeWire's audio test source did, under
            // AVAssetWriter, after 0.25 s). Stamped below by sample count.
            source = try bin.make("pipewiresrc", name: "source", ["target-object": node, "do-timestamp": true, "always-copy": true])
        } else if let (factory, property, name) = self.source.element {
            source = try bin.make(factory, name: "source", [property: name])
            // 10 ms buffers, so a duration is met to the buffer.
            try source.set("buffer-time", 200_000)
            try source.set("latency-time", 10_000)
            if duration > 0 { try source.set("num-buffers", Int((duration * 100).rounded(.up))) }
        } else {
            preconditionFailure("a microphone without an element")
        }
        let convert = try bin.make("audioconvert")
        let resample = try bin.make("audioresample")
        let filter = try bin.makeCapsFilter(caps)
        if lastBufferCut {
            // No buffer size near 1024 divides the count (44,101 samples, say): the last buffer
            // is cut to the sample.
            let cut = try bin.make("gkaudiotrim", ["start": "0", "end": String(frameCount), "timescale": String(rate)])
            try bin.link(source, cut, convert, resample, filter)
        } else {
            try bin.link(source, convert, resample, filter)
        }
        guard let silence else {
            try bin.expose(output: "out", filter)
            return
        }
        silence.watch(source, in: bin)
        // PipeWire's own times cannot be trusted: its audio test source stamped none (0.3.65)
        // or the same time on every buffer (1.4), and AVAssetWriter refused the samples; times
        // of arrival jitter, and buffers overlapped. Times by sample count from the first
        // buffer's arrival, started again after a gap of more than 40 ms (lost samples), which
        // audiorate fills with silence, so sound stays in step with the clock.
        filter.stampAudioBySampleCount(leaving: "src", sampleRate: rate, bytesPerFrame: 2 * channels)
        let steady = try bin.make("audiorate", ["tolerance": UInt64(40_000_000)])
        try bin.link(filter, steady)
        guard duration > 0 else {
            try bin.expose(output: "out", steady)
            return
        }
        let gate = try bin.make("identity", name: "duration")
        let (frames, bytesPerFrame, passed) = (frameCount, 2 * channels, SharedCount())
        gate.passWhile { size in passed.add(size / bytesPerFrame) < frames }
        try bin.link(steady, gate)
        try bin.expose(output: "out", gate)
    }

    /// A buffer size near 1024 frames that divides the total exactly, so a duration ends on
    /// the sample (10 s at 44.1 kHz: 441000 = 1000 buffers of 441). 1024 when none does.
    static func framesPerBuffer(total: Int) -> Int {
        guard total > 0 else { return 1024 }
        for distance in 0...768 {
            for candidate in [1024 + distance, 1024 - distance] where candidate >= 256 && total % candidate == 0 {
                return candidate
            }
        }
        return 1024
    }
}
