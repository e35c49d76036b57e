/// A video stream's colour as its MP4 sample entry states it, by ITU-T H.273's code points: the
/// entry's `colr` box (`nclx`, or QuickTime's `nclc`) first, else the H.264 sequence parameter
/// set's VUI in `avcC`; and the SPS's bit depth and chroma format. What neither states is nil
/// (code point 2, "unspecified", is none). Read with every length checked: a file's bytes may
/// claim anything, and a claim past the end reads as not stated.
package struct VideoColourFacts: Sendable, Equatable {
    package var primaries: Int?
    package var transfer: Int?
    package var matrix: Int?
    package var fullRange: Bool?
    /// Bits a luma sample (8 when the SPS's profile has no such field).
    package var bitDepth: Int?
    /// H.264's chroma_format_idc: 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    package var chromaFormat: Int?

    /// Whether a colour (primaries, transfer or matrix) is stated.
    package var statesColour: Bool { primaries != nil || transfer != nil || matrix != nil }

    /// The colour of an H.264 sample entry: `entryBody` the entry's bytes after its header
    /// (``SampleDescription``'s), `avcC` its configuration.
    package init(h264EntryBody entryBody: [UInt8], avcC: [UInt8]) {
        if let sps = Self.firstSPS(avcC: avcC) { readSPS(sps) }
        if entryBody.count > 78, let colr = Self.colr(in: entryBody[78...]) {
            primaries = colr.primaries
            transfer = colr.transfer
            matrix = colr.matrix
            if let full = colr.fullRange { fullRange = full }
        }
    }

    private static func stated(_ code: Int) -> Int? { code == 2 ? nil : code }

    /// An `nclx`/`nclc` `colr` box among `bytes`' boxes.
    private static func colr(in bytes: ArraySlice<UInt8>) -> (primaries: Int?, transfer: Int?, matrix: Int?, fullRange: Bool?)? {
        guard let boxes = try? MP4Box.parseSequence(bytes, in: nil, depth: MP4Box.maximumDepth).0,
              let box = boxes.first(where: { $0.type == "colr" }), box.body.count >= 10 else { return nil }
        let b = box.body, kind = String(decoding: b[0..<4], as: UTF8.self)
        guard kind == "nclx" || kind == "nclc" else { return nil }
        func u16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        let full: Bool? = kind == "nclx" && b.count >= 11 ? b[10] & 0x80 != 0 : nil
        return (stated(u16(4)), stated(u16(6)), stated(u16(8)), full)
    }

    /// The first SPS of an `avcC`, its emulation-prevention bytes removed.
    private static func firstSPS(avcC: [UInt8]) -> [UInt8]? {
        guard avcC.count >= 8, avcC[0] == 1, avcC[5] & 0x1F >= 1 else { return nil }
        let length = Int(avcC[6]) << 8 | Int(avcC[7])
        guard length >= 4, 8 + length <= avcC.count, avcC[8] & 0x1F == 7 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(length)
        var zeros = 0
        for byte in avcC[9..<(8 + length)] {
            if zeros >= 2 && byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }

    /// Reads the SPS (H.264 7.3.2.1.1) as far as the VUI's colour description (E.1.1).
    private mutating func readSPS(_ sps: [UInt8]) {
        var r = BitReader(sps)
        guard let profile = r.read(8), r.read(16) != nil, r.ue() != nil else { return }
        var chroma = 1, depth = 8
        if [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135].contains(profile) {
            guard let c = r.ue(), c <= 3 else { return }
            chroma = c
            if c == 3 { guard r.read(1) != nil else { return } }
            guard let luma = r.ue(), luma <= 6, r.ue() != nil, r.read(1) != nil, let scaling = r.read(1) else { return }
            depth = 8 + luma
            if scaling == 1 {
                for i in 0..<(c == 3 ? 12 : 8) {
                    guard let present = r.read(1) else { return }
                    if present == 1 { guard r.skipScalingList(i < 6 ? 16 : 64) else { return } }
                }
            }
        }
        chromaFormat = chroma
        bitDepth = depth
        guard r.ue() != nil, let pocType = r.ue() else { return }
        if pocType == 0 {
            guard r.ue() != nil else { return }
        } else if pocType == 1 {
            guard r.read(1) != nil, r.se() != nil, r.se() != nil, let cycle = r.ue(), cycle <= 255 else { return }
            for _ in 0..<cycle { guard r.se() != nil else { return } }
        }
        guard r.ue() != nil, r.read(1) != nil, r.ue() != nil, r.ue() != nil, let frameOnly = r.read(1) else { return }
        if frameOnly == 0 { guard r.read(1) != nil else { return } }
        guard r.read(1) != nil, let cropping = r.read(1) else { return }
        if cropping == 1 { for _ in 0..<4 { guard r.ue() != nil else { return } } }
        guard r.read(1) == 1 else { return }  // vui_parameters_present_flag
        guard let aspect = r.read(1) else { return }
        if aspect == 1 {
            guard let idc = r.read(8) else { return }
            if idc == 255 { guard r.read(32) != nil else { return } }
        }
        guard let overscan = r.read(1) else { return }
        if overscan == 1 { guard r.read(1) != nil else { return } }
        guard r.read(1) == 1, r.read(3) != nil, let full = r.read(1), let described = r.read(1) else { return }
        fullRange = full == 1
        guard described == 1, let p = r.read(8), let t = r.read(8), let m = r.read(8) else { return }
        (primaries, transfer, matrix) = (Self.stated(p), Self.stated(t), Self.stated(m))
    }
}

private extension BitReader {
    /// scaling_list() (7.3.2.1.1.1), read past.
    mutating func skipScalingList(_ size: Int) -> Bool {
        var last = 8, next = 8
        for _ in 0..<size {
            if next != 0 {
                guard let delta = se() else { return false }
                next = (last + delta + 256) % 256
            }
            last = next == 0 ? last : next
        }
        return true
    }
}
