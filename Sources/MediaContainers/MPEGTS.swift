// MPEG-2 transport stream segments for HLS (RFC 8216 3.2, ISO/IEC 13818-1): the same runs of
// samples a CMAF media segment holds, as 188-byte packets: a PAT and a PMT at the start of each
// segment (so each can be decoded alone), H.264 in Annex B form (an access unit delimiter, and
// the SPS and PPS before each key frame) and AAC in ADTS frames, each access unit one PES packet
// with its times, the PCR on the video's (the audio's without video). Written here rather than by
// GStreamer's mpegtsmux so that the cuts, the files and their renaming stay sink.hls's own.

/// Writes a stream's TS segments in turn: the continuity counters go on from one to the next.
package struct MPEGTSWriter: Sendable {
    package let tracks: [MP4TrackFormat]
    private var continuity: [UInt16: UInt8] = [:]
    /// Added to every time (90 kHz): a stream starts at 1 s, as ffmpeg's, so the PCR, which
    /// leads the decode times, never goes below 0.
    static let start: Int64 = 90_000
    static let pmtPID: UInt16 = 0x1000
    static let pcrLead: Int64 = 9_000  // 0.1 s

    package init(tracks: [MP4TrackFormat]) { self.tracks = tracks }

    static func pid(_ t: Int) -> UInt16 { 0x100 + UInt16(t) }

    /// A segment of `runs` (each a track's samples, times in its own ticks as ``FragmentRun``
    /// gives them), its samples interleaved by decode time.
    package mutating func segment(_ runs: [FragmentRun]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(runs.reduce(0) { $0 + $1.data.count } * 105 / 100 + 1024)
        packet(pid: 0, unitStart: true, payload: [0] + Self.section(table: 0, id: 1, body: Self.pat), into: &out)
        packet(pid: Self.pmtPID, unitStart: true, payload: [0] + Self.section(table: 2, id: 1, body: pmt), into: &out)
        // Every access unit, in decode order across the tracks.
        struct Unit { var track: Int; var dts: Int64; var pts: Int64; var data: ArraySlice<UInt8>; var sync: Bool }
        var units: [Unit] = []
        for run in runs {
            guard let t = tracks.firstIndex(where: { $0.trackID == run.trackID }) else { continue }
            let scale = UInt64(tracks[t].timescale)
            var at = 0
            for s in run.samples {
                // Times as a file claims them (decode times to 2^64 - 1, offsets of either sign):
                // scaled at full width and saturated, never trapping; the 33-bit clock wraps them
                // as it wraps any. (An offset, under 2^31 ticks, times 90,000 fits.)
                let dts = Int64(clamping: MP4StreamFacts.scale(s.decodeTime, 90_000, scale)).addingSaturated(Self.start)
                let pts = dts.addingSaturated(Int64(s.compositionOffset) * 90_000 / Int64(max(scale, 1)))
                guard Int(s.size) <= run.data.count - at else { break }
                units.append(Unit(track: t, dts: dts, pts: pts, data: run.data[at..<at + Int(s.size)], sync: s.isSync))
                at += Int(s.size)
            }
        }
        units.sort { $0.dts < $1.dts }
        let pcrTrack = tracks.firstIndex(where: \.isVideo) ?? 0
        for u in units {
            let (streamID, framed): (UInt8, [UInt8]?) = switch tracks[u.track].codec {
            case .h264(let avcC, _, _): (0xE0, Self.annexB(u.data, avcC: avcC, sync: u.sync))
            case .aac(let config, _, _): (0xC0, Self.adts(u.data, config: config))
            // HLS's transport streams carry H.264 and AAC (sink.hls's inputs); other codecs go as they are.
            default: (tracks[u.track].isVideo ? 0xE0 : 0xC0, Array(u.data))
            }
            // An "AAC frame" longer than ADTS can say (8,191 bytes with its header; a real one is
            // under 800 bytes a channel) is not one: left out, as a decoder would drop it.
            guard let payload = framed else { continue }
            var header: [UInt8] = [0, 0, 1, streamID]
            let withDTS = u.dts != u.pts
            let optional = 3 + (withDTS ? 10 : 5)
            let length = payload.count + optional
            header.appendU16(streamID == 0xE0 || length > 0xFFFF ? 0 : UInt16(length))  // video: unbounded
            header += [0x80, withDTS ? 0xC0 : 0x80, UInt8(withDTS ? 10 : 5)]
            header += Self.timestamp(u.pts, marker: withDTS ? 0x3 : 0x2)
            if withDTS { header += Self.timestamp(u.dts, marker: 0x1) }
            let pcr = u.track == pcrTrack ? max(0, u.dts - Self.pcrLead) : nil
            pes(pid: Self.pid(u.track), header + payload, pcr: pcr, randomAccess: u.sync && tracks[u.track].isVideo, into: &out)
        }
        return out
    }

    // MARK: Packets

    private mutating func nextContinuity(_ pid: UInt16) -> UInt8 {
        let c = continuity[pid, default: 0]
        continuity[pid] = (c + 1) & 0x0F
        return c
    }

    /// One packet holding `payload` (at most 184 bytes), stuffed to 188 with an adaptation field.
    private mutating func packet(pid: UInt16, unitStart: Bool, payload: [UInt8], adaptation: [UInt8]? = nil, into out: inout [UInt8]) {
        var fields = adaptation
        let room = 184 - (fields.map { $0.count + 1 } ?? 0)
        if payload.count < room {
            // Stuffing: an adaptation field (made or lengthened) fills the rest.
            let missing = room - payload.count
            if var f = fields {
                f += [UInt8](repeating: 0xFF, count: missing)
                fields = f
            } else {
                fields = missing == 1 ? [] : [0x00] + [UInt8](repeating: 0xFF, count: missing - 2)
            }
        }
        out.append(0x47)
        out.append((unitStart ? 0x40 : 0) | UInt8(pid >> 8))
        out.append(UInt8(pid & 0xFF))
        out.append((fields != nil ? 0x30 : 0x10) | nextContinuity(pid))
        if let f = fields {
            out.append(UInt8(f.count))
            out += f
        }
        out += payload
    }

    /// A PES packet cut into transport packets; the first carries the PCR and the random access
    /// mark when asked.
    private mutating func pes(pid: UInt16, _ bytes: [UInt8], pcr: Int64?, randomAccess: Bool, into out: inout [UInt8]) {
        var first: [UInt8]?
        if pcr != nil || randomAccess {
            var f: [UInt8] = [(randomAccess ? 0x40 : 0) | (pcr != nil ? 0x10 : 0)]
            if let pcr {
                let base = UInt64(pcr) & 0x1_FFFF_FFFF
                f += [UInt8(base >> 25 & 0xFF), UInt8(base >> 17 & 0xFF), UInt8(base >> 9 & 0xFF), UInt8(base >> 1 & 0xFF),
                      UInt8((base & 1) << 7 | 0x7E), 0]
            }
            first = f
        }
        var at = 0
        var start = true
        while at < bytes.count {
            let room = 184 - (start ? first.map { $0.count + 1 } ?? 0 : 0)
            let n = min(room, bytes.count - at)
            packet(pid: pid, unitStart: start, payload: Array(bytes[at..<at + n]), adaptation: start ? first : nil, into: &out)
            at += n
            start = false
        }
    }

    // MARK: Tables

    static let pat: [UInt8] = {
        var b: [UInt8] = []
        b.appendU16(1)  // program 1
        b.appendU16(0xE000 | pmtPID)
        return b
    }()

    var pmt: [UInt8] {
        var b: [UInt8] = []
        let pcr = Self.pid(tracks.firstIndex(where: \.isVideo) ?? 0)
        b.appendU16(0xE000 | pcr)
        b.appendU16(0xF000)  // no program descriptors
        for (t, track) in tracks.enumerated() {
            b.append(track.isVideo ? 0x1B : 0x0F)  // H.264; AAC in ADTS
            b.appendU16(0xE000 | Self.pid(t))
            b.appendU16(0xF000)
        }
        return b
    }

    /// A PSI section: table id, its id (program number or stream id), version 0, current, then
    /// `body` and the CRC.
    static func section(table: UInt8, id: UInt16, body: [UInt8]) -> [UInt8] {
        var s: [UInt8] = [table]
        s.appendU16(0xB000 | UInt16(5 + body.count + 4))
        s.appendU16(id)
        s += [0xC1, 0, 0]
        s += body
        s.appendU32(crc32(s))
        return s
    }

    /// CRC-32/MPEG-2.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? crc << 1 ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    static func timestamp(_ t: Int64, marker: UInt8) -> [UInt8] {
        let v = UInt64(bitPattern: t) & 0x1_FFFF_FFFF
        return [marker << 4 | UInt8(v >> 29 & 0x0E) | 1, UInt8(v >> 22 & 0xFF), UInt8(v >> 14 & 0xFE) | 1,
                UInt8(v >> 7 & 0xFF), UInt8(v << 1 & 0xFE) | 1]
    }

    // MARK: Codecs

    /// An AVC sample (length-prefixed NAL units, as MP4 stores them) as Annex B: an access unit
    /// delimiter first, and before a key frame the configuration's SPS and PPS.
    static func annexB(_ sample: ArraySlice<UInt8>, avcC: [UInt8], sync: Bool) -> [UInt8] {
        let startCode: [UInt8] = [0, 0, 0, 1]
        var out: [UInt8] = startCode + [0x09, 0xF0]
        if sync { for unit in parameterSets(avcC) { out += startCode + unit } }
        let lengthSize = avcC.count > 4 ? Int(avcC[4] & 3) + 1 : 4
        var at = sample.startIndex
        while at + lengthSize <= sample.endIndex {
            var n = 0
            for k in 0..<lengthSize { n = n << 8 | Int(sample[at + k]) }
            at += lengthSize
            guard n > 0, at + n <= sample.endIndex else { break }
            let type = sample[at] & 0x1F
            if type != 9 { out += startCode + sample[at..<at + n] }  // its own delimiter is dropped
            at += n
        }
        return out
    }

    /// The SPS and PPS an AVCDecoderConfigurationRecord holds.
    static func parameterSets(_ avcC: [UInt8]) -> [ArraySlice<UInt8>] {
        var units: [ArraySlice<UInt8>] = []
        guard avcC.count > 6 else { return units }
        var at = 5
        for kind in 0..<2 {
            guard at < avcC.count else { break }
            let count = Int(avcC[at]) & (kind == 0 ? 0x1F : 0xFF)
            at += 1
            for _ in 0..<count {
                guard at + 2 <= avcC.count else { return units }
                let n = Int(avcC[at]) << 8 | Int(avcC[at + 1])
                at += 2
                guard at + n <= avcC.count else { return units }
                units.append(avcC[at..<at + n])
                at += n
            }
        }
        return units
    }

    /// A raw AAC frame in an ADTS header made from its AudioSpecificConfig; nil for a frame
    /// longer than the header's 13-bit length holds.
    static func adts(_ frame: ArraySlice<UInt8>, config: [UInt8]) -> [UInt8]? {
        let objectType = config.count > 0 ? Int(config[0] >> 3) : 2
        // ADTS's profile is 2 bits: Main, LC, SSR, LTP. Any other object type (HE-AAC's SBR and
        // PS, signalled in the config) is carried as its LC core.
        let profile = (1...4).contains(objectType) ? objectType - 1 : 1
        let rateIndex = config.count > 1 ? Int(config[0] & 7) << 1 | Int(config[1] >> 7) : 4
        let channels = config.count > 1 ? Int(config[1] >> 3 & 0xF) : 2
        let length = frame.count + 7
        guard length <= 0x1FFF else { return nil }
        let header: [UInt8] = [
            0xFF, 0xF1,  // sync, MPEG-4, layer 0, no CRC
            UInt8(profile << 6 | rateIndex << 2 | (channels >> 2 & 1)),
            UInt8((channels & 3) << 6 | length >> 11),
            UInt8(length >> 3 & 0xFF),
            UInt8((length & 7) << 5 | 0x1F),
            0xFC,
        ]
        return header + frame
    }
}
