import Foundation
import Testing
@testable import MediaContainers
import TestSupport

/// What a file may claim before GStreamer reads it (issue 47), in process and in memory: the
/// walk refuses nesting past ``ContainerLimits/depth`` and too many boxes whatever the numbers,
/// within a fraction of a second and without recursion, and passes every real file the fuzzers
/// start from (MP4, M4A, MOV, fragmented, tagged, from ffmpeg and GStreamer).
@Suite(.timeLimit(.minutes(1))) struct ContainerLimitsTests {
    static func box(_ type: FourCC, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)] + type.bytes + body
    }
    static let ftyp = box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("isomiso2mp41".utf8))

    /// `levels` boxes of `type`, each in the one before, in a `moov` (a `meta` chain in a `udta`).
    static func nested(_ type: FourCC, levels: Int) -> [UInt8] {
        let chain = CraftedMP4.nested(type, levels: levels)
        return ftyp + box("moov", type == "meta" ? box("udta", Array(chain.dropFirst(4))) : chain)
    }

    @Test(arguments: ["udta", "meta", "trak", "moov"] as [FourCC])
    func nestingPastTheLimitIsRefusedAtOnce(_ type: FourCC) throws {
        let started = ContinuousClock.now
        let deep = try #require(ContainerLimits.problem(in: MemoryBytes(Self.nested(type, levels: 100_000))))
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(deep.contains("box at byte") && deep.contains("holds boxes nested more than 32 deep"), "\(deep)")
        // At the limit: the moov (1), then 31 more (a meta's chain starts inside a udta).
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.nested(type, levels: type == "meta" ? 30 : 31))) == nil)
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.nested(type, levels: 33))) != nil)
    }

    @Test func tooManyBoxesInOneAreRefused() throws {
        let free = Self.box("free", [])
        let many = Self.ftyp + Self.box("moov", Array([[UInt8]](repeating: free, count: ContainerLimits.children + 1).joined()))
        let why = try #require(ContainerLimits.problem(in: MemoryBytes(many)))
        #expect(why.hasPrefix("its moov box at byte 28 holds more than 10000 boxes"), "\(why)")
        let enough = Self.ftyp + Self.box("moov", Array([[UInt8]](repeating: free, count: ContainerLimits.children).joined()))
        #expect(ContainerLimits.problem(in: MemoryBytes(enough)) == nil)
    }

    /// Sample tables claiming more than the file holds: refused by the index's reading, naming
    /// the track and its stsz box, before a list of samples is made.
    @Test(arguments: [(UInt32(20_000_000), UInt32(0), "more than the file's 3753 bytes can hold"), (20_000_000, 1, "bytes of samples, more than the file's 3753"),
                      (4_000, 1, "more than the file's 3753"), (1_000, 1_000, "bytes of samples, more than the file's")])
    func sampleClaimsPastTheFileAreRefused(_ count: UInt32, _ size: UInt32, _ why: String) throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus/media/av.mp4").standardized
        let bytes = [UInt8](try Data(contentsOf: corpus))
        let file = try MP4File(MemoryBytes(bytes))
        var movie = try #require(try file.movie())
        let (index, track) = try #require(movie.tracks(handler: "soun").first)
        var edited = track
        edited.box.modify(["mdia", "minf", "stbl", "stsz"]) { stsz in
            stsz.body = [0, 0, 0, 0] + [size, count].flatMap { w in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: w >> UInt32($0)) } }
        }
        movie.setTrack(index, edited)
        #expect(bytes.count == 3753)
        #expect(throws: ContainerError.self) { try movie.checkSampleClaims(fileSize: UInt64(bytes.count)) }
        do { try movie.checkSampleClaims(fileSize: UInt64(bytes.count)) } catch {
            #expect(error.reason.hasPrefix("its track \(track.trackID)'s stsz box claims \(count) samples") && error.reason.contains(why), "\(error.reason)")
        }
    }

    /// Uncompressed sound stored a frame per sample, as QuickTime and ffmpeg's `-f mov` store
    /// PCM: 11 million samples of 4 bytes (3.8 minutes of 48 kHz stereo) in a file that holds
    /// their bytes are no damage, and the index is read (they were refused as more than the
    /// samples GraphKit lists, so such a file could not even be probed or decoded).
    @Test func samplesOfOneSizeCountOnlyAgainstTheFilesBytes() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus/media/av.mp4").standardized
        let file = try MP4File(MemoryBytes([UInt8](try Data(contentsOf: corpus))))
        var movie = try #require(try file.movie())
        let (index, track) = try #require(movie.tracks(handler: "soun").first)
        var edited = track
        edited.box.modify(["mdia", "minf", "stbl", "stsz"]) { stsz in
            stsz.body = [0, 0, 0, 0] + [UInt32(4), 11_000_000].flatMap { w in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: w >> UInt32($0)) } }
        }
        movie.setTrack(index, edited)
        #expect(throws: Never.self) { try movie.checkSampleClaims(fileSize: 44_100_000) }
        #expect(throws: ContainerError.self) { try movie.checkSampleClaims(fileSize: 43_999_999) }
    }

    /// No real file is refused: the fuzzers' seeds (all but the hostile ones).
    @Test func realFilesPass() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus").standardized
        var read = 0
        for folder in ["containers", "media"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent(folder).path)
            for name in names where !name.hasPrefix("nested-") {
                let bytes = [UInt8](try Data(contentsOf: corpus.appendingPathComponent("\(folder)/\(name)")))
                #expect(ContainerLimits.problem(in: MemoryBytes(bytes)) == nil, "\(folder)/\(name)")
                read += 1
            }
        }
        #expect(read > 20)
    }

    /// The sizes the video decoders take, at their edges: each side to 16384, and
    /// (w+128)(h+128) under 2²⁸ as libavcodec's `av_image_check_size` has it (16384×16000 is
    /// taken and 16384×16300 is not, which decodebin passed to libde265dec); a JPEG frame holds
    /// at most 512 pixels a byte.
    @Test func theDecodersSizeBoundIsLibavcodecsAndAJPEGFramesIsItsBytes() {
        #expect(FrameSizeLimit.excess(width: 16384, height: 16000) == nil)
        #expect(FrameSizeLimit.excess(width: 16000, height: 16000) == nil)
        #expect(FrameSizeLimit.excess(width: 16384, height: 16300)?.contains("more than the video decoders here take") == true)
        // The bound's edge: 16383 + 128 = 16511, and 16511 × 16258 = 268,435,838 ≥ 2²⁸; 16257 is under.
        #expect(FrameSizeLimit.excess(width: 16383, height: 16257 - 128) == nil)
        #expect(FrameSizeLimit.excess(width: 16383, height: 16258 - 128) != nil)
        #expect(FrameSizeLimit.excess(width: 16385, height: 16)?.contains("exceeds the limit of 16384x16384") == true)
        #expect(FrameSizeLimit.excess(width: 0, height: 5) == nil)
        #expect(FrameSizeLimit.excess(width: 1920, height: 1080, jpegFrameBytes: 4050) == nil)
        #expect(FrameSizeLimit.excess(width: 1920, height: 1080, jpegFrameBytes: 4049)?.contains("a JPEG frame of 4049 bytes cannot hold") == true)
        #expect(FrameSizeLimit.jpegPixels(inFrameOf: .max) == .max)
        let sentence = FrameSizeLimit.refusal("the stream (video/x-h265)", width: 16384, height: 16300)
        #expect(sentence?.hasPrefix("the stream (video/x-h265) claims frames of 16384x16300 (267059200 pixels), which is more than") == true)
    }
}
