// Pieces of several MP4 files' tracks, one after another, copied into one new MP4 without
// decoding (what ffmpeg's concat demuxer with `-c copy`, and AVAssetExportSession's passthrough
// of an AVComposition, do). Each piece of a track is the run of its source track's samples from
// where a decoder can start (the video's key frame at or before the piece's start, the sound's
// packet before the one holding it, for the AAC decoder's overlap) to the piece's end; the new
// track's samples are the pieces' in order, and its edit list has an edit per piece that shows
// exactly the piece (and an empty edit per gap), so nothing decoded for a piece's start shows.
// The pieces of a track must decode with one configuration (SampleDescription): the new track has
// one sample description. A trim is the one-piece case (MP4Trim). The new index is written
// before the media (faststart) or, asked, after it; the samples are copied as they are.

/// The new file: its first bytes (ftyp, moov, the mdat's header), then the sources' byte ranges
/// to copy after them, in order.
package struct MP4Join: Sendable {
    /// A file the pieces come from: its index and size, and a name for messages.
    package struct Source: Sendable {
        package var name: String
        package var movie: MP4Movie
        package var fileSize: UInt64
        /// Its chapters (``MP4Movie/chapters(in:)``: a chapter track's titles are in the file,
        /// not the index); by default its Nero list's.
        package var chapters: [MediaMetadata.Chapter]
        package init(name: String, movie: MP4Movie, fileSize: UInt64, chapters: [MediaMetadata.Chapter]? = nil) {
            self.name = name
            self.movie = movie
            self.fileSize = fileSize
            self.chapters = chapters ?? movie.neroChapters
        }

        /// How long the movie lasts by its header, in seconds.
        var seconds: Double {
            guard let header = movie.header, header.timescale > 0 else { return 0 }
            return Double(header.duration) / Double(header.timescale)
        }
    }

    /// What a track of the new file shows, in order: a range [`start`, `end`) in seconds of the
    /// presentation timeline of a source's track (the one at `indexInType` among its tracks of
    /// the new track's handler), or nothing for a while.
    package enum Part: Sendable, Equatable {
        case media(source: Int, indexInType: Int, start: Double, end: Double)
        case empty(seconds: Double)
    }

    /// A track of the new file: its handler (`vide`, `soun`) and its parts.
    package struct Track: Sendable {
        package var handler: FourCC
        package var parts: [Part]
        /// The display matrix written in its `tkhd`; nil keeps its first piece's.
        package var matrix: DisplayMatrix?
        package init(handler: FourCC, parts: [Part], matrix: DisplayMatrix? = nil) {
            self.handler = handler
            self.parts = parts
            self.matrix = matrix
        }
    }

    /// `ftyp`, the new `moov` and the `mdat` header; with the index last, `ftyp` and the `mdat`
    /// header.
    package var header: [UInt8]
    /// What follows the media: the `moov` when the index goes last, else nothing.
    package var trailer: [UInt8] = []
    /// Where in which source each run of the new file's media lies, in the order they are written.
    package var copies: [(source: Int, offset: UInt64, count: Int)]
    /// The longest track, in seconds.
    package var duration: Double

    package var mediaBytes: Int { copies.reduce(0) { $0 + $1.count } }

    /// The sample run of one part of a track: its samples in decode order, and the media time
    /// (from the first of them) where what it shows starts.
    struct Cut {
        var samples: ArraySlice<MP4Sample>
        var mediaTime: Int64
    }

    /// `seconds` in ticks of a clock of `scale` Hz, for an edit's duration: a time longer than
    /// a track's timeline can be (``HLSSegmentPlan/Track/longestTimeline``) is refused, naming
    /// `part`, rather than converted past what 64 bits hold.
    static func ticks(_ seconds: Double, _ scale: Int, _ part: String) throws(ContainerError) -> UInt64 {
        guard seconds.isFinite, seconds <= HLSSegmentPlan.Track.longestTimeline else {
            throw ContainerError("\(part) lasts \(seconds) s, more than a track's timeline may (\(Int(HLSSegmentPlan.Track.longestTimeline)) s)")
        }
        return UInt64(saturating: seconds * Double(scale))
    }

    /// The samples of `track` that show [`start`, `end`) seconds of its presentation timeline,
    /// from where decoding can start; nil when no sample shows in the range.
    static func cut(_ track: HLSSegmentPlan.Track, start: Double, end: Double) throws(ContainerError) -> Cut? {
        // The range in the track's media clock (an end past every sample, 1e300 s, is past
        // them still).
        let first = track.ticks(start), last = track.ticks(end)
        let samples = track.samples
        // The last sample shown before the end, in decode order: everything up to it is needed.
        guard let upTo = samples.lastIndex(where: { $0.presentationTime < last }) else { return nil }
        // The first sample shown at the start (or the first after it).
        guard let from = samples.firstIndex(where: { $0.presentationTime + Int64($0.duration) > first }), from <= upTo else { return nil }
        var begin: Int
        if samples[from].isSync, samples.allSatisfy({ $0.isSync }) {
            // Sound: one packet more before, for the decoder's overlap (AAC's first packet
            // decodes to the priming it adds).
            begin = max(0, from - 1)
        } else {
            // Video: back to the key frame before, in decode order, and before every frame
            // that shows at or after the start.
            let earliest = samples[from...upTo].indices.min { samples[$0].decodeTime < samples[$1].decodeTime } ?? from
            begin = min(from, earliest)
            while begin > 0, !samples[begin].isSync { begin -= 1 }
            guard samples[begin].isSync else { throw ContainerError("its track \(track.trackID) has no key frame before \(start) s") }
        }
        let base = Int64(samples[begin].decodeTime)
        return Cut(samples: samples[begin...upTo], mediaTime: max(0, first - base))
    }

    /// Joins `tracks`' parts of `sources` into one movie; the first source gives the movie's
    /// header and other boxes (tags), each track's first piece its track's. Throws, naming the
    /// track, the piece and its source, for a source without that track, a damaged sample
    /// table, a part of no sample, and pieces that cannot follow one another in one track
    /// (another codec, size, rate or codec configuration; another media clock).
    /// `indexFirst`: the index before the media (faststart), else after it.
    package init(sources: [Source], tracks: [Track], fileType: MP4Box?, indexFirst: Bool = true) throws(ContainerError) {
        try self.init(sources: sources, tracks: tracks, fileType: fileType, indexFirst: indexFirst, planned: [:])
    }

    /// `planned`: source tracks already read, by "source index-in-movie".
    init(sources: [Source], tracks: [Track], fileType: MP4Box?, indexFirst: Bool = true, planned known: [String: HLSSegmentPlan.Track]) throws(ContainerError) {
        guard let lead = sources.first else { throw ContainerError("there is nothing to join: no source") }
        let movieScale = max(1, lead.movie.timescale)
        // Each source track's samples, read once.
        var planned = known
        struct Piece { var source: Int; var cut: Cut; var outputStart: Double; var shown: Double; var base: Int64 }
        struct Built { var template: MP4Track; var samples: [MP4Sample] = []; var sources: [Int] = []; var times: [Double] = [];
                       var edits: [MP4Track.Edit] = []; var shown = 0.0 }
        var built: [Built] = []
        for (t, track) in tracks.enumerated() {
            var template: MP4Track?
            var description: (SampleDescription, Int, Int)?  // and its piece, source
            var out = Built(template: MP4Track(box: MP4Box(type: "trak", children: [])))
            var time = 0.0
            var media: Int64 = 0
            let lastMedia = track.parts.lastIndex { if case .media = $0 { true } else { false } }
            for (p, part) in track.parts.enumerated() {
                let where_ = "track \(t + 1)'s piece \(p + 1)"
                switch part {
                case .empty(let seconds):
                    guard seconds.isFinite, seconds >= 0 else { throw ContainerError("\(where_) is an empty time of \(seconds) s") }
                    out.edits.append(MP4Track.Edit(duration: try Self.ticks(seconds, movieScale, where_), mediaTime: -1))
                    time += seconds
                case .media(let s, let indexInType, let start, let end):
                    guard sources.indices.contains(s) else { throw ContainerError("\(where_) names source \(s + 1) of \(sources.count)") }
                    let source = sources[s]
                    guard start.isFinite, end.isFinite, start >= 0, end > start else {
                        throw ContainerError("\(where_) (\(source.name)): the range \(start) s to \(end) s is not a range of it")
                    }
                    guard let (index, stored) = source.movie.tracks(handler: track.handler).dropFirst(indexInType).first else {
                        throw ContainerError("\(where_) (\(source.name)): it has no \(track.handler == "soun" ? "sound" : "video") track \(indexInType + 1)")
                    }
                    guard let own = SampleDescription(stored) else { throw ContainerError("\(where_) (\(source.name)): its track \(stored.trackID) states no sample description") }
                    if let (first, fp, fs) = description {
                        if let difference = own.difference(from: first) {
                            throw ContainerError("\(where_) (\(source.name)) cannot follow piece \(fp) (\(sources[fs].name)) in one track: \(difference)")
                        }
                        if let template, stored.mediaTimescale != template.mediaTimescale {
                            throw ContainerError("\(where_) (\(source.name)) cannot follow piece \(fp) (\(sources[fs].name)) in one track: its media clock is \(stored.mediaTimescale) Hz, not \(template.mediaTimescale) Hz")
                        }
                    } else {
                        description = (own, p + 1, s)
                        template = stored
                    }
                    let key = "\(s) \(index)"
                    let plan: HLSSegmentPlan.Track
                    if let known = planned[key] {
                        plan = known
                    } else {
                        do { plan = try HLSSegmentPlan.Track(reading: stored, index: index, movie: source.movie, fileSize: source.fileSize) } catch {
                            throw ContainerError("\(where_) (\(source.name)): \(error.reason)")
                        }
                        planned[key] = plan
                    }
                    let cut: Cut?
                    do { cut = try Self.cut(plan, start: start, end: end) } catch { throw ContainerError("\(where_) (\(source.name)): \(error.reason)") }
                    guard let cut else {
                        throw ContainerError("\(where_) (\(source.name)): no sample of its track \(plan.trackID) lies between \(start) s and \(end) s")
                    }
                    // What it shows: the range, but not past the track's last sample, but for the
                    // track's last piece (whose end is the track's). The rest is an empty edit.
                    let span = end - start
                    var shown = span
                    if p != lastMedia, let tail = cut.samples.suffix(32).map({ plan.seconds($0.presentationTime + Int64($0.duration)) }).max() {
                        shown = max(0, min(span, tail - start))
                    }
                    let scale = Double(plan.timescale), first = Int64(cut.samples.first!.decodeTime)
                    let (mediaTime, overflow) = media.addingReportingOverflow(cut.mediaTime)
                    guard !overflow else { throw ContainerError("\(where_) (\(source.name)): its media starts past what 64 bits count") }
                    out.edits.append(MP4Track.Edit(duration: try Self.ticks(shown, movieScale, where_), mediaTime: mediaTime))
                    if shown < span { out.edits.append(MP4Track.Edit(duration: try Self.ticks(span - shown, movieScale, where_), mediaTime: -1)) }
                    for sample in cut.samples {
                        out.samples.append(sample)
                        out.sources.append(s)
                        out.times.append(time + Double(Int64(sample.decodeTime) - first - cut.mediaTime) / scale)
                        media += Int64(sample.duration)
                    }
                    time += span
                }
            }
            guard let template else { throw ContainerError("track \(t + 1) has no piece of media") }
            out.template = template
            out.edits = Self.merged(out.edits, movieScale: movieScale, mediaScale: template.mediaTimescale)
            out.shown = time
            built.append(out)
        }

        // The media: each track's samples in runs of half a second, the runs interleaved by time
        // (as muxers write them); a run is one chunk.
        struct Chunk { var track: Int; var samples: Range<Int>; var time: Double }
        var chunks: [Chunk] = []
        for (t, b) in built.enumerated() {
            var i = 0
            while i < b.samples.count {
                let t0 = b.times[i]
                var j = i + 1
                while j < b.samples.count, b.times[j] - t0 < 0.5 { j += 1 }
                chunks.append(Chunk(track: t, samples: i..<j, time: t0))
                i = j
            }
        }
        chunks.sort { ($0.time, $0.track) < ($1.time, $1.track) }

        // Track IDs: the templates', unless two are the same (tracks of different sources).
        let ids = built.map(\.template.trackID)
        let renumber = Set(ids).count != ids.count || ids.contains(0)
        // The pieces' chapters on the new timeline, for the index below.
        let chapters = Self.chapters(of: sources, along: tracks.first { $0.parts.contains { if case .media = $0 { true } else { false } } })
        // The new index, with each chunk's offset once the index's own size is known (the
        // offsets' width can change it: measured with placeholders, then written).
        func moov(mdatStart: UInt64) -> MP4Box {
            var out = lead.movie.moov
            // Its size written out: a lead whose index ran "to the end" of its file (size 0) would
            // swallow the media after it when the index goes first.
            out.sizeField = .compact
            var offsets: [[UInt64]] = built.map { _ in [] }
            var at = mdatStart
            for c in chunks {
                offsets[c.track].append(at)
                at += c.samples.reduce(UInt64(0)) { $0 + UInt64(built[c.track].samples[$1].size) }
            }
            var traks: [MP4Box] = []
            var longest: UInt64 = 0
            for (t, b) in built.enumerated() {
                var track = b.template
                track.box.children.removeAll { $0.type == "tref" }  // references to tracks not copied
                track.setEdits(b.edits)
                if renumber { track.box.update(["tkhd"], as: TrackHeader.self) { $0.trackID = UInt32(t + 1) } }
                if let matrix = tracks[t].matrix { track.box.update(["tkhd"], as: TrackHeader.self) { $0.matrix = matrix.fixedPoint } }
                longest = max(longest, b.edits.reduce(UInt64(0)) { $0 + $1.duration })
                let mediaDuration = b.samples.reduce(UInt64(0)) { $0 + UInt64($1.duration) }
                track.box.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.duration = mediaDuration }
                let chunkSizes = chunks.filter { $0.track == t }.map(\.samples.count)
                track.box.modify(["mdia", "minf", "stbl"]) { stbl in
                    let keep = stbl.children.filter { $0.type == "stsd" }
                    stbl.children = keep + MP4Join.tables(b.samples[...], chunkSizes: chunkSizes, offsets: offsets[t])
                }
                traks.append(track.box)
            }
            // The lead's boxes but its tracks and fragment header, the new tracks where its first was.
            var children: [MP4Box] = []
            for child in lead.movie.moov.children where child.type != "mvex" {
                if child.type == "trak" {
                    if !traks.isEmpty { children += traks; traks = [] }
                } else {
                    children.append(child)
                }
            }
            out.children = children + traks
            // The chapters: the pieces', on the new timeline (Nero's list; the sources' chapter
            // tracks are not copied). The lead's list goes whether or not there are new ones.
            out.modify(["udta"]) { $0.children.removeAll { $0.type == "chpl" } }
            if !chapters.isEmpty { MP4ExtraTags(chapters: chapters).apply(to: &out) }
            out.update(["mvhd"], as: MovieHeader.self) { header in
                header.duration = longest
                // The next track ID, the header's last field.
                if renumber, header.rest.count >= 4 {
                    let next = UInt32(built.count + 1), n = header.rest.count
                    header.rest[n - 4] = UInt8(next >> 24); header.rest[n - 3] = UInt8((next >> 16) & 0xFF)
                    header.rest[n - 2] = UInt8((next >> 8) & 0xFF); header.rest[n - 1] = UInt8(next & 0xFF)
                }
            }
            return out
        }
        let ftyp = fileType?.bytes ?? MP4Box(FileType(majorBrand: "isom", compatibleBrands: ["isom", "iso2", "avc1", "mp41"])).bytes
        let media = UInt64(chunks.reduce(0) { total, c in total + c.samples.reduce(0) { $0 + Int(built[c.track].samples[$1].size) } })
        let wide = media + 8 > UInt64(UInt32.max)
        let mdatHeader = wide ? 16 : 8
        var header = ftyp
        if indexFirst {
            var index = moov(mdatStart: 0)
            for _ in 0..<3 {  // the offsets' width settles at once; three passes at most
                let start = UInt64(ftyp.count) + index.length() + UInt64(mdatHeader)
                let next = moov(mdatStart: start)
                if next.length() == index.length() { index = next; break }
                index = next
            }
            header += index.bytes
        } else {
            trailer = moov(mdatStart: UInt64(ftyp.count + mdatHeader)).bytes
        }
        if wide {
            header.appendU32(1); header.appendU32(FourCC("mdat").rawValue); header.appendU64(media + 16)
        } else {
            header.appendU32(UInt32(media + 8)); header.appendU32(FourCC("mdat").rawValue)
        }
        self.header = header
        duration = built.map(\.shown).max() ?? 0
        var copies: [(source: Int, offset: UInt64, count: Int)] = []
        for c in chunks {
            let b = built[c.track]
            for i in c.samples {
                let s = b.samples[i], source = b.sources[i]
                if let last = copies.last, last.source == source, last.offset + UInt64(last.count) == s.offset, last.count < 4 << 20 {
                    copies[copies.count - 1].count += Int(s.size)
                } else {
                    copies.append((source, s.offset, Int(s.size)))
                }
            }
        }
        self.copies = copies
    }

    /// The chapters the new file shows along `track`'s parts (its first track with media: the
    /// tracks of a join play the same pieces): each piece's source chapters that overlap it,
    /// each from where it shows in the piece, moved to where the piece plays; a chapter that
    /// goes on from one piece into the next (pieces of one source that follow on) once; as a
    /// chpl box holds them (``MP4ExtraTags/storable(_:)``).
    static func chapters(of sources: [Source], along track: Track?) -> [MediaMetadata.Chapter] {
        guard let track else { return [] }
        var out: [MediaMetadata.Chapter] = []
        var last: (source: Int, chapter: Int, end: Double)?
        var time = 0.0
        for part in track.parts {
            switch part {
            case .empty(let seconds):
                time += seconds
            case .media(let s, _, let start, let end):
                guard sources.indices.contains(s), start.isFinite, end.isFinite, end > start else { continue }
                var tags = MediaMetadata()
                tags.chapters = sources[s].chapters
                for (c, shown) in tags.chapters(from: start, to: end, duration: sources[s].seconds) {
                    let at = time + shown.start, until = time + (shown.end ?? shown.start)
                    // The same chapter, continued from the piece before (within a millisecond).
                    if let l = last, l.source == s, l.chapter == c, abs(l.end - at) < 0.001 {
                        last?.end = until
                        out[out.count - 1].end = until
                        continue
                    }
                    out.append(MediaMetadata.Chapter(start: at, end: until, title: shown.title))
                    last = (s, c, until)
                }
                time += end - start
            }
        }
        return MP4ExtraTags.storable(out)
    }

    /// `edits` with each edit that shows the media right after the one before it (whole files
    /// whose pieces follow on: no priming or pictures in between to skip) joined to it, and
    /// empty edits in a row joined: one edit for what plays through, as a single file has
    /// (a demuxer reads a run of edits as separate segments, rereading from a key frame at each).
    static func merged(_ edits: [MP4Track.Edit], movieScale: Int, mediaScale: Int) -> [MP4Track.Edit] {
        let slack = Int64((mediaScale + movieScale - 1) / max(1, movieScale))  // a tick of the movie's clock, in the media's
        var out: [MP4Track.Edit] = []
        for edit in edits {
            if let last = out.last, last.rate == edit.rate {
                if last.mediaTime < 0, edit.mediaTime < 0 {
                    out[out.count - 1].duration = last.duration.addingReportingOverflow(edit.duration).overflow ? .max : last.duration + edit.duration
                    continue
                }
                if last.mediaTime >= 0, edit.mediaTime >= 0, movieScale > 0 {
                    let (end, overflow) = last.mediaTime.addingReportingOverflow(Int64(saturating: Double(last.duration) * Double(mediaScale) / Double(movieScale)))
                    if !overflow, case (let gap, false) = edit.mediaTime.subtractingReportingOverflow(end), gap.magnitude <= slack.magnitude {
                        out[out.count - 1].duration = last.duration.addingReportingOverflow(edit.duration).overflow ? .max : last.duration + edit.duration
                        continue
                    }
                }
            }
            out.append(edit)
        }
        return out
    }

    /// The sample tables of `samples`, stored in chunks of `chunkSizes` samples at `offsets`,
    /// each of the sample description `descriptions` names (from 0; all the first without).
    static func tables(_ samples: ArraySlice<MP4Sample>, chunkSizes: [Int], offsets: [UInt64], descriptions: [Int]? = nil) -> [MP4Box] {
        var tables = SampleTableBuilder()
        for s in samples { tables.append(size: s.size, duration: s.duration, compositionOffset: s.compositionOffset, isSync: s.isSync) }
        for (i, (count, offset)) in zip(chunkSizes, offsets).enumerated() {
            tables.addChunk(offset: offset, samples: count, description: descriptions.flatMap { $0.indices.contains(i) ? $0[i] : nil } ?? 0)
        }
        return tables.boxes()
    }
}
