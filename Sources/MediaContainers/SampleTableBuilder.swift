/// A track's sample tables (ISO/IEC 14496-12 8.6-8.7) built a sample at a time, kept as the file
/// stores them: what a sample costs is its size (`stsz`, 4 bytes); durations (`stts`) and
/// composition offsets (`ctts`) are runs, the sync samples (`stss`) their numbers, the chunks
/// (`stsc`, `stco`/`co64`) a run and an offset each. An hour of AAC (168,750 packets) costs
/// 0.7 MB here; a sample as a value (``MP4Sample``, 32 bytes, in an array that doubles) cost 5-11 MB.
/// The one builder of sample tables: the writer's and a join's (``MP4Join/tables(_:chunkSizes:offsets:descriptions:)``).
/// Past a bound (``init(spillingPast:)``, the writer's), the per-sample tables (sizes, runs of
/// durations and offsets, sync samples) move to a temporary file in pieces
/// (``SampleTableSpill``), so what a table holds in memory stays under its bound at any length;
/// the chunk table stays in memory (a chunk is a quarter of a second: 8 bytes).
///
/// A copy shares its tables' storage with the original (append-only): each writes the tables it
/// had; one builder appends.
package struct SampleTableBuilder: Sendable {
    /// The samples so far.
    package private(set) var count = 0
    private let bound: Int?
    private let folder: String?
    /// The entries, made at the first sample: sizes, closed runs of durations (count, delta),
    /// closed runs of offsets (count, offset), sync sample numbers.
    private var stores: Stores?
    private final class Stores: Sendable {
        let sizes, durations, offsets, syncNumbers: SampleTableSpill
        init(bound: Int?, folder: String?) {
            (sizes, durations, offsets, syncNumbers) = (.init(bound: bound, folder: folder), .init(bound: bound, folder: folder),
                                                        .init(bound: bound, folder: folder), .init(bound: bound, folder: folder))
        }
    }
    /// The run of durations being extended (not yet in `stores.durations`), and the closed
    /// runs before it; the last sample's duration stays open (``lastDuration``) until the next
    /// sample comes or the tables are written, since a writer learns it from the next sample's
    /// decode time.
    private var durationRun: TimeToSample.Entry?
    private var durationRuns: UInt32 = 0
    package private(set) var lastDuration: UInt32 = 0
    /// The closed runs' total, and the open one's.
    private var closedDuration: UInt64 = 0
    private var offsetRun: CompositionOffsets.Entry?
    private var offsetRuns: UInt32 = 0
    private var shifted = false
    private var negative = false
    /// The sync samples listed, once a sample is not one: a table of only sync samples
    /// (sound) writes no `stss`.
    private var syncCount: UInt32 = 0
    private var allSync = true
    private var chunkOffsets: [UInt64] = []
    private var chunkRuns: [SampleToChunk.Entry] = []
    private var chunkCount: UInt32 = 0
    /// The smallest and largest sample (0 and 0 before the first).
    package private(set) var smallestSize: UInt32 = 0
    package private(set) var largestSize: UInt32 = 0

    /// `spillingPast`: the bytes each per-sample table holds in memory before they move to a
    /// temporary file; nil: all in memory (a join's tables, made from samples it holds anyway).
    /// `folder`: where (nil: ``TemporaryFile/folder``).
    package init(spillingPast bound: Int? = nil, in folder: String? = nil) { (self.bound, self.folder) = (bound, folder) }

    /// The samples' total duration, the open one's included: where the media ends.
    package var mediaDuration: UInt64 { closedDuration &+ (count > 0 ? UInt64(lastDuration) : 0) }

    /// What the tables hold in memory, in bytes: the index's cost.
    package var byteCount: Int {
        (stores.map { [$0.sizes, $0.durations, $0.offsets, $0.syncNumbers].reduce(0) { $0 + $1.memoryBytes } } ?? 0)
            + chunkOffsets.capacity * 8 + chunkRuns.capacity * 12
    }

    /// What the tables keep in their temporary files, in bytes.
    package var spilledByteCount: UInt64 {
        stores.map { [$0.sizes, $0.durations, $0.offsets, $0.syncNumbers].reduce(0) { $0 + $1.fileBytes } } ?? 0
    }

    /// Adds a sample: its size, its duration (open: ``setLastDuration(_:)`` may change it), how far
    /// its presentation is from its decode, whether a decoder can start at it.
    package mutating func append(size: UInt32, duration: UInt32, compositionOffset: Int32, isSync: Bool) {
        if stores == nil { stores = Stores(bound: bound, folder: folder) }
        let stores = stores!
        if count > 0 { close() }
        lastDuration = duration
        stores.sizes.append(size)
        (smallestSize, largestSize) = count == 0 ? (size, size) : (min(smallestSize, size), max(largestSize, size))
        if let run = offsetRun, run.offset == compositionOffset, run.count < .max {
            offsetRun!.count += 1
        } else {
            if let run = offsetRun {
                stores.offsets.append(run.count, UInt32(bitPattern: run.offset))
                offsetRuns &+= 1
            }
            offsetRun = .init(count: 1, offset: compositionOffset)
        }
        if compositionOffset != 0 { shifted = true }
        if compositionOffset < 0 { negative = true }
        count += 1
        if !isSync, allSync {
            // Every sample before was a sync sample: now they are listed.
            allSync = false
            for n in 0..<UInt32(clamping: count - 1) { stores.syncNumbers.append(n + 1) }
            syncCount = UInt32(clamping: count - 1)
        } else if isSync, !allSync {
            stores.syncNumbers.append(UInt32(clamping: count))
            syncCount &+= 1
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
        if let run = durationRun, run.delta == lastDuration, run.count < .max {
            durationRun!.count += 1
        } else {
            if let run = durationRun {
                stores!.durations.append(run.count, run.delta)
                durationRuns &+= 1
            }
            durationRun = .init(count: 1, delta: lastDuration)
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
    /// sample is not a sync sample), `stsz`, `stsc`, `stco` (`co64` past 4 GiB). The per-sample
    /// ones are read from the builder's storage as they are written (``MP4Box/Content/spilled``).
    package func boxes() -> [MP4Box] {
        // Each table's length is the builder's own count of what it put there: a copy of the
        // builder (which shares the storage) writes what it had, whatever another appends.
        func box(_ type: FourCC, version: UInt8 = 0, _ table: KeyPath<Stores, SampleTableSpill>, count: UInt32, stored: Int, entryBytes: Int,
                 leading: [UInt8] = [], trailing: [UInt8] = []) -> MP4Box {
            var head: [UInt8] = []
            head.appendVersionAndFlags(version, 0)
            head += leading
            head.appendU32(count)
            guard let stores else { return MP4Box(type: type, body: head + trailing) }
            let spill = stores[keyPath: table], length = UInt64(stored) * UInt64(entryBytes)
            assert(length <= spill.count, "a sample table's storage holds less than its builder put there")
            return MP4Box(type: type, spilled: SpilledBody(leading: head, table: spill, length: min(length, spill.count), trailing: trailing))
        }
        // The runs still open: the durations' (the last sample's joined to it when it has its
        // delta) and the offsets'.
        var open: [TimeToSample.Entry] = durationRun.map { [$0] } ?? []
        if count > 0 {
            if let last = open.last, last.delta == lastDuration, last.count < .max { open[open.count - 1].count += 1 } else { open.append(.init(count: 1, delta: lastDuration)) }
        }
        var openDurations: [UInt8] = []
        for r in open { openDurations.appendU32(r.count); openDurations.appendU32(r.delta) }
        var tables = [box("stts", \.durations, count: durationRuns &+ UInt32(open.count), stored: Int(durationRuns), entryBytes: 8, trailing: openDurations)]
        if shifted, let run = offsetRun {
            var last: [UInt8] = []
            last.appendU32(run.count); last.appendU32(UInt32(bitPattern: run.offset))
            tables.append(box("ctts", version: negative ? 1 : 0, \.offsets, count: offsetRuns &+ 1, stored: Int(offsetRuns), entryBytes: 8, trailing: last))
        }
        if !allSync { tables.append(box("stss", \.syncNumbers, count: syncCount, stored: Int(syncCount), entryBytes: 4)) }
        // Sample size 0 (each its own), then the count.
        tables.append(box("stsz", \.sizes, count: UInt32(clamping: count), stored: count, entryBytes: 4, leading: [0, 0, 0, 0]))
        var stsc: [UInt8] = []
        stsc.appendVersionAndFlags(0, 0)
        stsc.appendU32(UInt32(chunkRuns.count))
        for r in chunkRuns { stsc.appendU32(r.firstChunk); stsc.appendU32(r.samplesPerChunk); stsc.appendU32(r.sampleDescriptionIndex) }
        tables.append(MP4Box(type: "stsc", body: stsc))
        tables.append(MP4Box(ChunkOffsets(chunkOffsets)))
        return tables
    }
}
