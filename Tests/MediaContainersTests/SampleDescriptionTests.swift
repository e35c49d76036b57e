import Foundation
import GraphKitTesting
@testable import MediaContainers
import Testing
import TestSupport

/// SampleDescription: what decides whether two tracks' compressed samples can follow one another
/// (a passthrough join), read from files ffmpeg makes here.
@Suite(.timeLimit(.minutes(10))) struct SampleDescriptionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func description(_ arguments: [String], handler: FourCC) throws -> SampleDescription {
        let path = folder.appendingPathComponent(UUID().uuidString + ".mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + arguments + ["-y", path])
        let bytes = try #require(FileBytes(path: path))
        let movie = try #require(try MP4File(bytes).movie())
        let track = try #require(movie.tracks(handler: handler).first?.track)
        return try #require(SampleDescription(track))
    }

    func aac(rate: Int = 48_000, channels: Int = 2, bitRate: String) throws -> SampleDescription {
        try description(["-f", "lavfi", "-i", "sine=sample_rate=\(rate):duration=0.5", "-ac", "\(channels)", "-c:a", "aac", "-b:a", bitRate], handler: "soun")
    }

    func h264(size: String = "160x120", profile: String = "high") throws -> SampleDescription {
        try description(["-f", "lavfi", "-i", "testsrc=size=\(size):rate=25:duration=0.4", "-c:v", "libx264", "-profile:v", profile, "-pix_fmt", "yuv420p"],
                        handler: "vide")
    }

    /// AAC at two bit rates decodes with one configuration: the esds' bit rates are not compared,
    /// its AudioSpecificConfig is; another rate or channel count is named.
    @Test(.media) func aacDiffersOnlyWhereDecodingDoes() throws {
        let a = try aac(bitRate: "96k"), b = try aac(bitRate: "160k")
        #expect(a.codec == "mp4a" && a.configuration?.type == "esds")
        #expect(b.difference(from: a) == nil)
        #expect(try aac(rate: 44_100, bitRate: "96k").difference(from: a) == "its sample rate is 44100 Hz, not 48000 Hz")
        // FFmpeg 5.1's entry says 2 channels for mono too (the AudioSpecificConfig tells them
        // apart); 7.1's says 1.
        let mono = try aac(channels: 1, bitRate: "96k").difference(from: a)
        #expect(["its AAC channel configuration is 1, not 2", "it has 1 channel, not 2"].contains(mono), "\(String(describing: mono))")
        // The AudioSpecificConfig kept: object type 0x40 (MPEG-4 audio), then AAC-LC at 48 kHz stereo.
        #expect(a.configuration?.body.prefix(3) == [0x40, 0x11, 0x90])
    }

    /// H.264 of one size and profile joins; another size, or another profile's parameter sets
    /// (avcC), is named.
    @Test(.media) func h264DiffersBySizeAndParameterSets() throws {
        let a = try h264()
        #expect(a.codec == "avc1" && a.configuration?.type == "avcC")
        #expect(a.size?.width == 160 && a.size?.height == 120)
        #expect(try h264().difference(from: a) == nil)
        #expect(try h264(size: "320x240").difference(from: a) == "its pictures are 320x240, not 160x120")
        #expect(try h264(profile: "baseline").difference(from: a)?.hasPrefix("its codec configuration (avcC) differs") == true)
    }
}
