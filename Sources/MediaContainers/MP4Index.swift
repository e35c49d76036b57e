import FoundationEssentials
import Glibc

/// Edits a finished MP4/M4A/MOV file's index in place: what GStreamer 1.22's MP4 writer leaves
/// out, written the way ffmpeg and AVFoundation write it.
///
/// - An AAC track's encoder delay becomes its edit list: the edit starts after the priming and
///   lasts exactly the input's samples, so players and decoders that honour edit lists give
///   back the input, sample-aligned, and the file's duration is the input's. The movie's clock
///   becomes the audio's rate so that the edit is exact to the sample.
/// - A video track's display orientation becomes its track header's matrix
///   (`AVAssetTrack.preferredTransform`), so a phone's portrait video stays portrait.
///
/// When the index grows and comes before the media data (`faststart`), the file is rewritten
/// with the chunk offsets moved by the growth.
package enum MP4Index {
    package struct Edits {
        package var audioDelay: EncoderDelay?
        package var orientation: DisplayOrientation?
        /// The file type's major brand to state ("M4A " for an audio file, as iTunes and
        /// AVFoundation write it), when the muxer's is not it.
        package var majorBrand: String?
        /// Whether the index (moov) changes: an edit list or a display matrix to write.
        package var changesIndex: Bool { audioDelay != nil || (orientation != nil && orientation != .rotate0) }
        package var isEmpty: Bool { !changesIndex && majorBrand == nil }
        package init(audioDelay: EncoderDelay? = nil, orientation: DisplayOrientation? = nil, majorBrand: String? = nil) {
            self.audioDelay = audioDelay
            self.orientation = orientation
            self.majorBrand = majorBrand
        }
    }

    package struct Failure: Error {
        package let reason: String
    }

    /// A top-level box's place in the file.
    package struct Extent {
        package let type: String
        package let offset: Int
        package let size: Int
    }

    package static func apply(_ edits: Edits, toFileAt path: String) throws(Failure) {
        guard !edits.isEmpty else { return }
        let fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        try apply(edits, toFileDescriptor: fd)
    }

    /// The same edits on a file open for reading and writing (a sink's temporary file, never
    /// reopened by name): everything happens through `fd`, the file stays the same file.
    package static func apply(_ edits: Edits, toFileDescriptor fd: Int32) throws(Failure) {
        guard !edits.isEmpty else { return }
        let boxes = try topLevelBoxes(fd)
        if let brand = edits.majorBrand, brand.utf8.count == 4, let ftyp = boxes.first, ftyp.type == "ftyp", ftyp.size >= 16 {
            // ftyp: size, type, major brand, minor version, compatible brands. The muxer's
            // brand stays among the compatible ones (mp42, isom), so readers of either accept it.
            try writeFully(fd, Array(brand.utf8), at: ftyp.offset + 8)
        }
        guard edits.changesIndex else { return }
        guard let moov = boxes.first(where: { $0.type == "moov" }) else { throw Failure(reason: "the file has no index (moov)") }
        var bytes = [UInt8](repeating: 0, count: moov.size)
        try readFully(fd, &bytes, at: moov.offset)
        var movie: MP4Movie
        do { movie = try MP4Movie(parsing: bytes[...]) } catch { throw Failure(reason: "its index is malformed: \(error.reason)") }

        if let delay = edits.audioDelay { describe(delay, in: &movie) }
        if let orientation = edits.orientation, orientation != .rotate0 {
            for (i, _) in movie.tracks(handler: "vide") {
                var track = movie.track(i)
                track.setOrientation(orientation)
                movie.moov.children[i] = track.box
            }
        }
        var updated = movie.moov.bytes
        let growth = updated.count - moov.size
        if growth == 0 {
            try writeFully(fd, updated, at: moov.offset)
        } else if moov.offset + moov.size == boxes.last.map({ $0.offset + $0.size }) {
            // The index ends the file: write it longer or shorter in place.
            try writeFully(fd, updated, at: moov.offset)
            guard ftruncate(fd, off_t(moov.offset + updated.count)) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        } else {
            // The index comes before the media: every chunk after it moves by the growth (which
            // may itself grow the index, if a 32-bit offset table must become 64-bit).
            var shift = growth
            while true {
                var shifted = movie
                shifted.shiftChunkOffsets(after: moov.offset, by: shift)
                updated = shifted.moov.bytes
                if updated.count - moov.size == shift { break }
                shift = updated.count - moov.size
            }
            // Moved in place, from the end when it grows: no second file, no name.
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
            let tail = (moov.offset + moov.size)..<Int(st.st_size)
            try move(fd, tail, by: shift)
            try writeFully(fd, updated, at: moov.offset)
            if shift < 0 {
                guard ftruncate(fd, off_t(tail.upperBound + shift)) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
            }
        }
    }

    /// An edit list for the sound track that skips the priming and ends after the input's
    /// samples, on a movie clock at the audio's rate.
    package static func describe(_ delay: EncoderDelay, in movie: inout MP4Movie) {
        guard let (i, track) = movie.tracks(handler: "soun").first, delay.sampleRate > 0 else { return }
        let mediaScale = track.mediaTimescale
        guard mediaScale > 0 else { return }
        movie.rescale(to: delay.sampleRate)
        var edited = movie.track(i)
        var edits = edited.edits ?? []
        // Keep an empty edit that starts the track later; the media edit is replaced.
        edits.removeAll { $0.mediaTime >= 0 }
        let priming = Int64((delay.priming * mediaScale + delay.sampleRate / 2) / delay.sampleRate)
        edits.append(MP4Track.Edit(duration: UInt64(delay.samples), mediaTime: priming))
        edited.setEdits(edits)
        movie.moov.children[i] = edited.box
        movie.updateDuration()
    }

    package static func topLevelBoxes(_ fd: Int32) throws(Failure) -> [Extent] {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw Failure(reason: String(cString: strerror(errno))) }
        let end = Int(st.st_size)
        var boxes: [Extent] = []
        var at = 0
        while at + 8 <= end {
            var header = [UInt8](repeating: 0, count: 16)
            try readFully(fd, &header, at: at, upTo: min(16, end - at))
            var size = Int(header.u32(0))
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 { size = Int(clamping: header.u64(8)) } else if size == 0 { size = end - at }
            guard size >= 8, size <= end - at else { throw Failure(reason: "its \(type) box at byte \(at) runs past the end") }
            boxes.append(Extent(type: type, offset: at, size: size))
            at += size
        }
        return boxes
    }

    /// Moves the bytes of `range` by `shift` within the file (overlapping ranges too: from the
    /// end when they move forward).
    package static func move(_ fd: Int32, _ range: Range<Int>, by shift: Int) throws(Failure) {
        guard shift != 0, !range.isEmpty else { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var done = 0
        while done < range.count {
            let n = min(buffer.count, range.count - done)
            let from = shift > 0 ? range.upperBound - done - n : range.lowerBound + done
            try readFully(fd, &buffer, at: from, upTo: n)
            try writeFully(fd, buffer[0..<n], at: from + shift)
            done += n
        }
    }

    package static func readFully(_ fd: Int32, _ buffer: inout [UInt8], at offset: Int, upTo count: Int? = nil) throws(Failure) {
        let want = count ?? buffer.count
        var done = 0
        while done < want {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, want - done, off_t(offset + done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw Failure(reason: n == 0 ? "the file ends early" : String(cString: strerror(errno))) }
            done += n
        }
    }

    package static func writeFully(_ fd: Int32, _ bytes: some Collection<UInt8>, at offset: Int) throws(Failure) {
        let array = Array(bytes)
        var done = 0
        while done < array.count {
            let n = array.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, array.count - done, off_t(offset + done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw Failure(reason: String(cString: strerror(errno))) }
            done += n
        }
    }
}

extension MP4Movie {
    /// Moves every chunk offset (`stco`, `co64`) that points past `position` by `delta` bytes;
    /// a 32-bit table that would overflow becomes a 64-bit one.
    package mutating func shiftChunkOffsets(after position: Int, by delta: Int) {
        for i in trackIndices {
            moov.children[i].modify(["mdia", "minf", "stbl"]) { stbl in
                for c in stbl.children.indices where ["stco", "co64"].contains(stbl.children[c].type) {
                    let box = stbl.children[c]
                    let wide = box.type == "co64", width = wide ? 8 : 4
                    guard box.body.count >= 8 else { continue }
                    let count = min(Int(box.body.u32(4)), (box.body.count - 8) / width)
                    var offsets: [UInt64] = (0..<count).map { k in
                        wide ? box.body.u64(8 + k * width) : UInt64(box.body.u32(8 + k * width))
                    }
                    offsets = offsets.map { $0 >= UInt64(position) ? $0 &+ UInt64(bitPattern: Int64(delta)) : $0 }
                    let needsWide = wide || offsets.contains { $0 > UInt64(UInt32.max) }
                    var body: [UInt8] = [0, 0, 0, 0]
                    body.appendU32(UInt32(offsets.count))
                    for o in offsets { if needsWide { body.appendU64(o) } else { body.appendU32(UInt32(o)) } }
                    stbl.children[c] = MP4Box(type: needsWide ? "co64" : "stco", body: body)
                }
            }
        }
    }
}
