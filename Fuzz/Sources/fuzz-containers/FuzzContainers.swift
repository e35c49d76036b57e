import ContainersUnderFuzz
import Glibc

/// One input: the bytes of a media file (the seeds are small MP4, M4A, MOV and fragmented MP4
/// files, and fuzz-decode's media ones), read and edited by GraphKit's container library in
/// process, without GStreamer: the box walk, the box tree, the typed boxes, the movie (tracks,
/// edits, metadata, gapless), the tags of every format (MediaMetadata: ID3v2, Vorbis comments,
/// FLAC pictures, MP4 items and keys), a HEIF photo's items and EXIF, the diagnosis of every format, a WAV header, and the
/// editor (on a file in /dev/shm, through its descriptor: what sink.mp4 does to its file).
///
/// A finding is a crash (a Swift trap on an overflow or an index out of range counts: the
/// library must check its arithmetic and throw), a hang (libFuzzer's -timeout), and a broken
/// promise: a box tree or a typed box that does not write back the bytes it read, a movie
/// edited that no longer reads, an edit that loses the media data a chunk offset points to.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContainers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let source = MemoryBytes(bytes)
    _ = ContainerDiagnosis.diagnose(source)
    _ = WAVEHeader(source)?.statedMicroseconds
    _ = (WAVEHeader.isWave64(source), WAVEHeader.isAIFF(source))
    _ = MPEGAudio.frameLength(bytes)
    // Tags of every format (ID3v2, Vorbis comments, FLAC pictures, MP4 items and keys): read
    // from what is there, never past it (a Swift bounds trap is a finding).
    if let tags = try? MediaMetadata.read(from: source), let art = tags.artwork, art.data.count > size {
        fail("a picture of \(art.data.count) bytes read from \(size)")
    }
    _ = IndexedTrack.all(in: source)
    // A photo (HEIC, AVIF): its items, each item's bytes, its images and their parts, its EXIF.
    if let photo = try? HEIFFile.read(source) {
        if photo.items.count > HEIFFile.maximumItems { fail("\(photo.items.count) items described") }
        for item in photo.items {
            if let data = try? photo.data(of: item, in: source), data.count > size { fail("item \(item.id) read \(data.count) bytes from \(size)") }
            if let shown = item.shown, let w = item.width, let h = item.height,
               shown.x < 0 || shown.y < 0 || shown.x + shown.width > w || shown.y + shown.height > h {
                fail("item \(item.id) shows \(shown) of its \(w) × \(h)")
            }
        }
        for image in photo.topLevelImages {
            _ = (photo.items(referring: "thmb", to: image.id), photo.items(referring: "auxl", to: image.id))
            for exif in photo.items(referring: "cdsc", to: image.id) {
                if let data = try? photo.data(of: exif, in: source) { _ = EXIFTags(heifExifItem: data)?.location }
            }
        }
    }
    _ = EXIFTags(tiff: bytes).map { ($0.location, $0.contentIdentifier) }
    // WebP, GIF and TIFF structures: frames and pages bounded, each within the bytes.
    if let webp = try? WebPFile.read(source), webp.frames.count > WebPFile.maximumFrames { fail("\(webp.frames.count) WebP frames") }
    if let gif = try? GIFFile.read(source), gif.frames.count > GIFFile.maximumFrames || gif.frames.count > size / 10 {
        fail("\(gif.frames.count) GIF frames from \(size) bytes")
    }
    if let tiff = try? TIFFFile.read(source), tiff.pages.count > TIFFFile.maximumPages { fail("\(tiff.pages.count) TIFF pages") }
    if let tiff = try? TIFFFile.read(source) { _ = tiff.pages.map { $0.bitsPerSample * $0.samplesPerPixel } }
    // A JPEG's or PNG's header weighed against the bytes; a Live Photo movie's still time.
    if let header = try? StillImageHeader.read({ offset, count in Array(bytes.dropFirst(offset).prefix(count)) })?.get() {
        _ = (header.fits(in: size), header.orientation)
    }
    if let movie = LivePhotoMovie.read(source), let t = movie.stillImageTime, !(0...86_400).contains(t) { fail("a still at \(t) s") }

    let file: MP4File<MemoryBytes>
    do { file = try MP4File(source) } catch { fail("walking bytes in memory threw: \(error)") }
    var movie: MP4Movie?
    for extent in file.boxes where file.isWhole(extent) {
        guard let box = try? file.read(extent) else { continue }
        let original = bytes[Int(extent.offset)..<Int(extent.end)]
        guard same(box.bytes, original) else { fail("the \(extent.type) box at \(extent.offset) does not write back as read") }
        checkTypedBoxes(box)
        if box.type == "moov", movie == nil {
            movie = MP4Movie(moov: box)
            exercise(MP4Movie(moov: box), bytes: Array(original))
        }
        if box.type == "moof" { exerciseFragment(box) }
    }
    // The editor and the segmenter read an index whose claims the file can hold (what
    // MP4File.movie() checks, and every reader of a file goes through).
    if let movie, file.first("moov").map(file.isWhole) == true, (try? file.movie()) != nil {
        edit(bytes, file, movie)
        segment(bytes, movie)
    }
    return 0
}

/// HLS packaging (HLSPackager's steps, in memory): the sample tables read as samples, cut into
/// segments, each written as a media segment. A promise broken: a sample missing from the
/// segments, or taken twice.
func segment(_ bytes: [UInt8], _ movie: MP4Movie) {
    guard let plan = try? HLSSegmentPlan(movie: movie, fileSize: UInt64(bytes.count), target: 1) else { return }
    _ = CMAF.initializationSegment(of: movie, trackIndices: plan.tracks.map(\.index))
    for (t, track) in plan.tracks.enumerated() where plan.segments.map({ $0.samples[t].count }).reduce(0, +) != track.samples.count {
        fail("track \(track.trackID): the segments take \(plan.segments.map { $0.samples[t].count }.reduce(0, +)) of its \(track.samples.count) samples")
    }
    for (k, s) in plan.segments.prefix(3).enumerated() {
        let runs = plan.tracks.enumerated().compactMap { t, track -> FragmentRun? in
            let samples = Array(track.samples[s.samples[t]])
            guard let first = samples.first else { return nil }
            let data = samples.flatMap { bytes[Int($0.offset)..<Int($0.offset + UInt64($0.size))] }
            return FragmentRun(trackID: track.trackID, timescale: UInt32(clamping: track.timescale), baseDecodeTime: first.decodeTime, samples: samples, data: data)
        }
        _ = CMAF.mediaSegment(firstSequenceNumber: UInt32(k + 1), runs: runs)
    }
}

/// Whether two byte strings are equal, compared by memcmp: a comparison in Swift would be
/// traced byte by byte by the coverage instrumentation, and cost more than the reading.
func same(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
    a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
}

func fail(_ message: String) -> Never { fatalError("fuzz-containers: \(message)") }

/// Every box of a type the library reads as fields writes back the body it read.
func checkTypedBoxes(_ box: MP4Box) {
    func check<T: MP4BoxValue>(_: T.Type) {
        guard T.types.contains(box.type) else { return }
        var reader = ByteReader(box.body)
        guard let value = try? T(reading: &reader, type: box.type) else { return }
        var written: [UInt8] = []
        value.write(to: &written)
        guard same(written, box.body[...]), value.type == box.type else { fail("a \(box.type) box does not write back as read") }
    }
    check(FileType.self); check(MovieHeader.self); check(TrackHeader.self); check(EditList.self)
    check(MediaHeader.self); check(HandlerReference.self); check(TimeToSample.self); check(SampleSizes.self)
    check(ChunkOffsets.self); check(MovieFragmentHeader.self); check(TrackFragmentHeader.self)
    check(TrackFragmentDecodeTime.self); check(TrackRun.self)
    for child in box.children { checkTypedBoxes(child) }
}

/// What decode and sink.mp4 read of a movie, and the changes they make: each changed movie
/// reads back.
func exercise(_ movie: MP4Movie, bytes moovBytes: [UInt8]) {
    _ = (movie.timescale, movie.orientation, movie.metadataItems.map(\.values), movie.chunkOffsets.count)
    _ = MP4AudioEdit.gaplessTag(in: movie)
    for i in movie.trackIndices {
        let t = movie.track(i)
        _ = (t.header, t.mediaHeader, t.handler, t.trackID, t.sampleEntry, t.duration, t.mediaTimescale)
        _ = (t.edits, t.sampleTableDuration, t.orientation)
    }
    for track in 0..<2 { _ = movie.audioEdit(track: track) }

    var moov = moovBytes  // what movie.bytes gives (checked above), without writing it again
    if MP4AudioEdit.take(from: &moov, track: 0) != nil {
        guard (try? MP4Movie(parsing: moov[...])) != nil else { fail("an index whose edit lists were taken out does not read") }
    }
    var changed = movie
    changed.removeSoundEditLists()
    changed.rescale(to: 44_100)
    for (i, track) in changed.tracks(handler: "soun") {
        var t = track
        t.setEdits([MP4Track.Edit(duration: 1024, mediaTime: 2112)])
        changed.setTrack(i, t)
    }
    for (i, track) in changed.tracks(handler: "vide") {
        var t = track
        t.setOrientation(.rotate90)
        changed.setTrack(i, t)
    }
    changed.updateDuration()
    changed.shiftChunkOffsets(after: 0, by: 1 << 32)
    let written = changed.bytes
    guard let back = try? MP4Movie(parsing: written[...]), back.bytes == written else { fail("an edited index does not read back as written") }
}

/// What the tests read of a fragment.
func exerciseFragment(_ moof: MP4Box) {
    _ = moof.first("mfhd")?.read(MovieFragmentHeader.self)
    for traf in moof.all("traf") {
        _ = (traf.first("tfhd")?.read(TrackFragmentHeader.self), traf.first("tfdt")?.read(TrackFragmentDecodeTime.self))
        _ = traf.all("trun").compactMap { $0.read(TrackRun.self) }.reduce(0) { $0 &+ Int($1.sampleCount) }
    }
}

/// sink.mp4's index edits (an edit list for AAC's priming, a display orientation, where the
/// presentation ends) on the movie as read. The edited index reads back, and keeps every chunk
/// offset: the media does not move.
func edit(_ bytes: [UInt8], _ file: MP4File<MemoryBytes>, _ before: MP4Movie) {
    var edits = MP4Index.Edits(audioDelay: EncoderDelay(priming: 2112, samples: 4410, sampleRate: 44_100),
                               orientation: bytes.count % 2 == 0 ? .rotate90 : .flipRotate270)
    if bytes.count % 3 == 0 { edits.presentationEnd = (ticks: UInt64(bytes.count), timescale: 1_000) }
    var movie = before
    MP4Index.edit(&movie, with: edits)
    guard let after = try? MP4Movie(parsing: movie.bytes[...]) else { fail("an edited index does not read back") }
    guard after.chunkOffsets == before.chunkOffsets else { fail("an edit moved chunk offsets") }
}
