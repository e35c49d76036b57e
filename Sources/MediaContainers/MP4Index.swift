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
/// When the index grows and comes before the media data (`faststart`), the media moves by the
/// growth, in place, and the chunk offsets with it (``MP4Editor``).
package enum MP4Index {
    package struct Edits {
        package var audioDelay: EncoderDelay?
        package var orientation: DisplayOrientation?
        /// A video track's display matrix as given (`AVAssetWriterInput.transform`, sink.mp4's
        /// `videoTransform`): it takes the place of ``orientation``.
        package var videoMatrix: DisplayMatrix?
        /// Where the presentation ends, `ticks` of `timescale` a second from the file's start
        /// (`AVAssetWriter.endSession(atSourceTime:)`): every track's edit list stops there, so
        /// samples appended past it are in the file and not played.
        package var presentationEnd: (ticks: UInt64, timescale: UInt64)?
        /// The file type's major brand to state ("M4A " for an audio file, as iTunes and
        /// AVFoundation write it), when the muxer's is not it.
        package var majorBrand: String?
        /// The date tag's text (`moov/udta/meta/ilst/©day`), an ISO 8601 date as given, as
        /// iTunes and AVFoundation write it: GStreamer 1.22's muxer writes only the day, its
        /// month and day unpadded ("2024-5-1"). Written when the file has an `ilst`.
        package var dateTag: String?
        /// Whether to put right an Opus track's header (``OpusHeaderRepair``) when it needs it.
        package var repairsOpusHeader = false
        /// The header of a FLAC stream the muxer wrote under a stand-in sample entry: the sound
        /// track's real one is written (``MP4FLAC``), and its edit list, exact to the sample.
        package var flacHeader: FLACStreamHeader?
        /// Whether the index (moov) changes: an edit list, a display matrix or a tag to write.
        package var changesIndex: Bool {
            audioDelay != nil || (orientation != nil && orientation != .rotate0) || (videoMatrix != nil && videoMatrix != .identity)
                || presentationEnd != nil || dateTag != nil || flacHeader != nil
        }
        package var isEmpty: Bool { !changesIndex && !repairsOpusHeader && majorBrand == nil }
        package init(audioDelay: EncoderDelay? = nil, orientation: DisplayOrientation? = nil, majorBrand: String? = nil) {
            self.audioDelay = audioDelay
            self.orientation = orientation
            self.majorBrand = majorBrand
        }
    }

    package static func apply(_ edits: Edits, toFileAt path: String) throws(ContainerError) {
        guard !edits.isEmpty else { return }
        let fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw ContainerError(String(cString: strerror(errno))) }
        defer { close(fd) }
        try apply(edits, toFileDescriptor: fd)
    }

    /// The same edits on a file open for reading and writing (a sink's temporary file, never
    /// reopened by name): everything happens through `fd`, the file stays the same file.
    package static func apply(_ edits: Edits, toFileDescriptor fd: Int32) throws(ContainerError) {
        guard !edits.isEmpty else { return }
        var editor = try MP4Editor(descriptor: fd)
        if let brand = edits.majorBrand.flatMap({ FourCC(exactly: $0) }), editor.types.first == "ftyp",
           var ftyp = try editor.box(at: 0).read(FileType.self) {
            // The muxer's brand stays among the compatible ones (mp42, isom), so readers of
            // either accept it.
            ftyp.majorBrand = brand
            var box = try editor.box(at: 0)
            box.store(ftyp)
            editor.replace(at: 0, with: box)
        }
        if edits.changesIndex || edits.repairsOpusHeader {
            let found: (index: Int, movie: MP4Movie)?
            do { found = try editor.movie() } catch { throw ContainerError("its index is malformed: \(error.reason)") }
            guard let found else { throw ContainerError("the file has no index (moov)") }
            var movie = found.movie
            var delay = edits.audioDelay
            if let flac = edits.flacHeader {
                try MP4FLAC.describe(flac, in: &movie, file: editor.file)
                // No priming; when no count came, what the track holds (describe stops the
                // edit at its samples).
                delay = EncoderDelay(priming: 0, samples: delay?.samples ?? .max, sampleRate: flac.sampleRate)
            }
            let repaired = edits.repairsOpusHeader && OpusHeaderRepair.repair(&movie)
            var shared = edits
            shared.audioDelay = delay
            edit(&movie, with: shared)
            if edits.changesIndex || repaired { editor.replace(at: found.index, with: movie.moov) }
        }
        try editor.commit()
    }

    /// Makes `edits`' changes of the index on `movie` (a finished file's, or the one
    /// ``MP4Writer`` writes): the sound's edit list from its encoder delay, the video's display
    /// matrix or orientation, the presentation's end, the date tag. The file type, the Opus
    /// header and FLAC's sample entry are the callers'.
    package static func edit(_ movie: inout MP4Movie, with edits: Edits) {
        if let delay = edits.audioDelay { describe(delay, in: &movie) }
        if let matrix = edits.videoMatrix, matrix != .identity {
            for (t, track) in movie.tracks(handler: "vide") {
                var turned = track
                turned.setDisplayMatrix(matrix)
                movie.setTrack(t, turned)
            }
        } else if let orientation = edits.orientation, orientation != .rotate0 {
            for (t, track) in movie.tracks(handler: "vide") {
                var turned = track
                turned.setOrientation(orientation)
                movie.setTrack(t, turned)
            }
        }
        if let end = edits.presentationEnd { self.end(movie: &movie, at: end) }
        if let date = edits.dateTag { setTag(FourCC(0xA964_6179 /* ©day */), text: date, in: &movie) }
    }

    /// Sets an iTunes text item (`moov/udta/meta/ilst/KEY`, one UTF-8 `data` box) to `text`,
    /// in place of the one there; nothing when the file has no `ilst`.
    package static func setTag(_ key: FourCC, text: String, in movie: inout MP4Movie) {
        guard movie.moov.find(["udta", "meta", "ilst"]) != nil else { return }
        MP4ExtraTags.setText(key, text, in: &movie.moov)
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
        // A track cut short (a length limit ended the file while the encoder was still given
        // samples) holds fewer than the encoder was given: the edit stops where its samples do.
        let held = Int(clamping: MP4StreamFacts.scale(track.sampleTableDuration, UInt64(delay.sampleRate), UInt64(mediaScale)))
        let samples = min(delay.samples, max(0, held - delay.priming))
        edits.append(MP4Track.Edit(duration: UInt64(samples), mediaTime: priming))
        edited.setEdits(edits)
        movie.setTrack(i, edited)
        movie.updateDuration()
    }

    /// Ends every track's presentation at `end`: its edits are cut there (a track with none gets
    /// one, from its media's start), so a player and a decoder that honours edit lists stop at
    /// `end`; a track that ends sooner is left as it is. The movie's duration follows.
    package static func end(movie: inout MP4Movie, at end: (ticks: UInt64, timescale: UInt64)) {
        let scale = UInt64(max(0, movie.timescale))
        guard scale > 0, end.timescale > 0 else { return }
        let (product, overflow) = end.ticks.multipliedReportingOverflow(by: scale)
        guard !overflow else { return }
        let endTicks = (product + end.timescale / 2) / end.timescale
        for i in movie.trackIndices {
            var track = movie.track(i)
            let edits = track.edits ?? [MP4Track.Edit(duration: track.duration, mediaTime: 0)]
            guard edits.reduce(UInt64(0), { $0 &+ $1.duration }) > endTicks else { continue }
            var remaining = endTicks, cut: [MP4Track.Edit] = []
            for e in edits where remaining > 0 {
                let d = min(e.duration, remaining)
                cut.append(MP4Track.Edit(duration: d, mediaTime: e.mediaTime, rate: e.rate))
                remaining -= d
            }
            track.setEdits(cut)
            movie.setTrack(i, track)
        }
        movie.updateDuration()
    }

    /// A top-level box's place in the file.
    package struct Extent {
        package let type: FourCC
        package let offset: Int
        package let size: Int
    }

    /// The top-level boxes of the file open as `fd`; throws when one runs past its end.
    package static func topLevelBoxes(_ fd: Int32) throws(ContainerError) -> [Extent] {
        let file = try MP4File(FileBytes(descriptor: fd))
        return try file.boxes.map { box throws(ContainerError) in
            guard file.isWhole(box) else { throw ContainerError("its \(box.type) box at byte \(box.offset) runs past the end") }
            return Extent(type: box.type, offset: Int(box.offset), size: Int(box.size))
        }
    }
}
