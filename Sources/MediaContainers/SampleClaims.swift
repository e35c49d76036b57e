// What a movie's sample tables claim, weighed against the bytes of the file before any list of
// samples is made (issue 47): a 20 MB MP4 whose `stsz` gives 20 million samples of one byte to
// each of several tracks once took 1.6–4.9 GB in `graphctl export`, `hls` and `concat`.

extension MP4Movie {
    /// The most samples GraphKit lists from one movie, its tracks together: 32 bytes each,
    /// 320 MB at most. A day of 60 fps video with 48 kHz AAC is 9.3 million. Raw PCM stored a
    /// frame per sample (QuickTime's way, and ffmpeg's `-c:a pcm_s16le -f mov`) passes it after
    /// about 3.5 minutes of 48 kHz: its samples are of one size, so they count only against the
    /// file's bytes here, and only a command that lists them one by one (`hls`, a passthrough
    /// export, `concat`) refuses them past this (``MP4Track/mostSamples``).
    package static let mostSamples = 10_000_000

    /// Refuses, naming the track and its sample-size box, a movie whose tracks together list
    /// more samples size by size than ``mostSamples`` or than the file has bytes (each takes 4
    /// bytes of table, or 2, 1 or half a byte in `stz2`), or claim more bytes of samples of one
    /// size than the `fileSize` bytes of the file (two tracks' samples do not share bytes).
    /// Sizes listed one by one are checked against the file when the samples are listed
    /// (``MP4Track/samples(fileSize:)``), so a file cut short inside its media is still read up
    /// to its end. Reads a few words of each `stsz` or `stz2` (the compact form qtdemux reads
    /// too): its cost is nothing beside the index's.
    package func checkSampleClaims(fileSize: UInt64) throws(ContainerError) {
        var listed: UInt64 = 0, bytes: UInt64 = 0
        for i in trackIndices {
            let track = track(i)
            let id = track.trackID
            let size: UInt64, count: UInt64, name: String
            if let stsz = track.box.find(["mdia", "minf", "stbl", "stsz"]) {
                var r = ByteReader(stsz.body)
                guard (try? r.versionAndFlags()) != nil, let s = try? r.u32(), let c = try? r.u32() else { continue }
                (size, count, name) = (UInt64(s), UInt64(c), "stsz")
            } else if let stz2 = track.box.find(["mdia", "minf", "stbl", "stz2"]) {
                // Version and flags, 3 reserved bytes, the field size in bits, the count.
                var r = ByteReader(stz2.body)
                guard (try? r.versionAndFlags()) != nil, (try? r.u16()) != nil, let b = try? r.u16(), let c = try? r.u32() else { continue }
                (size, count, name) = (0, UInt64(c), "stz2 (\(b & 0xFF)-bit sizes)")
            } else {
                continue
            }
            if size == 0 {
                listed += count
                guard listed <= UInt64(Self.mostSamples), listed <= fileSize else {
                    throw ContainerError("its track \(id)'s \(name) box claims \(count) samples, which with its other tracks' makes \(listed), more than "
                                         + (listed > fileSize ? "the file's \(fileSize) bytes can hold" : "the \(Self.mostSamples) GraphKit reads from one file")
                                         + ": its index is damaged")
                }
            } else {
                bytes += count * size  // both below 2^32: no overflow
                guard bytes <= fileSize else {
                    throw ContainerError("its track \(id)'s \(name) box claims \(count) samples of \(size) bytes, which with its other tracks' makes "
                                         + "\(bytes) bytes of samples, more than the file's \(fileSize): its index is damaged")
                }
            }
        }
    }

    /// The most edits one track's list may hold. Editors write a few (a trim, a delay, a
    /// B-frame offset; a QuickTime cut list a few dozen); 10,000 made GStreamer's demuxer plan
    /// 10,000 segments, 100,000 kept a remux busy past 120 s (issue 73).
    package static let mostEdits = 1_000
    /// How many times over a track's edits may show its media, all edits together: an edit
    /// shows a stretch of media once, a list may show some of it again (a loop, a repeated
    /// shot), but 10,000 edits showing the same second of a 606 KB file made a remux of 361 MB
    /// and 10,000 s (issue 73).
    package static let mostShowings: UInt64 = 8

    /// Every claim of the index weighed before anything reads it: its sample tables
    /// (``checkSampleClaims(fileSize:)``), its media clocks (``checkClockClaims()``) and its
    /// edit lists (``checkEditClaims()``). `MP4File.movie()` and ``ContainerLimits`` both ask it.
    package func checkClaims(fileSize: UInt64) throws(ContainerError) {
        try checkSampleClaims(fileSize: fileSize)
        try checkClockClaims()
        try checkEditClaims()
    }

    /// The fastest media clock GraphKit reads: 2³¹−1 ticks a second. Real files use 90000,
    /// 48000, a million at most; GStreamer's demuxer leaves a track of 2³²−1 out (reported as
    /// a file with no video track).
    package static let fastestClock = Int(Int32.max)

    /// Refuses, naming the track and its `mdhd`, a movie with a track whose media clock is 0 Hz
    /// (no time can be read in it: GStreamer called the file corrupt) or faster than
    /// ``fastestClock``.
    package func checkClockClaims() throws(ContainerError) {
        for i in trackIndices {
            let track = track(i), scale = track.mediaTimescale
            guard track.mediaHeader != nil else { continue }  // no mdhd at all: for the reader to name
            if scale == 0 { throw ContainerError("its track \(track.trackID) has no media clock (its mdhd timescale is 0): its index is damaged") }
            if scale > Self.fastestClock {
                throw ContainerError("its track \(track.trackID)'s media clock (mdhd) runs at \(scale) ticks a second, faster than the "
                                     + "\(Self.fastestClock) GraphKit reads: its index is damaged")
            }
        }
    }

    /// Refuses, naming the track and its edit list, a movie with a track whose edit list holds
    /// more than ``mostEdits`` edits, or whose edits together show more than ``mostShowings``
    /// times its media (the samples' durations, `stts`) and a second besides. An empty edit and
    /// a dwell (rate 0, one picture held) show no media; an edit longer than what follows its
    /// start shows what there is once. Reads the edit lists and each track's `stts` only.
    package func checkEditClaims() throws(ContainerError) {
        let movieScale = UInt64(max(0, timescale))
        for i in trackIndices {
            let track = track(i)
            guard let edits = track.edits, !edits.isEmpty else { continue }
            let id = track.trackID
            guard edits.count <= Self.mostEdits else {
                throw ContainerError("its track \(id)'s edit list (elst) holds \(edits.count) edits, more than the \(Self.mostEdits) GraphKit reads: its index is damaged")
            }
            let media = track.sampleTableDuration, scale = UInt64(max(0, track.mediaTimescale))
            guard media > 0, media < .max, scale > 0, movieScale > 0 else { continue }
            var shown: UInt64 = 0
            for e in edits where e.mediaTime >= 0 && e.rate != 0 {
                let left = media > UInt64(e.mediaTime) ? media - UInt64(e.mediaTime) : 0
                // The edit's duration on the track's clock, saturating (a 64-bit duration times
                // a 32-bit clock).
                let (product, over) = e.duration.multipliedReportingOverflow(by: scale)
                let length = over ? UInt64.max : product / movieScale
                shown = shown.addingReportingOverflow(min(length, left)).overflow ? .max : shown + min(length, left)
            }
            let (most, over) = media.multipliedReportingOverflow(by: Self.mostShowings)
            let (bound, past) = most.addingReportingOverflow(scale)
            guard over || past || shown <= bound else {
                let seconds = HLSSegmenter.seconds(Double(media) / Double(scale)), times = shown / media
                throw ContainerError("its track \(id)'s edit list (elst) shows its \(seconds) s of media \(times) times over in \(edits.count) edits, "
                                     + "more than the \(Self.mostShowings) GraphKit plays: its index is damaged")
            }
        }
    }
}
