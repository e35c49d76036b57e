/// What a track's first sample description (`stsd` entry) says about its samples' coding: the
/// codec (`avc1`, `mp4a`…), a picture's size or a sound's rate and channels, and the codec's
/// configuration box (`avcC`, `hvcC`, `esds`, `dOps`…) as bytes. Two tracks whose descriptions
/// agree on all of these hold samples one decoder configured once decodes, so their compressed
/// samples can follow one another in one track (a passthrough join); other boxes of the entry
/// (a bit rate's `btrt`, a pixel aspect's `pasp`, a colour's `colr`) do not change decoding and
/// are not compared.
package struct SampleDescription: Sendable, Equatable {
    package var codec: FourCC
    /// A video entry's width and height; nil for sound.
    package var size: (width: Int, height: Int)?
    /// A sound entry's channels and rate (whole hertz); nil for video.
    package var sound: (channels: Int, rate: Int)?
    /// The codec configuration box: its type and body; nil when the entry has none.
    package var configuration: (type: FourCC, body: [UInt8])?
    /// A video entry's Dolby Vision configuration: pieces with and without one (or with others)
    /// are different streams, since the RPUs in the samples follow it.
    package var dolbyVision: DolbyVisionConfiguration?

    static let configurations: Set<FourCC> = ["avcC", "hvcC", "av1C", "vpcC", "esds", "dOps", "dfLa", "alac", "dac3", "dec3"]

    /// The track's first sample description; nil when it has none or it is too short to be one.
    package init?(_ track: MP4Track) {
        guard let entry = track.box.find(["mdia", "minf", "stbl", "stsd"])?.children.first else { return nil }
        let body = entry.body
        codec = entry.type
        let children: Int
        switch track.handler {
        case "vide":
            // SampleEntry (8 bytes: reserved, data reference), then 16 of pre-defined and
            // reserved, width and height (16 bits each), and 50 more before the boxes.
            guard body.count >= 78 else { return nil }
            size = (Int(body[24]) << 8 | Int(body[25]), Int(body[26]) << 8 | Int(body[27]))
            children = 78
            dolbyVision = DolbyVisionConfiguration.find(in: MP4StoredTrack.visualEntryBoxes(entry))
        case "soun":
            // SampleEntry, then version (QuickTime: 1 and 2 add 16 and 36 bytes), revision,
            // vendor, channels, sample size, compression, packet size, rate (16.16).
            guard body.count >= 28 else { return nil }
            let version = Int(body[8]) << 8 | Int(body[9])
            sound = (Int(body[16]) << 8 | Int(body[17]), Int(body[24]) << 8 | Int(body[25]))
            children = 28 + (version == 1 ? 16 : version == 2 ? 36 : 0)
        default:
            children = body.count
        }
        configuration = Self.configuration(in: body.dropFirst(children))
    }

    /// The first configuration box among `bytes`' boxes, or inside a QuickTime `wave` among them.
    private static func configuration(in bytes: ArraySlice<UInt8>) -> (type: FourCC, body: [UInt8])? {
        guard !bytes.isEmpty, let boxes = try? MP4Box.parseSequence(bytes, in: nil, depth: MP4Box.maximumDepth).0 else { return nil }
        if let box = boxes.first(where: { configurations.contains($0.type) }) {
            // An esds also states bit rates and a buffer size, which differ between files an
            // encoder made with the same settings: only what configures the decoder is kept.
            if box.type == "esds", let decoding = decoderConfiguration(esds: box.body) { return (box.type, decoding) }
            return (box.type, box.body)
        }
        if let wave = boxes.first(where: { $0.type == "wave" }) { return configuration(in: wave.body[...]) }
        return nil
    }

    /// An `esds` box's object type followed by its decoder-specific information (AAC's
    /// AudioSpecificConfig); nil when the descriptors cannot be read.
    static func decoderConfiguration(esds body: [UInt8]) -> [UInt8]? {
        var i = 4  // version and flags
        var objectType: UInt8?
        while i < body.count {
            let tag = body[i]
            i += 1
            var length = 0
            for _ in 0..<4 {
                guard i < body.count else { return nil }
                let b = body[i]
                i += 1
                length = length << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { break }
            }
            switch tag {
            case 3:  // ES descriptor: its ID, flags, the optional fields they announce, then nested
                guard i + 3 <= body.count else { return nil }
                let flags = body[i + 2]
                i += 3
                if flags & 0x80 != 0 { i += 2 }
                if flags & 0x40 != 0 { guard i < body.count else { return nil }; i += 1 + Int(body[i]) }
                if flags & 0x20 != 0 { i += 2 }
            case 4:  // decoder configuration: object type, stream type, buffer size, bit rates, then nested
                guard i + 13 <= body.count else { return nil }
                objectType = body[i]
                i += 13
            case 5:  // decoder-specific information
                guard let objectType, i + length <= body.count else { return nil }
                return [objectType] + body[i..<(i + length)]
            default:
                i += length
            }
        }
        return objectType.map { [$0] }
    }

    /// What differs from `other`, in words ("its codec is hev1, not avc1"); nil when nothing
    /// that decoding depends on does.
    package func difference(from other: SampleDescription) -> String? {
        if codec != other.codec { return "its codec is \(codec), not \(other.codec)" }
        if let a = size, let b = other.size, a != b { return "its pictures are \(a.width)x\(a.height), not \(b.width)x\(b.height)" }
        if dolbyVision != other.dolbyVision {
            return "its Dolby Vision configuration is \(dolbyVision?.description ?? "none"), not \(other.dolbyVision?.description ?? "none")"
        }
        if let a = sound, let b = other.sound {
            if a.rate != b.rate { return "its sample rate is \(a.rate) Hz, not \(b.rate) Hz" }
            if a.channels != b.channels { return "it has \(a.channels) channel\(a.channels == 1 ? "" : "s"), not \(b.channels)" }
        }
        switch (configuration, other.configuration) {
        case (nil, nil): return nil
        case (let a?, let b?) where a.type == b.type && a.body == b.body: return nil
        case (let a?, let b?) where a.type == "esds" && b.type == "esds":
            // The AudioSpecificConfig (after the object type): 5 bits of object type, 4 of the
            // rate's index, 4 of the channel configuration; MP4's entry often says 2 channels
            // for mono, so this is where a channel count is told.
            let aac = { (c: [UInt8]) -> (profile: Int, channels: Int)? in
                guard c.count >= 3, c[1] >> 3 != 31, (c[1] & 0x07) << 1 | c[2] >> 7 != 15 else { return nil }
                return (Int(c[1] >> 3), Int((c[2] >> 3) & 0x0F))
            }
            if let x = aac(a.body), let y = aac(b.body) {
                if x.channels != y.channels { return "its AAC channel configuration is \(x.channels), not \(y.channels)" }
                if x.profile != y.profile { return "its AAC object type is \(x.profile), not \(y.profile)" }
            }
            return "its AAC configuration (esds) differs: another profile, rate or channel layout"
        case (let a?, let b?) where a.type == b.type:
            return "its codec configuration (\(a.type)) differs (\(a.body.count) bytes against \(b.body.count)): another profile, level or parameter set"
        default:
            return "its codec configuration box is \(configuration.map { "\($0.type)" } ?? "missing"), not \(other.configuration.map { "\($0.type)" } ?? "missing")"
        }
    }

    package static func == (a: Self, b: Self) -> Bool { a.difference(from: b) == nil }
}
