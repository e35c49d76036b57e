import Testing
import TestSupport
@testable import MediaContainers

/// The one builder of sample tables: what it writes reads back, sample for sample, through the
/// library's reader, and it keeps the index at the cost the file itself pays.
@Suite struct SampleTableBuilderTests {
    /// `samples` into the builder, in chunks of 1 to `chunk` samples, one after another from
    /// byte 1000; read back from a track of those tables.
    func roundTrip(_ samples: [MP4Sample], chunk: Int, seed: UInt64, lastDuration: UInt32? = nil) throws -> (read: [MP4Sample], written: [MP4Sample]) {
        var random = SplitMix(seed: seed)
        var builder = SampleTableBuilder()
        var written = samples
        var at: UInt64 = 1000
        var i = 0
        while i < samples.count {
            let n = min(samples.count - i, 1 + random.below(chunk))
            builder.addChunk(offset: at, samples: n)
            for k in i..<(i + n) {
                // Each duration open until the next sample, as a writer learns it.
                builder.append(size: samples[k].size, duration: 0, compositionOffset: samples[k].compositionOffset, isSync: samples[k].isSync)
                if k + 1 < samples.count || lastDuration == nil { builder.setLastDuration(samples[k].duration) }
                written[k].offset = at
                at += UInt64(samples[k].size)
            }
            i += n
        }
        if let lastDuration, !samples.isEmpty {
            builder.setLastDuration(lastDuration)
            written[written.count - 1].duration = lastDuration
        }
        let format = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 320, height: 240))
        let track = MP4Track(box: format.trak(tables: builder.boxes(), mediaDuration: builder.mediaDuration))
        let read = try track.samples(fileSize: .max)
        #expect(builder.count == samples.count)
        #expect(builder.mediaDuration == written.reduce(UInt64(0)) { $0 + UInt64($1.duration) })
        return (read, written)
    }

    static func samples(_ count: Int, seed: UInt64, video: Bool) -> [MP4Sample] {
        var random = SplitMix(seed: seed)
        var time: UInt64 = 0
        return (0..<count).map { i in
            // Durations in runs with a change now and then; offsets B-frame-like and some negative.
            let duration: UInt32 = random.below(10) == 0 ? UInt32(random.below(3000)) : 3000
            let offset: Int32 = video ? Int32(random.below(5) - 1) * 3000 : 0
            let s = MP4Sample(offset: 0, size: UInt32(1 + random.below(5000)), decodeTime: time, duration: duration,
                              compositionOffset: offset, isSync: !video || i % 30 == 0 || random.below(50) == 0)
            time += UInt64(duration)
            return s
        }
    }

    @Test func everySampleReadsBackAsItWasGiven() throws {
        for (seed, video) in [(1 as UInt64, true), (2, false), (3, true)] {
            let samples = Self.samples(5000, seed: seed, video: video)
            let (read, written) = try roundTrip(samples, chunk: 40, seed: seed)
            #expect(read == written, "seed \(seed)")
        }
    }

    @Test func theLastDurationIsTheOneGivenLast() throws {
        let samples = Self.samples(100, seed: 7, video: true)
        let (read, written) = try roundTrip(samples, chunk: 8, seed: 7, lastDuration: 1234)
        #expect(read.last?.duration == 1234)
        #expect(read == written)
    }

    @Test func tablesOfOnlySyncSamplesOrNoOffsetsLeaveTheirBoxesOut() {
        var builder = SampleTableBuilder()
        builder.addChunk(offset: 0, samples: 3)
        for _ in 0..<3 { builder.append(size: 10, duration: 1024, compositionOffset: 0, isSync: true) }
        #expect(builder.boxes().map(\.type) == ["stts", "stsz", "stsc", "stco"])
        builder.append(size: 10, duration: 1024, compositionOffset: -5, isSync: false)
        let types = builder.boxes().map(\.type)
        #expect(types == ["stts", "ctts", "stss", "stsz", "stsc", "stco"])
        // A negative offset: ctts version 1.
        #expect(builder.boxes()[1].body.first == 1)
        // Samples 1 to 3 are sync samples, 4 is not.
        #expect(builder.boxes()[2].read(SyncSamples.self)?.numbers == [1, 2, 3])
    }

    @Test func chunksOfTheSameShapeAreOneRunAndDescriptionsAreKept() {
        var builder = SampleTableBuilder()
        for (i, d) in [0, 0, 0, 1, 1, 0].enumerated() { builder.addChunk(offset: UInt64(i * 100), samples: 4, description: d) }
        let stsc = builder.boxes().first { $0.type == "stsc" }?.read(SampleToChunk.self)
        #expect(stsc?.entries.map { [$0.firstChunk, $0.samplesPerChunk, $0.sampleDescriptionIndex] } == [[1, 4, 1], [4, 4, 2], [6, 4, 1]])
    }

    /// An hour of AAC at 48 kHz (168,750 packets, 12 a chunk) and an hour of 30 fps video
    /// (108,000 frames, 8 a chunk, a key frame a second), with B-frames and without: what the
    /// index costs a sample held (arrays' room to grow included) and in the file. Printed as
    /// BENCHMARKS.md quotes them (`swift test --filter anHourCosts`).
    @Test func anHourCostsAFewBytesASample() {
        func cost(_ count: Int, chunk: Int, bFrames: Bool, keyEvery: Int) -> (held: Double, stored: Double) {
            var t = SampleTableBuilder()
            for i in 0..<count {
                if i % chunk == 0 { t.addChunk(offset: UInt64(i) * 300, samples: chunk) }
                t.append(size: UInt32(280 + i % 40), duration: 1024, compositionOffset: bFrames ? Int32([2, 0, 1][i % 3]) * 3000 : 0, isSync: i % keyEvery == 0)
            }
            let stored = t.boxes().reduce(0) { $0 + Int($1.length()) }
            return (Double(t.byteCount) / Double(count), Double(stored) / Double(count))
        }
        let audio = cost(168_750, chunk: 12, bFrames: false, keyEvery: 1)
        let video = cost(108_000, chunk: 8, bFrames: false, keyEvery: 30), bVideo = cost(108_000, chunk: 8, bFrames: true, keyEvery: 30)
        print("index cost, bytes a sample held / in the file: AAC \(audio), video \(video), video with B-frames \(bVideo)")
        // Sizes (4 bytes) and chunks; B-frames' offsets are a run a sample (8 bytes more).
        #expect(audio.held < 8 && video.held < 8 && bVideo.held < 20, "\(audio) \(video) \(bVideo)")
        #expect(audio.stored < 5 && video.stored < 5 && bVideo.stored < 13.5, "\(audio) \(video) \(bVideo)")
    }
}
