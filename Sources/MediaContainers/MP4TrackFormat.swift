// A track of a stream written as it is encoded (not copied from a file): its sample entry from
// the stream's facts (the encoder's configuration bytes, size, rate, colour), and the track's
// boxes around it. One description for every file GraphKit writes from encoded samples: whole
// MP4/M4A/MOV files (``MP4Writer``), fragmented ones, and CMAF segments (``CMAF``).

/// A track of a stream written as it is encoded: what its sample entry says.
package struct MP4TrackFormat: Sendable, Equatable {
    package enum Codec: Sendable, Equatable {
        /// `avc1` with the encoder's AVCDecoderConfigurationRecord (`avcC`).
        case h264(avcC: [UInt8], width: Int, height: Int)
        /// `mp4a` with the encoder's AudioSpecificConfig.
        case aac(audioSpecificConfig: [UInt8], sampleRate: Int, channels: Int)
        /// `hvc1` with the HEVCDecoderConfigurationRecord (`hvcC`).
        case hevc(hvcC: [UInt8], width: Int, height: Int)
        /// `av01` with the AV1CodecConfigurationRecord (`av1C`).
        case av1(av1C: [UInt8], width: Int, height: Int)
        /// `vp09` with its VPCodecConfigurationRecord (`vpcC`, version 1).
        case vp9(vpcC: [UInt8], width: Int, height: Int)
        /// `Opus` with its `dOps` (the OpusHead's fields, big-endian, as ISO/IEC 14496-12's
        /// Opus mapping writes them).
        case opus(dOps: [UInt8], channels: Int)
        /// `alac` with Apple's magic cookie (ALACSpecificConfig).
        case alac(cookie: [UInt8], sampleRate: Int, channels: Int)
        /// `fLaC`: the entry, with its `dfLa`, is the stream's header (known at its end, when
        /// the encoder has written its sample count and MD5): ``MP4Writer/finish(_:)`` takes it.
        case flac(sampleRate: Int, channels: Int)
    }

    /// The colour a video sample entry states (`colr` nclx, ITU-T H.273 code points), and the
    /// HDR boxes' bodies as ISO/IEC 23001-17 and CMAF write them (`mdcv`: three primaries, the
    /// white point, the luminance range, 24 bytes; `clli`: the content light levels, 4 bytes).
    package struct Colour: Sendable, Equatable {
        package var primaries: UInt16
        package var transfer: UInt16
        package var matrix: UInt16
        package var fullRange: Bool
        package var masteringDisplay: [UInt8]?
        package var contentLightLevel: [UInt8]?
        package init(primaries: UInt16, transfer: UInt16, matrix: UInt16, fullRange: Bool,
                     masteringDisplay: [UInt8]? = nil, contentLightLevel: [UInt8]? = nil) {
            (self.primaries, self.transfer, self.matrix, self.fullRange) = (primaries, transfer, matrix, fullRange)
            (self.masteringDisplay, self.contentLightLevel) = (masteringDisplay, contentLightLevel)
        }
    }

    package var trackID: UInt32
    package var codec: Codec
    /// An audio encoder's priming and padding, once measured: written as the track's edit list
    /// and iTunes' gapless tag (``CMAF/gaplessTag(_:)``).
    package var gapless: CMAF.Gapless?
    package var colour: Colour?
    /// A copied Dolby Vision track's configuration box, written as it was (its samples keep
    /// their RPUs); nil for a stream encoded here.
    package var dolbyVision: DolbyVisionConfiguration?
    /// The display matrix (`tkhd`), for a video track.
    package var displayMatrix: DisplayMatrix?
    /// The media a video track shows, when it is given rather than worked out from its samples'
    /// times: a copied track's edit as its file states it (where it starts, how long it lasts),
    /// written as that edit, so a copy shows what its source shows: all of its pictures, or,
    /// for a file cut between key frames, from after its first one or to before its last.
    package var shownMedia: ShownMedia?
    /// `duration` ticks of the media clock from `start` ticks after the first sample's decode time.
    package struct ShownMedia: Sendable, Equatable {
        package var start: Int64
        package var duration: UInt64
        package init(start: Int64, duration: UInt64) { (self.start, self.duration) = (start, duration) }
    }
    /// Whether the file is QuickTime's (`.mov`): handlers name their component type.
    package var quickTime = false

    /// A copied video track's own media clock (ffmpeg's 24,000 Hz for 23.976 fps), kept so that
    /// its times pass tick for tick; nil: ``timescale``'s own.
    package var copiedTimescale: UInt32?

    /// The media clock: 90 kHz for video, the sample rate for audio (48 kHz for Opus); a copied
    /// video track's own.
    package var timescale: UInt32 {
        if let copiedTimescale, copiedTimescale > 0, isVideo { return copiedTimescale }
        return switch codec {
        case .h264, .hevc, .av1, .vp9: 90_000
        case .aac(_, let rate, _), .alac(_, let rate, _), .flac(let rate, _): UInt32(clamping: max(1, rate))
        case .opus: 48_000
        }
    }

    package init(trackID: UInt32, codec: Codec) {
        self.trackID = trackID
        self.codec = codec
    }

    package var isVideo: Bool {
        switch codec {
        case .h264, .hevc, .av1, .vp9: true
        default: false
        }
    }

    /// The picture's size, for a video track.
    package var size: (width: Int, height: Int) {
        switch codec {
        case .h264(_, let w, let h), .hevc(_, let w, let h), .av1(_, let w, let h), .vp9(_, let w, let h): (w, h)
        default: (0, 0)
        }
    }

    /// The `trak` box: header, media header, handler, the sample table `tables` (empty for a
    /// fragmented file, whose fragments hold the samples) after the sample descriptions (this
    /// format's entry without `stsdEntries`).
    func trak(tables: [MP4Box] = CMAF.emptySampleTables, mediaDuration: UInt64 = 0, trackDuration: UInt64 = 0,
              edits: [EditList.Edit]? = nil, language: UInt16 = 0x55C4, stsdEntries: [MP4Box]? = nil) -> MP4Box {
        func box(_ type: FourCC, _ build: (inout [UInt8]) -> Void) -> MP4Box {
            var body: [UInt8] = []
            build(&body)
            return MP4Box(type: type, body: body)
        }
        let (width, height) = size
        let wideTrack = trackDuration > UInt64(UInt32.max), wideMedia = mediaDuration > UInt64(UInt32.max)
        let tkhd = box("tkhd") { b in
            b.appendVersionAndFlags(wideTrack ? 1 : 0, 3)  // enabled, in the movie
            if wideTrack { b.appendU64(0); b.appendU64(0) } else { b.appendU32(0); b.appendU32(0) }  // creation, modification
            b.appendU32(trackID); b.appendU32(0)
            b.appendWideOrNarrow(trackDuration, wide: wideTrack)
            b.appendU64(0)
            b.appendU16(0); b.appendU16(isVideo ? 0 : 1)  // layer, alternate group (sound tracks: one group)
            b.appendU16(isVideo ? 0 : 0x0100); b.appendU16(0)
            for m in (displayMatrix ?? .identity).fixedPoint { b.appendU32(UInt32(bitPattern: m)) }
            b.appendU32(UInt32(clamping: width) << 16); b.appendU32(UInt32(clamping: height) << 16)
        }
        let mdhd = box("mdhd") { b in
            b.appendVersionAndFlags(wideMedia ? 1 : 0, 0)
            if wideMedia { b.appendU64(0); b.appendU64(0) } else { b.appendU32(0); b.appendU32(0) }
            b.appendU32(timescale)
            b.appendWideOrNarrow(mediaDuration, wide: wideMedia)
            b.appendU16(language)
            b.appendU16(0)
        }
        let name = isVideo ? "VideoHandler" : "SoundHandler"
        let hdlr = box("hdlr") { b in
            b.appendVersionAndFlags(0, 0)
            b.appendU32(quickTime ? FourCC("mhlr").rawValue : 0)
            b.appendU32(FourCC(isVideo ? "vide" : "soun").rawValue)
            b.appendU32(0); b.appendU32(0); b.appendU32(0)
            // QuickTime's name is a counted string, ISO's a C string.
            b += quickTime ? [UInt8(name.utf8.count)] + Array(name.utf8) : Array(name.utf8) + [0]
        }
        let header = isVideo
            ? box("vmhd") { b in b.appendVersionAndFlags(0, 1); b.appendU64(0) }
            : box("smhd") { b in b.appendVersionAndFlags(0, 0); b.appendU32(0) }
        let dref = box("dref") { b in
            b.appendVersionAndFlags(0, 0)
            b.appendU32(1)
            b.appendU32(12); b.appendU32(FourCC(quickTime ? "alis" : "url ").rawValue); b.appendVersionAndFlags(0, 1)  // in this file
        }
        let stsd = box("stsd") { b in
            b.appendVersionAndFlags(0, 0)
            let entries = stsdEntries ?? [sampleEntry]
            b.appendU32(UInt32(entries.count))
            for e in entries { b += e.bytes }
        }
        var dataHandler: [MP4Box] = []
        if quickTime {
            dataHandler = [box("hdlr") { b in
                b.appendVersionAndFlags(0, 0)
                b.appendU32(FourCC("dhlr").rawValue); b.appendU32(FourCC("alis").rawValue)
                b.appendU32(0); b.appendU32(0); b.appendU32(0)
                b += [UInt8("DataHandler".utf8.count)] + Array("DataHandler".utf8)
            }]
        }
        let stbl = MP4Box(type: "stbl", children: [stsd] + tables)
        let minf = MP4Box(type: "minf", children: [header] + dataHandler + [MP4Box(type: "dinf", children: [dref]), stbl])
        var children = [tkhd]
        if let edits, !edits.isEmpty { children.append(MP4Box(type: "edts", children: [MP4Box(EditList(edits))])) }
        children.append(MP4Box(type: "mdia", children: [mdhd, hdlr, minf]))
        return MP4Box(type: "trak", children: children)
    }

    /// The priming and input length of ``gapless`` as an encoder's measured delay (what the
    /// writer's ending takes), on the track's clock (its sample rate).
    package var encoderDelay: EncoderDelay? {
        gapless.map { EncoderDelay(priming: $0.priming, samples: $0.samples, sampleRate: Int(timescale)) }
    }

    /// The edit list of a fragmented file's track: from the priming on, as long as the input
    /// (the movie clock is ms).
    var gaplessEdits: [EditList.Edit]? {
        if let shown = shownMedia {
            // Written before the samples: from its start to the end of the media (a duration of
            // 0, as a fragmented file's edit says it), however many samples come.
            return [EditList.Edit(duration: 0, mediaTime: shown.start)]
        }
        return gapless.map { g in
            [EditList.Edit(duration: UInt64((Double(g.samples) * 1000 / Double(max(1, timescale))).rounded()), mediaTime: Int64(g.priming))]
        }
    }

    /// The sample entry (for FLAC, a stand-in until the stream's header is known).
    var sampleEntry: MP4Box {
        var b: [UInt8] = [0, 0, 0, 0, 0, 0]
        b.appendU16(1)  // data reference index
        func visual(_ type: FourCC, _ configuration: MP4Box) -> MP4Box {
            let (width, height) = size
            b += [UInt8](repeating: 0, count: 16)
            b.appendU16(UInt16(clamping: width)); b.appendU16(UInt16(clamping: height))
            b.appendU32(0x0048_0000); b.appendU32(0x0048_0000)  // 72 dpi
            b.appendU32(0)
            b.appendU16(1)  // frames per sample
            b += [UInt8](repeating: 0, count: 32)  // compressor name
            b.appendU16(0x18); b.appendU16(0xFFFF)
            b += configuration.bytes
            if let c = colour {
                var colr = Array("nclx".utf8)
                colr.appendU16(c.primaries); colr.appendU16(c.transfer); colr.appendU16(c.matrix)
                colr.append(c.fullRange ? 0x80 : 0)
                b += MP4Box(type: "colr", body: colr).bytes
                if let m = c.masteringDisplay, m.count == 24 { b += MP4Box(type: "mdcv", body: m).bytes }
                if let l = c.contentLightLevel, l.count == 4 { b += MP4Box(type: "clli", body: l).bytes }
            }
            if let dolbyVision { b += dolbyVision.box.bytes }
            return MP4Box(type: type, body: b)
        }
        func audio(_ type: FourCC, channels: Int, bits: UInt16 = 16, rate: Int, _ configuration: MP4Box) -> MP4Box {
            b.appendU64(0)
            b.appendU16(UInt16(clamping: channels)); b.appendU16(bits)
            b.appendU32(0)
            b.appendU32(rate <= 0xFFFF ? UInt32(rate) << 16 : 0)
            b += configuration.bytes
            return MP4Box(type: type, body: b)
        }
        switch codec {
        case .h264(let avcC, _, _): return visual("avc1", MP4Box(type: "avcC", body: avcC))
        case .hevc(let hvcC, _, _): return visual("hvc1", MP4Box(type: "hvcC", body: hvcC))
        case .av1(let av1C, _, _): return visual("av01", MP4Box(type: "av1C", body: av1C))
        case .vp9(let vpcC, _, _): return visual("vp09", MP4Box(type: "vpcC", body: vpcC))
        case .aac(let config, let rate, let channels):
            return audio("mp4a", channels: channels, rate: rate, MP4Box(type: "esds", body: Self.esds(config, trackID: trackID)))
        case .opus(let dOps, let channels):
            return audio("Opus", channels: channels, rate: 48_000, MP4Box(type: "dOps", body: dOps))
        case .alac(let cookie, let rate, let channels):
            // The cookie is ALACSpecificConfig (24 bytes), or a QuickTime `wave`'s whole: the
            // `alac` box holds a full box's version and flags, then the config.
            let config = Self.alacConfig(cookie)
            let bits = config.count >= 6 ? UInt16(config[5]) : 16
            return audio("alac", channels: channels, bits: bits, rate: rate, MP4Box(type: "alac", body: [0, 0, 0, 0] + config))
        case .flac(let rate, let channels):
            return audio("fLaC", channels: channels, rate: rate, MP4Box(type: "dfLa", body: [0, 0, 0, 0]))
        }
    }

    /// ALACSpecificConfig out of a cookie: as it is (24 bytes), or found after its `frma`/`alac`
    /// atom headers when the cookie is QuickTime's longer form.
    static func alacConfig(_ cookie: [UInt8]) -> [UInt8] {
        guard cookie.count > 24 else { return cookie }
        // `....alac` + version/flags, then the 24 bytes.
        var i = 0
        while i + 12 + 24 <= cookie.count {
            if cookie[i + 4] == 0x61, cookie[i + 5] == 0x6C, cookie[i + 6] == 0x61, cookie[i + 7] == 0x63 {  // "alac"
                return Array(cookie[(i + 12)..<(i + 36)])
            }
            i += 1
        }
        return Array(cookie.suffix(24))
    }

    /// An `esds` body (ISO/IEC 14496-1 descriptors): AAC (object type 0x40) in an audio stream,
    /// its AudioSpecificConfig as the decoder-specific information.
    static func esds(_ config: [UInt8], trackID: UInt32) -> [UInt8] {
        func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
            // The size in 7-bit groups, four of them as many writers do (any size to 256 MB).
            let n = body.count
            return [tag, UInt8(0x80 | (n >> 21) & 0x7F), UInt8(0x80 | (n >> 14) & 0x7F), UInt8(0x80 | (n >> 7) & 0x7F), UInt8(n & 0x7F)] + body
        }
        var decoderConfig: [UInt8] = [0x40, 0x15, 0, 0, 0]  // AAC, audio stream; buffer size unknown
        decoderConfig.appendU32(0); decoderConfig.appendU32(0)  // bit rates unknown
        decoderConfig += descriptor(0x05, config)
        var es: [UInt8] = []
        es.appendU16(UInt16(truncatingIfNeeded: trackID))
        es.append(0)
        es += descriptor(0x04, decoderConfig) + descriptor(0x06, [0x02])
        var body: [UInt8] = []
        body.appendVersionAndFlags(0, 0)
        body += descriptor(0x03, es)
        return body
    }

    /// `dOps` from an Ogg Opus identification header (`OpusHead`, RFC 7845 5.1: little-endian),
    /// as ISO/IEC 14496-12's Opus mapping stores it (big-endian, version 0); nil when `head` is
    /// not one.
    package static func dOps(opusHead head: [UInt8]) -> [UInt8]? {
        guard head.count >= 19, head.starts(with: Array("OpusHead".utf8)), head[9] >= 1 else { return nil }
        let channels = head[9], family = head[18]
        var out: [UInt8] = [0, channels]
        out += [head[11], head[10]]  // pre-skip
        out += [head[15], head[14], head[13], head[12]]  // input sample rate
        out += [head[17], head[16]]  // output gain
        out.append(family)
        if family != 0 {
            // Stream count, coupled count, a mapping byte a channel.
            guard head.count >= 21 + Int(channels) else { return nil }
            out += head[19..<(21 + Int(channels))]
        }
        return out
    }

    /// A VP9 `vpcC` (version 1, the VP codecs' ISO BMFF binding): profile, level 1 (10: the
    /// stream's level is not in GStreamer's caps, and decoders do not read it), bit depth,
    /// chroma subsampling (1: 4:2:0 colocated), range and the colour code points.
    package static func vpcC(profile: Int, bitDepth: Int, chromaSubsampling: Int = 1, colour: Colour?) -> [UInt8] {
        var out: [UInt8] = [1, 0, 0, 0]  // version 1, flags
        out.append(UInt8(clamping: profile))
        out.append(10)
        out.append(UInt8(clamping: bitDepth) << 4 | UInt8(clamping: chromaSubsampling & 7) << 1 | (colour?.fullRange == true ? 1 : 0))
        out.append(UInt8(clamping: colour?.primaries ?? 2))
        out.append(UInt8(clamping: colour?.transfer ?? 2))
        out.append(UInt8(clamping: colour?.matrix ?? 2))
        out.appendU16(0)  // no codec initialization data
        return out
    }
}
