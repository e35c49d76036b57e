import Testing
import CGraphKitGlue
import CGStreamer
@testable import GraphKitRuntime
@testable import GraphKitCore
import GraphKit

@Suite struct MediaFormatTests {
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
        .peaks(samplesPerPixel: 256, channels: 2),
    ])
    func capsRoundTrip(_ format: MediaFormat) {
        #expect(roundTrip(format) == format)
    }

    @Test func unknownCapsKeepTheirName() {
        let caps = gst_caps_from_string("video/x-vp9")!
        defer { gk_caps_unref(caps) }
        #expect(GStreamer.format(from: caps) == .data("video/x-vp9"))
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
