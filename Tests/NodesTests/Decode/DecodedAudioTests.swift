import GraphKit
import Testing
@testable import Nodes

/// How decode routes a decoded audio stream, by its caps: the decision alone (the runs are in
/// ChannelCountTests and MediaLimitsTests).
@Suite struct DecodedAudioTests {
    static func shape(_ rate: Int, _ channels: Int, _ format: String = "S16LE", interleaved: Bool = true) -> Pad.AudioShape {
        Pad.AudioShape(sampleRate: rate, channels: channels, sampleFormat: format, interleaved: interleaved)
    }

    static func route(_ shape: Pad.AudioShape?, _ format: Auto<SampleFormat> = .auto, rate: Int? = nil, channels: Int? = nil) -> DecodedAudio {
        DecodedAudio.route(shape, sampleFormat: format, sampleRate: rate, channels: channels, input: "\"in.wav\"")
    }

    /// Through the converter, pinned to the stream's own channel count where the parameters leave
    /// it open (so that nothing downstream makes it mix unasked); the rate stays open without a
    /// resampler.
    @Test func theConverterKeepsWhatTheParametersLeaveOpen() {
        #expect(Self.route(Self.shape(44_100, 6, "F32LE")) == .convert(
            caps: "audio/x-raw, format={ S16LE, F32LE }, layout=(string)interleaved, channels=(int)6"))
        #expect(Self.route(Self.shape(44_100, 6, "S24LE"), .value(.s16le), rate: 48_000, channels: 2) == .convert(
            caps: "audio/x-raw, format=(string)S16LE, layout=(string)interleaved, rate=(int)48000, channels=(int)2"))
        #expect(Self.route(nil, .value(.f32le), rate: 22_050) == .convert(
            caps: "audio/x-raw, format=(string)F32LE, layout=(string)interleaved, rate=(int)22050"))
    }

    /// 64 channels, which GStreamer's converter cannot take: straight through when nothing
    /// needs converting, else refused saying what would need converting.
    @Test func sixtyFourChannelsPassAsTheyAreOrAreRefused() {
        #expect(Self.route(Self.shape(8_000, 64)) == .direct(
            caps: "audio/x-raw, format=(string)S16LE, layout=(string)interleaved, rate=(int)8000, channels=(int)64"))
        #expect(Self.route(Self.shape(8_000, 64, "F32LE"), .value(.f32le), rate: 8_000, channels: 64) == .direct(
            caps: "audio/x-raw, format=(string)F32LE, layout=(string)interleaved, rate=(int)8000, channels=(int)64"))
        #expect(Self.route(Self.shape(8_000, 64, "F32LE"), .value(.s16le)) == .refuse(
            "\"in.wav\" has 64 audio channels, and GStreamer's converter takes at most 63: decode cannot convert it from F32LE to S16LE; "
            + "take it as it is (sampleFormat auto, no sampleRate or channels)"))
        #expect(Self.route(Self.shape(8_000, 64, "S24LE")) == .refuse(
            "\"in.wav\" has 64 audio channels, and GStreamer's converter takes at most 63: decode cannot convert it from S24LE to interleaved S16LE or F32LE"))
        #expect(Self.route(Self.shape(8_000, 63, "S24LE")) == .convert(
            caps: "audio/x-raw, format={ S16LE, F32LE }, layout=(string)interleaved, channels=(int)63"))
    }

    /// What PCM ports do not carry, or no audio has, is refused naming the file and the field.
    @Test func implausibleStreamsAreRefused() {
        #expect(Self.route(Self.shape(8_000, 65)) == .refuse("\"in.wav\" has 65 audio channels, and decode gives 1 to 64"))
        #expect(Self.route(Self.shape(1, 1)) == .refuse(
            "\"in.wav\" says its audio has 1 sample a second (the sample rate its header gives), and decode takes audio of 1000 to 768000 Hz: "
            + "no sound is that slow; the header is damaged, or the file holds no audio"))
        if case .refuse = Self.route(Self.shape(999, 2)) {} else { Issue.record("999 Hz is taken") }
        if case .refuse = Self.route(Self.shape(768_001, 2)) {} else { Issue.record("768,001 Hz is taken") }
        if case .convert = Self.route(Self.shape(1_000, 2)) {} else { Issue.record("1,000 Hz is refused") }
        if case .convert = Self.route(Self.shape(768_000, 2)) {} else { Issue.record("768,000 Hz is refused") }
    }
}
