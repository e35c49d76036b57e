/// A track's samples as its sample tables store them (`stsz`, `stts`, `ctts`, `stss`, `stsc`,
/// `stco`/`co64`), read one at a time in decode order by a ``Cursor``: a copy of a long file walks
/// its samples without a list of them (``MP4Track/samples(fileSize:)``, 32 bytes a sample, is
/// this cursor's samples gathered). What it holds is what the tables hold: 4 bytes a sample
/// and a few a run, a key frame or a chunk.
///
/// Made only from tables that agree and whose every sample lies inside the file (checked by one
/// walk when it is made, in constant memory), so a cursor's samples need no more checks.
package struct MP4SampleIndex: Sendable {
    package let trackID: UInt32
    package let count: Int
    private let sampleSize: UInt32
    private let sizes: [UInt32]
    private let times: [TimeToSample.Entry]
    private let chunks: [SampleToChunk.Entry]
    private let chunkOffsets: [UInt64]
    /// The sync samples' numbers (from 1), rising and once each; nil when every sample is one.
    private let sync: [UInt32]?
    private let composition: [CompositionOffsets.Entry]
    /// The last sample in decode order, and where the latest presentation ends (its time plus
    /// its duration), in the track's media clock; nil without samples.
    package private(set) var last: MP4Sample?
    package private(set) var presentationEnd: Int64?

    /// `track`'s tables, read and checked. Throws, naming the table, when they disagree (a chunk
    /// past the offsets, sizes for fewer samples than the times give, a sample past `fileSize`):
    /// a damaged index.
    package init(_ track: MP4Track, fileSize: UInt64) throws(ContainerError) {
        let id = track.trackID
        trackID = id
        func table<T: MP4BoxValue>(_ type: FourCC, _: T.Type) throws(ContainerError) -> T? {
            guard let box = track.box.find(["mdia", "minf", "stbl", type]) else { return nil }
            guard let value = box.read(T.self) else { throw ContainerError("its track \(id)'s \(type) box could not be read") }
            return value
        }
        guard let sizes = try table("stsz", SampleSizes.self) else { throw ContainerError("its track \(id) has no sample size table (stsz)") }
        guard let times = try table("stts", TimeToSample.self) else { throw ContainerError("its track \(id) has no time-to-sample table (stts)") }
        guard let chunks = try table("stsc", SampleToChunk.self) else { throw ContainerError("its track \(id) has no sample-to-chunk table (stsc)") }
        var offsets = try table("stco", ChunkOffsets.self)
        if offsets == nil { offsets = try table("co64", ChunkOffsets.self) }
        guard let offsets else { throw ContainerError("its track \(id) has no chunk offset table (stco or co64)") }
        let count = Int(sizes.sampleSize == 0 ? UInt32(sizes.sizes.count) : sizes.sampleCount)
        // A table of one size for all gives a count the file need not back: bound it by the
        // bytes there are, and by what a list of samples can hold (raw PCM in a QuickTime movie
        // is a sample per frame: hours of it are hundreds of millions).
        if sizes.sampleSize != 0, UInt64(count) * UInt64(sizes.sampleSize) > fileSize {
            throw ContainerError("its track \(id)'s stsz box gives \(count) samples of \(sizes.sampleSize) bytes, more than the file holds")
        }
        guard count <= MP4Movie.mostSamples else {
            throw ContainerError("its track \(id) has \(count) samples, more than \(MP4Movie.mostSamples) (uncompressed audio stored a frame per sample?)")
        }
        let timed = times.entries.reduce(0) { $0 + Int($1.count) }
        guard timed == count else {
            throw ContainerError("its track \(id)'s tables disagree: stsz gives \(count) samples, stts \(timed)")
        }
        self.count = count
        sampleSize = sizes.sampleSize
        self.sizes = sizes.sizes
        self.times = times.entries
        self.chunks = chunks.entries
        chunkOffsets = offsets.offsets
        sync = try table("stss", SyncSamples.self).map { Array(Set($0.numbers.filter { $0 >= 1 && Int($0) <= count })).sorted() }
        composition = try table("ctts", CompositionOffsets.self)?.entries ?? []
        // Every chunk in order, every sample inside the file.
        var cursor = makeCursor()
        while let s = try cursor.checkedNext(fileSize: fileSize) {
            last = s
            let end = s.presentationTime &+ Int64(s.duration)
            presentationEnd = max(presentationEnd ?? end, end)
        }
        guard cursor.n == count else {
            throw ContainerError("its track \(id)'s chunks hold \(cursor.n) samples, and its stsz box gives \(count)")
        }
        // Entries past the last sample are in order too (as every walk of the tables has asked).
        for (i, e) in chunks.entries.enumerated() {
            let next = i + 1 < chunks.entries.count ? Int(chunks.entries[i + 1].firstChunk) : offsets.offsets.count + 1
            guard e.firstChunk >= 1, Int(e.firstChunk) <= next else { throw ContainerError("its track \(id)'s stsc box is out of order at entry \(i + 1)") }
        }
    }

    package func makeCursor() -> Cursor { Cursor(index: self) }

    /// The samples in decode order, one at a time.
    package struct Cursor: Sendable, IteratorProtocol {
        let index: MP4SampleIndex
        /// The samples given so far.
        package private(set) var n = 0
        private var time: UInt64 = 0
        private var timeEntry = 0, timeLeft = 0
        private var compositionEntry = 0, compositionLeft = 0
        private var syncAt = 0
        /// The chunk table's entry, the chunk (from 1; 0 before the first), its samples left, and
        /// where its next sample lies.
        private var chunkEntry = 0, chunk = 0, chunkLeft = 0
        private var at: UInt64 = 0

        init(index: MP4SampleIndex) { self.index = index }

        /// The next sample; nil after the last.
        package mutating func next() -> MP4Sample? { try? checkedNext(fileSize: .max) }

        /// The next sample, checked against the tables and `fileSize`; nil after the last.
        mutating func checkedNext(fileSize: UInt64) throws(ContainerError) -> MP4Sample? {
            guard n < index.count else { return nil }
            let id = index.trackID
            while chunkLeft == 0 {
                // The next chunk: on in this entry's run of chunks, else the next entry's first.
                let chunks = index.chunks
                if chunk == 0 {
                    guard let first = chunks.first else { return nil }
                    chunk = Int(first.firstChunk)
                } else {
                    chunk += 1
                }
                while chunkEntry < chunks.count {
                    let e = chunks[chunkEntry]
                    let next = chunkEntry + 1 < chunks.count ? Int(chunks[chunkEntry + 1].firstChunk) : index.chunkOffsets.count + 1
                    guard e.firstChunk >= 1, Int(e.firstChunk) <= next else {
                        throw ContainerError("its track \(id)'s stsc box is out of order at entry \(chunkEntry + 1)")
                    }
                    if chunk < next { break }
                    chunkEntry += 1
                    if chunkEntry < chunks.count { chunk = Int(chunks[chunkEntry].firstChunk) }
                }
                guard chunkEntry < chunks.count else { return nil }
                guard chunk <= index.chunkOffsets.count else {
                    throw ContainerError("its track \(id)'s stsc box names chunk \(chunk), and its chunk offset table has \(index.chunkOffsets.count)")
                }
                at = index.chunkOffsets[chunk - 1]
                chunkLeft = Int(index.chunks[chunkEntry].samplesPerChunk)
            }
            let size = index.sampleSize == 0 ? index.sizes[n] : index.sampleSize
            guard at <= fileSize, UInt64(size) <= fileSize - at else {
                throw ContainerError("its track \(id)'s sample \(n + 1) (\(size) bytes at byte \(at)) runs past the end of the file at byte \(fileSize)")
            }
            while timeLeft == 0, timeEntry < index.times.count {
                timeLeft = Int(index.times[timeEntry].count)
                timeEntry += 1
            }
            let duration = index.times[max(0, timeEntry - 1)].delta
            timeLeft -= 1
            while compositionLeft == 0, compositionEntry < index.composition.count {
                compositionLeft = Int(index.composition[compositionEntry].count)
                compositionEntry += 1
            }
            var offset: Int32 = 0
            if compositionLeft > 0 {
                offset = index.composition[compositionEntry - 1].offset
                compositionLeft -= 1
            }
            var isSync = true
            if let sync = index.sync {
                while syncAt < sync.count, Int(sync[syncAt]) < n + 1 { syncAt += 1 }
                isSync = syncAt < sync.count && Int(sync[syncAt]) == n + 1
            }
            let sample = MP4Sample(offset: at, size: size, decodeTime: time, duration: duration, compositionOffset: offset, isSync: isSync)
            time &+= UInt64(duration)
            at += UInt64(size)
            chunkLeft -= 1
            n += 1
            return sample
        }
    }
}
