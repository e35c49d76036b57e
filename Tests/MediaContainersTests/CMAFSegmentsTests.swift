import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import TestSupport

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
    @Test(.media) func theSampleTableGivesEveryPacket() throws {
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
    @Test(.media) func thePlanCutsAtKeyFramesAndTakesEverySampleOnce() throws {
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
    @Test(.media) func aMediaSegmentReadsBackAsWritten() throws {
        let (_, movie, bytes) = try movie()
        let plan = try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 1)
        let segment = plan.segments[1]
        var runs: [FragmentRun] = []
        for (t, track) in plan.tracks.enumerated() {
            let samples = Array(track.samples[segment.samples[t]])
            let data = try samples.flatMap { try bytes.read(at: $0.offset, count: Int($0.size)) }
            runs.append(FragmentRun(trackID: track.trackID, timescale: UInt32(track.timescale), baseDecodeTime: samples[0].decodeTime, samples: samples, data: data))
        }
        let written = CMAF.fragment(sequenceNumber: 2, runs: runs)
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

    /// A media segment is several fragments interleaving the tracks in time (issue 47): each a
    /// moof numbered on from the first, with a traf per track whose tfdt continues the last one's
    /// and whose samples span at most the fragment duration; every sample once, in order, its
    /// bytes where its trun says; a cap on bytes cuts sooner.
    @Test(.media) func aMediaSegmentIsFragmentsThatInterleaveTheTracks() throws {
        let (_, movie, bytes) = try movie()
        let plan = try HLSSegmentPlan(movie: movie, fileSize: bytes.count, target: 3)
        #expect(plan.segments.count == 1)
        var runs: [FragmentRun] = []
        for (t, track) in plan.tracks.enumerated() {
            let samples = Array(track.samples[plan.segments[0].samples[t]])
            let data = try samples.flatMap { try bytes.read(at: $0.offset, count: Int($0.size)) }
            runs.append(FragmentRun(trackID: track.trackID, timescale: UInt32(track.timescale), baseDecodeTime: samples[0].decodeTime,
                                    samples: samples, data: data))
        }
        for (maxBytes, least) in [(CMAF.fragmentBytes, 3), (4096, 6)] {
            let written = CMAF.mediaSegment(firstSequenceNumber: 7, runs: runs, maxBytes: maxBytes)
            let boxes = try MP4Box.parse(written.bytes[...])
            #expect(boxes.count == 2 * Int(written.fragmentCount) && written.fragmentCount >= least)
            #expect(boxes.map(\.type) == Array(repeating: ["moof", "mdat"] as [FourCC], count: Int(written.fragmentCount)).flatMap { $0 })
            var start = 0
            var seen = runs.map { _ in [MP4Sample]() }, data = runs.map { _ in [UInt8]() }
            var decode = runs.map(\.baseDecodeTime)
            for (f, moof) in boxes.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element).enumerated() {
                #expect(moof.first("mfhd")?.read(MovieFragmentHeader.self)?.sequenceNumber == 7 + UInt32(f))
                for traf in moof.all("traf") {
                    let k = try #require(runs.firstIndex { $0.trackID == traf.first("tfhd")?.read(TrackFragmentHeader.self)?.trackID })
                    #expect(traf.first("tfdt")?.read(TrackFragmentDecodeTime.self)?.baseMediaDecodeTime == decode[k])
                    let trun = try #require(traf.first("trun")?.read(TrackRun.self))
                    let n = seen[k].count
                    let mine = Array(runs[k].samples[n..<(n + trun.samples.count)])
                    #expect(trun.samples.map(\.size) == mine.map(\.size))
                    let span = mine.dropLast().reduce(0.0) { $0 + Double($1.duration) } / Double(runs[k].timescale)
                    #expect(span < CMAF.fragmentDuration)
                    let at = start + Int(try #require(trun.dataOffset)), length = mine.reduce(0) { $0 + Int($1.size) }
                    data[k] += written.bytes[at..<(at + length)]
                    seen[k] += mine
                    decode[k] += mine.reduce(0) { $0 + UInt64($1.duration) }
                }
                start += Int(moof.length()) + Int(boxes[2 * f + 1].length())
            }
            #expect(seen.map(\.count) == runs.map(\.samples.count))
            #expect(data == runs.map(\.data))
            for k in runs.indices { #expect(Array(written.bytes[written.firstSampleOffsets[k]...].prefix(16)) == Array(runs[k].data.prefix(16))) }
        }
    }

    /// The initialization segment: the sample descriptions as they were, no samples, a trex per
    /// track; ffprobe reads its streams.
    @Test(.media) func theInitializationSegmentDescribesTheTracksAndHoldsNoSamples() throws {
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
        var audio = MP4TrackFormat(trackID: 1, codec: .aac(audioSpecificConfig: [0x11, 0x90], sampleRate: 48000, channels: 2))
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
        var audio = MP4TrackFormat(trackID: 1, codec: .aac(audioSpecificConfig: [0x11, 0x90], sampleRate: 48000, channels: 2))
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
        let video = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 16, height: 16))
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

    /// Cuts asked for before the segmenter has their samples (an app appends ahead of what is
    /// segmented) are each made: two flushes before any frame, after frames 7 and 12, cut at the
    /// key frames 10 and 15 (the second asked was once kept alone, and the first cut lost).
    @Test func flushesAskedAheadAreEachMade() throws {
        let video = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 16, height: 16))
        var segmenter = HLSSegmenter(tracks: [video], target: .infinity)
        segmenter.flush(after: Double(12 * 3600) / 90_000)
        segmenter.flush(after: Double(7 * 3600) / 90_000)
        var out: [HLSSegmenter.Segment] = []
        for n in 0..<20 {
            out += try segmenter.add(HLSSegmenter.Sample(data: [UInt8(n)], decodeTime: Int64(n * 3600), presentationTime: Int64(n * 3600),
                                                         duration: 3600, isSync: n % 5 == 0), track: 0)
        }
        out += try segmenter.finish()
        #expect(out.map { $0.tracks.first?.sampleCount } == [10, 5, 5])
    }

    /// 25 fps video in 90 kHz ticks, frame `n` a sync sample when `key(n)`.
    func frames(_ range: Range<Int>, key: (Int) -> Bool, skipping missing: Set<Int> = []) -> [HLSSegmenter.Sample] {
        range.filter { !missing.contains($0) }.map { n in
            HLSSegmenter.Sample(data: [UInt8(truncatingIfNeeded: n)], decodeTime: Int64(n * 3600), presentationTime: Int64(n * 3600), duration: 3600, isSync: key(n))
        }
    }

    static let video = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 16, height: 16))

    /// With an origin, the cuts lie on its grid whatever the stream's first frame: a stream
    /// starting at 0.4 s (frame 10), cut every second from 0, cuts at 1, 2 and 3 s (a first
    /// segment of 0.6 s), where the encoder was asked for key frames; without one, at 1.4, 2.4…
    @Test func cutsOnTheGridOfTheirOrigin() throws {
        func durations(origin: Double?) throws -> [Double] {
            var segmenter = HLSSegmenter(tracks: [Self.video], target: 1)
            segmenter.origin = origin
            var out: [HLSSegmenter.Segment] = []
            for sample in frames(10..<100, key: { $0 % 25 == 0 || $0 == 10 || $0 == 35 || $0 == 60 || $0 == 85 }) { out += try segmenter.add(sample, track: 0) }
            out += try segmenter.finish()
            return out.map { ($0.duration * 1000).rounded() / 1000 }
        }
        #expect(try durations(origin: 0) == [0.6, 1, 1, 1])
        #expect(try durations(origin: nil) == [1, 1, 1, 0.6])
    }

    /// Where key frames cannot be made (``HLSSegmenter/limitsKeyFrameDistance``), key frames
    /// farther apart than the target are refused at the first frame that shows the next one is
    /// late (not when it comes: a camera that sends one key frame never sends the next), naming
    /// the times and the setting; half a frame's leeway lets 60 frames of 30000/1001 video
    /// (2.002 s) pass for 2 s.
    @Test func keyFramesFartherApartThanTheTargetAreRefusedWhenTheyCannotBeMade() throws {
        var segmenter = HLSSegmenter(tracks: [Self.video], target: 2)
        segmenter.limitsKeyFrameDistance = true
        segmenter.keyFrameSetting = "segmentDuration"
        var error: ContainerError?
        do {
            for sample in frames(0..<100, key: { $0 % 75 == 0 }) { _ = try segmenter.add(sample, track: 0) }
        } catch let e { error = e }
        #expect(error?.reason.hasPrefix("key frames are more than 2.04 s apart (none since the one at 0 s, by the frame at 2.04 s), farther apart than the segment duration (2 s)") == true,
                "\(String(describing: error))")
        #expect(error?.reason.contains("set segmentDuration to the key frames' distance or more") == true)
        #expect(segmenter.refusedSparseKeyFrames)
        // A key frame that comes late is named as such.
        var late = HLSSegmenter(tracks: [Self.video], target: 2)
        late.limitsKeyFrameDistance = true
        late.keyFrameSetting = "segmentDuration"
        var lateError: ContainerError?
        do {
            for sample in frames(0..<100, key: { $0 == 0 || $0 == 51 }) { _ = try late.add(sample, track: 0) }
        } catch let e { lateError = e }
        #expect(lateError?.reason.hasPrefix("key frames are 2.04 s apart (from 0 s to the next one at 2.04 s)") == true, "\(String(describing: lateError))")
        #expect(lateError?.reason.contains("set segmentDuration to 3 s or more") == true)
        // Without the limit, the same frames make a 3-second segment.
        var unlimited = HLSSegmenter(tracks: [Self.video], target: 2)
        var out: [HLSSegmenter.Segment] = []
        for sample in frames(0..<100, key: { $0 % 75 == 0 }) { out += try unlimited.add(sample, track: 0) }
        #expect(out.map(\.duration) == [3])
        // 29.97 fps: 3003 ticks a frame, a key frame every 60 frames, 2.002 s apart: accepted.
        var ntsc = HLSSegmenter(tracks: [Self.video], target: 2)
        ntsc.limitsKeyFrameDistance = true
        for n in 0..<200 {
            _ = try ntsc.add(HLSSegmenter.Sample(data: [0], decodeTime: Int64(n * 3003), presentationTime: Int64(n * 3003), duration: 3003, isSync: n % 60 == 0), track: 0)
        }
        #expect(!ntsc.refusedSparseKeyFrames)
    }

    /// A segment being gathered holds at most ``HLSSegmenter/heldBytesLimit`` (issue 73, class
    /// 4): a stream whose key frames stop coming is refused there, not held in memory until the
    /// next; a segment's bytes are counted out again when it is cut.
    @Test func aSegmentHoldsAtMostItsLimitOfBytes() throws {
        func big(_ n: Int, key: Bool) -> HLSSegmenter.Sample {
            HLSSegmenter.Sample(data: [UInt8](repeating: 0, count: 1000), decodeTime: Int64(n * 3600), presentationTime: Int64(n * 3600), duration: 3600, isSync: key)
        }
        var segmenter = HLSSegmenter(tracks: [Self.video], target: 1)
        segmenter.heldBytesLimit = 30_000
        // A key frame a second (25 frames, 25 kB a segment): any length passes.
        var out: [HLSSegmenter.Segment] = []
        for n in 0..<250 { out += try segmenter.add(big(n, key: n % 25 == 0), track: 0) }
        #expect(out.count == 9)
        // Then none: the 31st kB held is refused, naming the last key frame.
        var error: ContainerError?
        do {
            for n in 250..<400 { _ = try segmenter.add(big(n, key: n == 250), track: 0) }
        } catch let e { error = e }
        #expect(error?.reason.hasPrefix("a segment would hold more than 0 MiB: the video's key frames, where segments are cut, have not come for that long (the last key frame at 10 s)") == true,
                "\(String(describing: error))")
    }

    /// The peak segment bit rate as RFC 8216 4.1 defines it: the busiest run of consecutive
    /// segments lasting 0.5 to 1.5 target durations (a short busy segment alone is not one);
    /// the average over everything.
    @Test func bitRatesOfRunsOfSegments() {
        var rates = HLSBitRates(targetDuration: 2)
        #expect(rates.average == nil)
        // 0.1 s of 10 kB (800 kb/s alone), then 2 s segments of 50, 100 and 40 kB.
        for (bytes, seconds) in [(10_000, 0.1), (50_000, 2.0), (100_000, 2.0), (40_000, 2.0)] { rates.add(bytes: bytes, duration: seconds) }
        // Runs within 1 to 3 s: [0.1 + 2] 60 kB, [2] 50, [2] 100, [2] 40 kB: 100 kB over 2 s.
        #expect(rates.peak == 400_000)
        #expect(rates.average == Int((200_000.0 * 8 / 6.1).rounded()))
        // A stream shorter than half the target: its busiest segment.
        var short = HLSBitRates(targetDuration: 6)
        short.add(bytes: 1000, duration: 0.5)
        #expect(short.peak == 16_000)
    }

    /// An event or live playlist's declared target duration stands whatever its segments; the
    /// multivariant playlist names a separate sound's rendition, and each variant its group.
    @Test func aDeclaredTargetDurationAndAnAudioRendition() {
        var p = HLSMediaPlaylist(initializationSegment: "init.mp4", segments: [("s0.m4s", 1.9)], kind: .live)
        p.declaredTargetDuration = 3
        #expect(p.text.contains("#EXT-X-TARGETDURATION:3\n"))
        #expect(HLSMediaPlaylist.targetDuration(aimingAt: 2) == 2 && HLSMediaPlaylist.targetDuration(aimingAt: 2.5) == 3 && HLSMediaPlaylist.targetDuration(aimingAt: 0.5) == 1)
        let master = HLSMultivariantPlaylist(
            variants: [HLSMultivariantPlaylist.Variant(uri: "v0/p.m3u8", bandwidth: 500_000, averageBandwidth: 400_000, codecs: ["avc1.64001f", "mp4a.40.2"],
                                                       resolution: (1280, 720), audioGroup: "audio")],
            audio: [HLSMultivariantPlaylist.AudioRendition(group: "audio", name: "audio", uri: "audio/p.m3u8", channels: 2)])
        #expect(master.text == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio/p.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=500000,AVERAGE-BANDWIDTH=400000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,AUDIO="audio"
            v0/p.m3u8

            """)
    }

    /// A video track that starts without a key frame cannot be cut: refused, naming the track.
    @Test(.media) func aVideoTrackNotStartingOnAKeyFrameIsRefused() throws {
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
    @Test(.media, .timeLimit(.minutes(10))) func tablesClaimingBillionsAreNotWalked() throws {
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
