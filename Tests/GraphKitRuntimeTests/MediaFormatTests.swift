import Testing
import CGraphKitGlue
import CGStreamer
@testable import GraphKitRuntime
@testable import GraphKitCore
import GraphKit
import TestSupport

@Suite(.media) struct MediaFormatTests {
    func roundTrip(_ format: MediaFormat) -> MediaFormat? {
        guard let caps = GStreamer.caps(format) else { return nil }
        defer { gk_caps_unref(caps) }
        return GStreamer.format(from: caps)
    }

    @Test(arguments: [
        MediaFormat.pcm(.init(sampleRate: 44_100, channels: 2, sampleFormat: .s16le)),
        .pcm(.init(sampleRate: 48_000, channels: 1, sampleFormat: .f32le)),
        .aac(sampleRate: 44_100, channels: 1),
        .rawVideo(.init(pixelFormat: .bgra, width: 720, height: 960, frameRate: FrameRate(30))),
        .rawVideo(.init(pixelFormat: .i420, width: 1280, height: 720, frameRate: FrameRate(30_000, 1001))),
        .h264(width: 720, height: 960),
        .video(.hevc, width: 1920, height: 1080),
        .video(.vp9, width: 640, height: 360),
        .video(.av1, width: nil, height: nil),
        .audio(.opus, sampleRate: 48_000, channels: 2),
        .audio(.flac, sampleRate: 44_100, channels: 6),
        .audio(.alac, sampleRate: nil, channels: nil),
        .peaks(samplesPerPixel: 256, channels: 2),
    ])
    func capsRoundTrip(_ format: MediaFormat) {
        #expect(roundTrip(format) == format)
    }

    /// What a connection can carry, and why it carries nothing: the loader reports a refusal
    /// at what decides the aspect that differs.
    @Test func formatSetsIntersectAndSayWhereTheyDiffer() {
        let any16 = FormatSet.pcm([.s16le]), stereo = FormatSet.pcm(channels: 2...2), f32at48k = FormatSet.pcm([.f32le], sampleRates: 48_000...48_000)
        #expect(any16.intersection(stereo) == .pcm([.s16le], channels: 2...2))
        #expect(any16.intersection(f32at48k).isEmpty)
        #expect(any16.differences(from: f32at48k) == [.sampleFormat])
        #expect(FormatSet.pcm([.f32le], sampleRates: 8_000...8_000, channels: 6...6).differences(from: f32at48k.intersection(stereo)) == [.sampleRate, .channels])
        #expect(FormatSet.rawVideo([.i420]).differences(from: .rawVideo([.bgra, .rgba])) == [.pixelFormat])
        #expect(FormatSet.rawVideo().differences(from: .pcm()) == [.kind])
        #expect(FormatSet.any.intersection(.peaks) == .peaks && FormatSet.peaks.differences(from: .any).isEmpty)
        // The caps a Swift node's input is held to.
        #expect(FormatSet.pcm([.s16le], channels: 1...1).capsString
                == "audio/x-raw, format=(string){ S16LE }, layout=(string)interleaved, rate=(int)[ 1, 768000 ], channels=(int)1")
        #expect(FormatSet.rawVideo([.bgra, .rgba]).capsString == "video/x-raw, format=(string){ BGRA, RGBA }")
        #expect(FormatSet.any.capsString == nil)
        // One format as a set: what a source that declares it gives.
        let pcm = MediaFormat.pcm(.init(sampleRate: 48_000, channels: 2, sampleFormat: .f32le))
        #expect(FormatSet(exactly: pcm) == .pcm([.f32le], sampleRates: 48_000...48_000, channels: 2...2))
        #expect(FormatSet(exactly: pcm).contains(pcm) && !FormatSet(exactly: pcm).contains(.pcm(.init(sampleRate: 44_100, channels: 2, sampleFormat: .f32le))))
        #expect(FormatSet(exactly: .data("video/x-theora")) == .any)
        #expect("\(FormatSet(exactly: pcm))" == "audio/pcm F32LE 48000 Hz 2 ch")
    }

    @Test func unknownCapsKeepTheirName() {
        GStreamer.initialize()  // caps parsed before gst_init are empty (GStreamer 1.26, when this test runs first)
        let caps = gst_caps_from_string("video/x-theora")!
        defer { gk_caps_unref(caps) }
        #expect(GStreamer.format(from: caps) == .data("video/x-theora"))
    }

    /// Each codec past H.264 and AAC is a kind of its own: a port of one codec meets only that
    /// codec, a refusal between two is one of kind, and a port of several codecs (sink.mp4's
    /// audio: AAC, Opus or ALAC) holds its caps filter to all of them.
    @Test func compressedCodecsAreKindsOfTheirOwn() {
        #expect(FormatSet.video(.hevc).intersects(.video(.hevc)) && !FormatSet.video(.hevc).intersects(.video(.vp9)))
        #expect(!FormatSet.video(.hevc).intersects(.h264) && !FormatSet.audio(.opus).intersects(.aac))
        #expect(FormatSet.audio(.flac).differences(from: FormatSet([.aac, .audio(.opus), .audio(.alac)])) == [.kind])
        #expect(FormatSet([.aac, .audio(.opus)]).intersection(.audio(.opus)) == .audio(.opus))
        #expect(FormatSet([.h264, .video(.hevc)]).capsString == "video/x-h264; video/x-h265")
        #expect(FormatSet.video(.av1).contains(.video(.av1, width: 8, height: 8)) && !FormatSet.video(.av1).contains(.video(.vp9, width: 8, height: 8)))
        #expect("\(FormatSet([.aac, .audio(.opus), .audio(.alac)]))" == "audio/aac or audio/opus or audio/alac")
        #expect(FormatSet(exactly: .audio(.flac, sampleRate: 48_000, channels: 2)) == .audio(.flac))
        #expect(MediaFormat.video(.hevc, width: 1920, height: 1080).fits(.video(.hevc, width: nil, height: nil)))
        #expect(!MediaFormat.video(.hevc, width: 1920, height: 1080).fits(.video(.av1, width: nil, height: nil)))
        #expect(!MediaFormat.audio(.opus, sampleRate: 48_000, channels: 2).fits(.audio(.opus, sampleRate: 48_000, channels: 1)))
    }

    @Test func formatSetsIntersectByKindAndRange() {
        #expect(FormatSet.pcm([.s16le]).intersects(.pcm()))
        #expect(!FormatSet.pcm([.s16le]).intersects(.pcm([.f32le])))
        #expect(!FormatSet.pcm(sampleRates: 8000...16000).intersects(.pcm(sampleRates: 44100...48000)))
        #expect(!FormatSet.rawVideo().intersects(.pcm()))
        #expect(FormatSet.any.intersects(.h264))
        #expect(FormatSet.rawVideo([.bgra]).contains(.rawVideo(.init(pixelFormat: .bgra, width: 2, height: 2, frameRate: FrameRate(1)))))
        #expect(!FormatSet.aac.contains(.h264(width: nil, height: nil)))
        #expect(FormatSet.pcm([.s16le]).description == "audio/pcm S16LE 1-768000 Hz 1-64 ch")
    }
}
