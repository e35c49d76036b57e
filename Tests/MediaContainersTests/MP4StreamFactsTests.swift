import Foundation
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import Testing
import TestSupport

/// MP4StreamFacts: what GStreamer's discoverer says of an MP4/MOV/M4A, read from the file's own
/// index; compared field by field with the discoverer on files ffmpeg makes here.
@Suite(.timeLimit(.minutes(10))) struct MP4StreamFactsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func make(_ arguments: [String], ext: String = "mp4") throws -> String {
        let path = folder.appendingPathComponent(UUID().uuidString + "." + ext).path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + arguments + ["-y", path])
        return path
    }

    func facts(_ path: String) throws -> MP4StreamFacts? {
        MP4StreamFacts(try #require(FileBytes(path: path)))
    }

    /// Every fact equals the discoverer's: duration, order, codec in words, rate, channels,
    /// size, frame rate; the stored format is the same kind of stream.
    func expectSameAsDiscoverer(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let facts = try #require(try facts(path), "no facts for \(path)", sourceLocation: sourceLocation)
        let info = try MediaFileInfo(path: path)
        #expect(facts.durationNanoseconds == info.duration.nanoseconds, sourceLocation: sourceLocation)
        #expect(facts.streams.count == info.streams.count, sourceLocation: sourceLocation)
        for (mine, theirs) in zip(facts.streams, info.streams) {
            #expect((mine.handler == "vide" ? MediaFileInfo.Kind.video : .audio) == theirs.kind, sourceLocation: sourceLocation)
            #expect(mine.codec == theirs.codec, sourceLocation: sourceLocation)
            #expect(mine.sampleRate == theirs.sampleRate && mine.channels == theirs.channels, "\(mine) \(theirs)", sourceLocation: sourceLocation)
            #expect(mine.width == theirs.width && mine.height == theirs.height, sourceLocation: sourceLocation)
            #expect(mine.frameRate?.numerator == theirs.frameRate?.numerator && mine.frameRate?.denominator == theirs.frameRate?.denominator,
                    "\(String(describing: mine.frameRate)) \(String(describing: theirs.frameRate))", sourceLocation: sourceLocation)
            let kind = { (caps: String) in caps.prefix { $0 != "," } }
            #expect(kind(mine.caps) == kind(theirs.storedFormat), sourceLocation: sourceLocation)
        }
    }

    @Test(.media) func h264AndAACAsTheDiscovererSays() throws {
        // High profile at 25 fps with stereo AAC at 48 kHz.
        try expectSameAsDiscoverer(try make(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1",
                                             "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=1",
                                             "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", "-shortest"]))
        // NTSC's rate, baseline and main profiles, mono AAC at 44.1 kHz, sound first.
        try expectSameAsDiscoverer(try make(["-f", "lavfi", "-i", "sine=sample_rate=44100:duration=1",
                                             "-f", "lavfi", "-i", "testsrc=size=176x144:rate=30000/1001:duration=1",
                                             "-map", "0:a", "-map", "1:v",
                                             "-c:v", "libx264", "-profile:v", "baseline", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "1"]))
        try expectSameAsDiscoverer(try make(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=1",
                                             "-c:v", "libx264", "-profile:v", "main", "-pix_fmt", "yuv420p"], ext: "mov"))
        // Sound alone (M4A), 22.05 kHz.
        try expectSameAsDiscoverer(try make(["-f", "lavfi", "-i", "sine=sample_rate=22050:duration=1", "-c:a", "aac"], ext: "m4a"))
    }

    /// A file the facts do not read as the discoverer would is not read: cut short, fragmented,
    /// another codec. The caller then asks the discoverer.
    @Test(.media) func declinesWhatItDoesNotRead() throws {
        let whole = try make(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv420p"])
        #expect(try facts(whole) != nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        let cut = folder.appendingPathComponent("cut.mp4").path
        try bytes.prefix(bytes.count - 100).write(to: URL(fileURLWithPath: cut))
        #expect(try facts(cut) == nil)
        let fragmented = try make(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                   "-movflags", "frag_keyframe+empty_moov"])
        #expect(try facts(fragmented) == nil)
        let mpeg4 = try make(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=1", "-c:v", "mpeg4"])
        #expect(try facts(mpeg4) == nil)
    }

    /// gst_video_guess_framerate's snapping: common rates come out as fractions.
    @Test func frameRateSnapsToCommonRates() {
        #expect(MP4StreamFacts.guessFrameRate(nanoseconds: 40_000_000)! == (25, 1))
        #expect(MP4StreamFacts.guessFrameRate(nanoseconds: 33_366_667)! == (30000, 1001))
        #expect(MP4StreamFacts.guessFrameRate(nanoseconds: 41_708_333)! == (24000, 1001))
        #expect(MP4StreamFacts.guessFrameRate(nanoseconds: 0) == nil)
    }
}
