import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import MediaContainers

/// The sample table read as samples, the HLS cut plan, the fragments written from them, and the
/// playlist's text: each against what ffmpeg says of the same file.
@Suite struct CMAFSegmentsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 3 s of 160x120 H.264 with B-frames and a key frame every 10 frames, and AAC.
    func movie() throws -> (path: String, movie: MP4Movie, bytes: FileBytes) {
        let p = folder.appendingPathComponent("in.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=3", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=3", "-c:v", "libx264", "-g", "10", "-keyint_min", "10", "-sc_threshold", "0",
                                         "-bf", "2", "-c:a", "aac", p])
        let bytes = try #require(FileBytes(path: p))
        return (p, try #require(try MP4File(bytes).movie()), bytes)
    }

    /// ffprobe's packets of one stream: position, size, decode and presentation time (ticks),
    /// and whether it is a key frame.
    func probe(_ path: String, stream: String) throws -> [(pos: UInt64, size: UInt32, dts: Int64, pts: Int64, key: Bool)] {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", "packet=pos,size,dts,pts,flags",
                                          "-of", "csv=p=0", path])
            .split(whereSeparator: \.isNewline).map { line in
                let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
                // ffprobe's order: pts, dts, size, pos, flags.
                return (UInt64(f[3])!, UInt32(f[2])!, Int64(f[1])!, Int64(f[0])!, f[4].hasPrefix("K"))
            }
    }

    /// Every sample where ffprobe finds its packet, of its size, at its times, key frames alike.
    /// (ffmpeg's times start at the edit list's first media time below 0: shifted back here.)
    @Test func theSampleTableGivesEveryPacket() throws {
        let (path, movie, bytes) = try movie()
        for (handler, stream) in [("vide", "v"), ("soun", "a")] {
            let track = try #require(movie.tracks(handler: FourCC(handler)).first).track
            let samples = try track.samples(fileSize: bytes.count)
            let packets = try probe(path, stream: stream)
            #expect(samples.count == packets.count)
            let shift = track.edits?.first.map { $0.mediaTime } ?? 0
            for (s, p) in zip(samples, packets) {
                #expect(s.offset == p.pos && s.size == p.size && s.isSync == p.key)
                #expect(Int64(s.decodeTime) - shift == p.dts && s.presentationTime - shift == p.pts)
            }
        }
    }

    /// Cuts fall on the first key frame at or past each multiple of the target (key frames every
    /// 0.4 s, a target of 1 s: 1.2, then 2.0); every sample of every track is in exactly one
    /// segment, in order; the durations add up to the movie's.
    @Test func thePlanCutsAtKeyFramesAndTakesEverySampleOnce() throws {
        let (_, movie, bytes) = try movie()
        let plan = try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 1)
        #expect(zip(plan.segments.map(\.start), [0, 1.2, 2.0]).allSatisfy { abs($0 - $1) < 1e-9 })
        #expect(zip(plan.segments.map(\.duration), [1.2, 0.8, 1.0]).allSatisfy { abs($0 - $1) < 1e-9 })
        #expect(plan.segments.count == 3)
        for (t, track) in plan.tracks.enumerated() {
            #expect(plan.segments.map { $0.samples[t] }.reduce(0) { $0 + $1.count } == track.samples.count)
            for (a, b) in zip(plan.segments, plan.segments.dropFirst()) { #expect(a.samples[t].upperBound == b.samples[t].lowerBound) }
        }
        for segment in plan.segments { #expect(plan.tracks[0].samples[segment.samples[0].lowerBound].isSync) }
        // 0.4 s: the key frames every 0.4 s are each a cut.
        #expect(try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 0.4).segments.count == 8)
    }

    /// A media segment read back by the library's own fragment reader: one traf per track, its
    /// trun's samples those given, its data offsets pointing at their bytes in the mdat.
    @Test func aMediaSegmentReadsBackAsWritten() throws {
        let (_, movie, bytes) = try movie()
        let plan = try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 1)
        let segment = plan.segments[1]
        var runs: [FragmentRun] = []
        for (t, track) in plan.tracks.enumerated() {
            let samples = Array(track.samples[segment.samples[t]])
            let data = try samples.flatMap { try bytes.read(at: $0.offset, count: Int($0.size)) }
            runs.append(FragmentRun(trackID: track.trackID, baseDecodeTime: samples[0].decodeTime, samples: samples, data: data))
        }
        let written = CMAF.mediaSegment(sequenceNumber: 2, runs: runs)
        let boxes = try MP4Box.parse(written[...])
        #expect(boxes.map(\.type) == ["moof", "mdat"])
        #expect(boxes[0].first("mfhd")?.read(MovieFragmentHeader.self)?.sequenceNumber == 2)
        let trafs = boxes[0].all("traf")
        #expect(trafs.count == runs.count)
        for (traf, run) in zip(trafs, runs) {
            #expect(traf.first("tfhd")?.read(TrackFragmentHeader.self)?.trackID == run.trackID)
            #expect(traf.first("tfdt")?.read(TrackFragmentDecodeTime.self)?.baseMediaDecodeTime == run.baseDecodeTime)
            let trun = try #require(traf.first("trun")?.read(TrackRun.self))
            #expect(trun.samples.map(\.size) == run.samples.map(\.size))
            #expect(trun.samples.map(\.duration) == run.samples.map(\.duration))
            #expect(trun.samples.map { Int32(bitPattern: $0.compositionOffset) } == run.samples.map(\.compositionOffset))
            #expect(trun.samples.map { $0.flags == CMAF.syncSampleFlags } == run.samples.map(\.isSync))
            let start = Int(try #require(trun.dataOffset))
            #expect(Array(written[start..<(start + run.data.count)]) == run.data)
        }
    }

    /// The initialization segment: the sample descriptions as they were, no samples, a trex per
    /// track; ffprobe reads its streams.
    @Test func theInitializationSegmentDescribesTheTracksAndHoldsNoSamples() throws {
        let (_, movie, bytes) = try movie()
        let plan = try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 1)
        let written = CMAF.initializationSegment(of: movie, trackIndices: plan.tracks.map(\.index))
        let boxes = try MP4Box.parse(written[...])
        #expect(boxes.map(\.type) == ["ftyp", "moov"])
        let moov = MP4Movie(moov: boxes[1])
        #expect(moov.moov.first("mvex")?.all("trex").count == 2)
        for (i, original) in zip(moov.trackIndices, plan.tracks.map(\.index)) {
            #expect(moov.track(i).box.find(["mdia", "minf", "stbl", "stsd"]) == movie.track(original).box.find(["mdia", "minf", "stbl", "stsd"]))
            #expect(moov.track(i).box.find(["mdia", "minf", "stbl", "stsz"])?.read(SampleSizes.self)?.sampleCount == 0)
        }
        let initPath = folder.appendingPathComponent("init.mp4").path
        try Data(written).write(to: URL(fileURLWithPath: initPath))
        let streams = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", initPath])
        #expect(streams.split(whereSeparator: \.isNewline) == ["h264", "aac"])
    }

    /// A sound track's gapless facts in an initialization segment made from encoder formats: its
    /// edit list starts after the priming and lasts the input, and iTunes' tag says the same.
    @Test func anInitializationSegmentCarriesTheEncodersPriming() throws {
        var audio = CMAFTrackFormat(trackID: 1, codec: .aac(audioSpecificConfig: [0x11, 0x90], sampleRate: 48000, channels: 2))
        audio.gapless = CMAF.Gapless(priming: 1024, samples: 144_000, padding: 384)
        let boxes = try MP4Box.parse(CMAF.initializationSegment(of: [audio])[...])
        let movie = MP4Movie(moov: boxes[1])
        let track = movie.track(try #require(movie.trackIndices.first))
        #expect(track.edits == [EditList.Edit(duration: 3000, mediaTime: 1024)])
        let tag = try #require(MP4AudioEdit.gaplessTag(in: movie))
        #expect(tag.delay == 1024 && tag.count == 144_000)
    }

    /// A damaged sound track's edit list (lengths no track has) gives no priming facts, and does
    /// not trap: the numbers are the file's.
    @Test func aDamagedEditListGivesNoGaplessFacts() throws {
        var audio = CMAFTrackFormat(trackID: 1, codec: .aac(audioSpecificConfig: [0x11, 0x90], sampleRate: 48000, channels: 2))
        audio.gapless = CMAF.Gapless(priming: 1024, samples: 144_000, padding: 384)
        let movie = MP4Movie(moov: try MP4Box.parse(CMAF.initializationSegment(of: [audio])[...])[1])
        let i = try #require(movie.trackIndices.first)
        #expect(CMAF.gapless(of: movie.track(i), in: movie) != nil)
        for edit in [EditList.Edit(duration: UInt64.max / 2, mediaTime: 1024), EditList.Edit(duration: 3000, mediaTime: Int64.max)] {
            var damaged = movie, track = movie.track(i)
            track.setEdits([edit])
            damaged.setTrack(i, track)
            #expect(CMAF.gapless(of: damaged.track(i), in: damaged) == nil, "\(edit)")
        }
    }

    /// The segmenter as the writer drives it: a forced cut (flushSegment) at the next sync sample
    /// with an infinite target, and each segment's report of its tracks.
    @Test func aForcedCutAndTheSegmentsReports() throws {
        let video = CMAFTrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 16, height: 16))
        var segmenter = HLSSegmenter(tracks: [video], target: .infinity)
        var out: [HLSSegmenter.Segment] = []
        // 25 fps in 90 kHz ticks, a key frame every 5 frames; cut asked for after frame 7.
        for n in 0..<20 {
            if n == 8 { segmenter.flush(after: Double(7 * 3600) / 90_000) }
            out += try segmenter.add(HLSSegmenter.Sample(data: [UInt8](repeating: UInt8(n), count: 10), decodeTime: Int64(n * 3600),
                                                         presentationTime: Int64(n * 3600), duration: 3600, isSync: n % 5 == 0), track: 0)
        }
        out += try segmenter.finish()
        #expect(out.map { $0.tracks.first?.sampleCount } == [10, 10])
        #expect(out.map { $0.tracks.first?.earliestPresentationTime } == [0, 36000])
        #expect(out.map { $0.tracks.first?.duration } == [36000, 36000])
        #expect(out.allSatisfy { $0.tracks.first?.startsWithSyncSample == true })
        // The first sample's bytes are where the report says.
        let second = out[1], span = try #require(second.tracks.first)
        #expect(Array(second.bytes[span.firstSampleOffset..<span.firstSampleOffset + span.firstSampleSize]) == [UInt8](repeating: 10, count: 10))
    }

    /// A video track that starts without a key frame cannot be cut: refused, naming the track.
    @Test func aVideoTrackNotStartingOnAKeyFrameIsRefused() throws {
        let (_, original, bytes) = try movie()
        var movie = original
        let (i, track) = try #require(movie.tracks(handler: "vide").first)
        var stss = try #require(track.box.find(["mdia", "minf", "stbl", "stss"])?.read(SyncSamples.self))
        stss.numbers.removeFirst()
        movie.moov.children[i].modify(["mdia", "minf", "stbl", "stss"]) { $0.store(stss) }
        #expect(throws: ContainerError("its track \(track.trackID)'s first sample is not a key frame, so no segment could start there")) {
            try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 1)
        }
    }

    /// Tables that claim more than the file holds are refused at once, not walked: a size for all
    /// samples times a count past the file's bytes; runs of four billion samples (per chunk, per
    /// composition offset) end with the samples there are.
    @Test(.timeLimit(.minutes(10))) func tablesClaimingBillionsAreNotWalked() throws {
        let (_, original, bytes) = try movie()
        let (i, track) = try #require(original.tracks(handler: "vide").first)
        var movie = original
        var stsz = try #require(track.box.find(["mdia", "minf", "stbl", "stsz"])?.read(SampleSizes.self))
        stsz.sampleSize = 1
        stsz.sampleCount = 4_000_000_000
        stsz.sizes = []
        movie.moov.children[i].modify(["mdia", "minf", "stbl", "stsz"]) { $0.store(stsz) }
        #expect(throws: ContainerError("its track \(track.trackID)'s stsz box gives 4000000000 samples of 1 bytes, more than the file holds")) {
            try movie.track(i).samples(fileSize: bytes.count)
        }
        movie = original
        movie.moov.children[i].update(["mdia", "minf", "stbl", "stsc"], as: SampleToChunk.self) { $0.entries[0].samplesPerChunk = .max }
        movie.moov.children[i].update(["mdia", "minf", "stbl", "ctts"], as: CompositionOffsets.self) { $0.entries[0].count = .max }
        let samples = try movie.track(i).samples(fileSize: bytes.count)
        #expect(samples.count == 75)
    }

    /// The playlist's text: tags in RFC 8216's order, durations to the microsecond, the target
    /// the longest segment rounded; EVENT without ENDLIST.
    @Test func thePlaylistText() {
        var p = HLSMediaPlaylist(initializationSegment: "init.mp4", segments: [("s0.m4s", 6.006), ("s1.m4s", 6.5), ("s2.m4s", 0.25)])
        #expect(p.targetDuration == 7)
        #expect(p.text == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:7
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:6.006000,
            s0.m4s
            #EXTINF:6.500000,
            s1.m4s
            #EXTINF:0.250000,
            s2.m4s
            #EXT-X-ENDLIST

            """)
        p = HLSMediaPlaylist(initializationSegment: "init.mp4", segments: [("s0.m4s", 5.4)], kind: .event)
        #expect(p.targetDuration == 5)
        #expect(!p.text.contains("ENDLIST") && p.text.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
    }
}
