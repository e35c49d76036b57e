/// A track's sample tables (ISO/IEC 14496-12 8.6-8.7) built a sample at a time, kept as the file
/// stores them: what a sample costs is its size (`stsz`, 4 bytes); durations (`stts`) and
/// composition offsets (`ctts`) are runs, the sync samples (`stss`) their numbers, the chunks
/// (`stsc`, `stco`/`co64`) a run and an offset each. An hour of AAC (168,750 packets) costs
/// 0.7 MB here; a sample as a value (``MP4Sample``, 32 bytes, in an array that doubles) cost 5-11 MB.
/// The one builder of sample tables: the writer's and a join's (``MP4Join/tables(_:chunkSizes:offsets:descriptions:)``).
package struct SampleTableBuilder: Sendable {
    /// The samples so far.
    package private(set) var count = 0
    private var sizes: [UInt32] = []
    /// Closed runs of durations; the last sample's duration stays open (``lastDuration``) until
    /// the next sample comes or the tables are written, since a writer learns it from the next
    /// sample's decode time.
    private var durations: [TimeToSample.Entry] = []
    package private(set) var lastDuration: UInt32 = 0
    /// The closed runs' total, and the open one's.
    private var closedDuration: UInt64 = 0
    private var offsets: [CompositionOffsets.Entry] = []
    private var shifted = false
    private var negative = false
    /// The sync samples' numbers (from 1), once a sample is not one: a table of only sync samples
    /// (sound) writes no `stss`.
    private var syncNumbers: [UInt32] = []
    private var allSync = true
    private var chunkOffsets: [UInt64] = []
    private var chunkRuns: [SampleToChunk.Entry] = []
    private var chunkCount: UInt32 = 0
    /// The smallest and largest sample (0 and 0 before the first).
    package private(set) var smallestSize: UInt32 = 0
    package private(set) var largestSize: UInt32 = 0

    package init() {}

    /// The samples' total duration, the open one's included: where the media ends.
    package var mediaDuration: UInt64 { closedDuration &+ (count > 0 ? UInt64(lastDuration) : 0) }

    /// What the tables hold, in bytes: the index's cost in memory.
    package var byteCount: Int {
        sizes.capacity * 4 + durations.capacity * 8 + offsets.capacity * 8 + syncNumbers.capacity * 4
            + chunkOffsets.capacity * 8 + chunkRuns.capacity * 12
    }

    /// Adds a sample: its size, its duration (open: ``setLastDuration(_:)`` may change it), how far
    /// its presentation is from its decode, whether a decoder can start at it.
    package mutating func append(size: UInt32, duration: UInt32, compositionOffset: Int32, isSync: Bool) {
        if count > 0 { close() }
        lastDuration = duration
        sizes.append(size)
        (smallestSize, largestSize) = count == 0 ? (size, size) : (min(smallestSize, size), max(largestSize, size))
        if let last = offsets.last, last.offset == compositionOffset, last.count < .max {
            offsets[offsets.count - 1].count += 1
        } else {
            offsets.append(.init(count: 1, offset: compositionOffset))
        }
        if compositionOffset != 0 { shifted = true }
        if compositionOffset < 0 { negative = true }
        count += 1
        if !isSync, allSync {
            // Every sample before was a sync sample: now they are listed.
            allSync = false
            syncNumbers = (0..<UInt32(clamping: count - 1)).map { $0 + 1 }
        } else if isSync, !allSync {
            syncNumbers.append(UInt32(clamping: count))
        }
    }

    /// The last sample's duration, now known.
    package mutating func setLastDuration(_ duration: UInt32) {
        guard count > 0 else { return }
        lastDuration = duration
    }

    /// Closes the last sample's duration into the runs.
    private mutating func close() {
        closedDuration &+= UInt64(lastDuration)
        if let last = durations.last, last.delta == lastDuration, last.count < .max {
            durations[durations.count - 1].count += 1
        } else {
            durations.append(.init(count: 1, delta: lastDuration))
        }
    }

    /// Adds a chunk of `samples` samples at `offset`, of sample description `description` (from 0).
    package mutating func addChunk(offset: UInt64, samples: Int, description: Int = 0) {
        chunkOffsets.append(offset)
        chunkCount += 1
        let perChunk = UInt32(clamping: samples), index = UInt32(clamping: description + 1)
        if let last = chunkRuns.last, last.samplesPerChunk == perChunk, last.sampleDescriptionIndex == index { return }
        chunkRuns.append(.init(firstChunk: chunkCount, samplesPerChunk: perChunk, sampleDescriptionIndex: index))
    }

    /// The tables as boxes, in the order `stbl` holds them after `stsd`: `stts`, `ctts` (when a
    /// sample's presentation is not its decode; version 1 when one is before it), `stss` (when a
    /// sample is not a sync sample), `stsz`, `stsc`, `stco` (`co64` past 4 GiB).
    package func boxes() -> [MP4Box] {
        func box(_ type: FourCC, version: UInt8 = 0, entries: Int, entrySize: Int, _ build: (inout [UInt8]) -> Void) -> MP4Box {
            var body: [UInt8] = []
            body.reserveCapacity(8 + entries * entrySize)
            body.appendVersionAndFlags(version, 0)
            build(&body)
            return MP4Box(type: type, body: body)
        }
        var runs = durations
        if count > 0 {
            if let last = runs.last, last.delta == lastDuration, last.count < .max { runs[runs.count - 1].count += 1 } else { runs.append(.init(count: 1, delta: lastDuration)) }
        }
        var tables = [box("stts", entries: runs.count, entrySize: 8) { b in
            b.appendU32(UInt32(runs.count))
            for r in runs { b.appendU32(r.count); b.appendU32(r.delta) }
        }]
        if shifted {
            tables.append(box("ctts", version: negative ? 1 : 0, entries: offsets.count, entrySize: 8) { b in
                b.appendU32(UInt32(offsets.count))
                for r in offsets { b.appendU32(r.count); b.appendU32(UInt32(bitPattern: r.offset)) }
            })
        }
        if !allSync {
            tables.append(box("stss", entries: syncNumbers.count, entrySize: 4) { b in
                b.appendU32(UInt32(syncNumbers.count))
                for n in syncNumbers { b.appendU32(n) }
            })
        }
        tables.append(box("stsz", entries: sizes.count, entrySize: 4) { b in
            b.appendU32(0)
            b.appendU32(UInt32(clamping: sizes.count))
            for s in sizes { b.appendU32(s) }
        })
        tables.append(box("stsc", entries: chunkRuns.count, entrySize: 12) { b in
            b.appendU32(UInt32(chunkRuns.count))
            for r in chunkRuns { b.appendU32(r.firstChunk); b.appendU32(r.samplesPerChunk); b.appendU32(r.sampleDescriptionIndex) }
        })
        tables.append(MP4Box(ChunkOffsets(chunkOffsets)))
        return tables
    }
}
