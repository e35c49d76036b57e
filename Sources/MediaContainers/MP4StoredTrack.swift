/// A track of an MP4 or QuickTime file as a remux copies it, as `ffmpeg -c copy` does: the sample
/// entry ``MP4Writer`` writes for its samples (from the track's own: codec configuration, size or
/// rate and channels, the picture's colour and HDR boxes, the track's display matrix), its samples
/// and where they show, and a sound track's edit as its encoder's priming and length
/// (`MP4TrackFormat/gapless`), so that a copy keeps every packet and plays the same samples.
///
/// Nil for what a copy through the writer would not keep exactly; whoever asked reads the file
/// another way (GraphKit's graphs: through GStreamer's demuxer): a track with several sample
/// descriptions or no samples, a codec the writer does not describe (FLAC, whose entry is written
/// from the stream's end; MP3, PCM, AC-3), an edit list other than an optional empty edit then one
/// media edit at normal speed. (A video track's edit is copied as it is: a file cut between key
/// frames shows from its edit's start, the pictures before it decoded, not shown.)
package struct MP4StoredTrack: Sendable {
    package var format: MP4TrackFormat
    /// The samples in decode order, as the file's tables hold them.
    package var samples: MP4SampleIndex
    /// The media clock, the media time shown first (the first media edit's) and the empty time
    /// before it in seconds (``HLSSegmentPlan/Track/timeline(of:mediaEnd:hasSamples:movie:)``).
    package var timescale: Int
    package var mediaStart: Int64
    package var delay: Double

    package init?(_ track: MP4Track, index: Int, movie: MP4Movie, fileSize: UInt64) {
        guard let handler = track.handler, handler == "vide" || handler == "soun",
              track.box.find(["mdia", "minf", "stbl", "stsd"])?.children.count == 1,
              let entry = track.box.find(["mdia", "minf", "stbl", "stsd"])?.children.first,
              let description = SampleDescription(track), var format = Self.format(description),
              let samples = try? MP4SampleIndex(track, fileSize: fileSize), let last = samples.last, let end = samples.presentationEnd,
              let timeline = try? HLSSegmentPlan.Track.timeline(of: track, mediaEnd: end, hasSamples: true, movie: movie) else { return nil }
        let (timescale, mediaStart, delay) = (track.mediaTimescale, timeline.mediaStart, timeline.delay)
        // At most one empty edit, then one media edit at normal speed.
        let edits = track.edits ?? []
        let media = edits.filter { $0.mediaTime >= 0 }
        guard edits.count <= 2, media.count <= 1, media.allSatisfy({ $0.rate == 0x1_0000 }),
              edits.count < 2 || (edits[0].mediaTime < 0 && edits[1].mediaTime >= 0) else { return nil }
        let mediaEnd = Int64(last.decodeTime) + Int64(last.duration)
        // A video track keeps its own clock: its times pass tick for tick.
        if format.isVideo { format.copiedTimescale = UInt32(clamping: timescale) }
        if let edit = media.first, movie.timescale > 0 {
            // The edit's length in media ticks (the movie's clock is often coarser), at most the
            // media's: a file's edit may claim any length (2^64 ticks), and the copy shows what is there.
            let shown = min(Double(edit.duration) * Double(timescale) / Double(movie.timescale), Double(mediaEnd))
            if format.isVideo, edit.duration > 0 {
                // Copied as it is: the writer's own edit would show every picture (a file cut
                // between key frames shows from its edit's start, to its end).
                // (The first sample is decoded at 0: a track's decode times start there.)
                format.shownMedia = .init(start: mediaStart, duration: UInt64(shown.rounded()))
            } else if !format.isVideo, edit.mediaTime > 0 || edit.duration > 0 {
                // Counted in samples: a media clock other than the writer's would round them; and
                // what the writer's edit multiplies stays within 64 bits.
                guard timescale == Int(format.timescale),
                      !edit.mediaTime.multipliedReportingOverflow(by: 4 * Int64(timescale)).overflow else { return nil }
                let priming = Int(edit.mediaTime)
                let samples = edit.duration == 0 ? Int(mediaEnd) - priming : min(Int(mediaEnd) - priming, Int(shown.rounded()))
                guard samples > 0 else { return nil }
                if priming > 0 || samples < Int(mediaEnd) - priming { format.gapless = CMAF.Gapless(priming: priming, samples: samples, padding: Int(mediaEnd) - priming - samples) }
            }
        }
        if format.isVideo {
            format.displayMatrix = track.displayMatrix
            format.colour = Self.colour(in: entry)
            format.dolbyVision = description.dolbyVision
        }
        self.format = format
        self.samples = samples
        (self.timescale, self.mediaStart, self.delay) = (timescale, mediaStart, delay)
    }

    /// The writer's description of samples `description` describes; nil for a codec it does not
    /// describe, or a description that does not say what it needs.
    package static func format(_ description: SampleDescription) -> MP4TrackFormat? {
        let body = description.configuration?.body ?? []
        let size = description.size ?? (0, 0)
        let codec: MP4TrackFormat.Codec
        switch (description.codec, description.configuration?.type) {
        case ("avc1", "avcC"?), ("avc3", "avcC"?): codec = .h264(avcC: body, width: size.width, height: size.height)
        case ("hvc1", "hvcC"?), ("hev1", "hvcC"?): codec = .hevc(hvcC: body, width: size.width, height: size.height)
        case ("av01", "av1C"?): codec = .av1(av1C: body, width: size.width, height: size.height)
        case ("vp09", "vpcC"?): codec = .vp9(vpcC: body, width: size.width, height: size.height)
        case ("mp4a", "esds"?):
            // The object type (AAC: 0x40, or MPEG-2's AAC 0x66-0x68), then the AudioSpecificConfig.
            guard let objectType = body.first, [0x40, 0x66, 0x67, 0x68].contains(objectType) else { return nil }
            let (config, rate, channels) = audioSpecificConfig(description)
            guard !config.isEmpty else { return nil }
            codec = .aac(audioSpecificConfig: config, sampleRate: rate, channels: channels)
        case ("Opus", "dOps"?):
            guard body.count >= 11, body[1] > 0 else { return nil }
            codec = .opus(dOps: body, channels: Int(body[1]))
        case ("alac", "alac"?):
            // A full box: version and flags, then ALACSpecificConfig (24 bytes).
            guard body.count >= 28 else { return nil }
            let config = Array(body[4..<28])
            let rate = Int(config[20]) << 24 | Int(config[21]) << 16 | Int(config[22]) << 8 | Int(config[23])
            guard rate <= 768_000 else { return nil }  // ALAC's rates reach 384 kHz
            codec = .alac(cookie: config, sampleRate: rate, channels: Int(config[9]))
        default:
            return nil
        }
        let format = MP4TrackFormat(trackID: 1, codec: codec)
        if format.isVideo {
            guard size.width > 0, size.height > 0, !body.isEmpty else { return nil }
        } else if case .aac(_, let rate, let channels) = codec {
            guard rate > 0, channels > 0 else { return nil }
        } else if case .alac(_, let rate, let channels) = codec {
            guard rate > 0, channels > 0 else { return nil }
        }
        return format
    }

    /// The caps of a stream of `description`'s samples, as `demux` gives MP4's (and the
    /// readers of a file's index: `source.concat`, an asset reader's samples as stored): H.264 and HEVC
    /// by access unit with their parameter sets (avcC, hvcC), AAC raw with its AudioSpecificConfig.
    package static func caps(_ description: SampleDescription) -> String {
        let body = description.configuration?.body ?? []
        let hex = { (bytes: ArraySlice<UInt8>) in bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined() }
        let size = description.size.map { ", width=(int)\($0.width), height=(int)\($0.height)" } ?? ""
        switch description.codec {
        case "avc1", "avc3": return "video/x-h264, stream-format=(string)avc, alignment=(string)au, codec_data=(buffer)\(hex(body[...]))" + size
        case "hvc1", "hev1": return "video/x-h265, stream-format=(string)hvc1, alignment=(string)au, codec_data=(buffer)\(hex(body[...]))" + size
        default:
            let (config, rate, channels) = audioSpecificConfig(description)
            return "audio/mpeg, mpegversion=(int)4, stream-format=(string)raw, framed=(boolean)true, codec_data=(buffer)\(hex(config[...])), "
                + "rate=(int)\(rate), channels=(int)\(channels)"
        }
    }

    /// An `esds`'s AudioSpecificConfig (the configuration after its object type), with the rate
    /// and channels it states (an MP4's sample entry often says 2 channels for mono).
    package static func audioSpecificConfig(_ description: SampleDescription) -> (config: [UInt8], rate: Int, channels: Int) {
        let config = Array((description.configuration?.body ?? []).dropFirst())
        var (rate, channels) = description.sound.map { ($0.rate, $0.channels) } ?? (0, 0)
        if let head = AudioSpecificConfig(config) {
            if head.sampleRate > 0 { rate = head.sampleRate }
            if let stated = head.channels { channels = stated }
        }
        return (config, rate, channels)
    }

    /// The colour a visual sample entry states (`colr` nclx, or QuickTime's nclc, limited range),
    /// with its `mdcv` and `clli`; nil when it states none.
    static func colour(in entry: MP4Box) -> MP4TrackFormat.Colour? {
        let boxes = visualEntryBoxes(entry)
        guard let colr = boxes.first(where: { $0.type == "colr" && $0.body.count >= 10 && ["nclx", "nclc"].contains(String(decoding: $0.body[0..<4], as: UTF8.self)) })?.body
        else { return nil }
        // (An ICC profile's colr, `prof` or `rICC`, says no code points: the nclx beside it does.)
        let kind = String(decoding: colr[0..<4], as: UTF8.self)
        let u16 = { (i: Int) in UInt16(colr[i]) << 8 | UInt16(colr[i + 1]) }
        var colour = MP4TrackFormat.Colour(primaries: u16(4), transfer: u16(6), matrix: u16(8), fullRange: kind == "nclx" && colr.count > 10 && colr[10] & 0x80 != 0)
        colour.masteringDisplay = boxes.first { $0.type == "mdcv" && $0.body.count == 24 }?.body
        colour.contentLightLevel = boxes.first { $0.type == "clli" && $0.body.count == 4 }?.body
        return colour
    }

    /// The boxes a visual sample entry holds after its 78 bytes of fields (none when they
    /// cannot be read).
    static func visualEntryBoxes(_ entry: MP4Box) -> [MP4Box] {
        guard entry.body.count > 78 else { return [] }
        return (try? MP4Box.parseSequence(entry.body[78...], in: nil, depth: MP4Box.maximumDepth).0) ?? []
    }
}
