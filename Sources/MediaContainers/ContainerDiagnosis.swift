import Glibc

/// What a media file's own structure says about why it could not be decoded, in words a user
/// acts on: "ends at byte 8048 before its index: the file was not finished" rather than the
/// demuxer's "this file contains no playable streams".
///
/// A walk of headers only, never of the media: the top-level boxes of an ISO-BMFF file (MP4,
/// M4A, MOV), the pages of an Ogg file (their checksums too), a FLAC file's header and the size
/// of its first frame, the frames of an MP3 file. A run asks for it once a decode has failed
/// (and, when one succeeded, walks only an MP4's boxes, a few reads). It names only what it can
/// see: a structure it finds whole, or a format it does not know, gives nil, and the decoder's
/// own words stand.
package struct ContainerDiagnosis: Sendable, Equatable {
    /// What is wrong, as the end of a sentence whose subject is the file ("ends at byte …").
    package let problem: String
    /// The file ends inside one of its parts or before its index: it was cut short or never
    /// finished. False for damage within it, which a decoder may step over.
    package var cutShort = false

    /// "ends at byte `offset``rest`": the file stops there, short of what its structure says.
    package static func ends(at offset: UInt64, _ rest: String) -> ContainerDiagnosis {
        ContainerDiagnosis(problem: "ends at byte \(offset)\(rest)", cutShort: true)
    }

    /// The sentence about the file named `name` (quoted path, as messages show inputs).
    package func sentence(about name: String) -> String { "\(name) \(problem)" }

    /// The diagnosis of the file at `path`, or nil when its structure shows nothing wrong, it is
    /// in a format this does not walk, or it cannot be opened. `indexOnly` walks only the boxes of
    /// an MP4 (a few reads, cheap enough for a run that succeeded: a file cut short behind its
    /// index decodes without error, and only this says that its end is missing); otherwise Ogg
    /// pages are checked too, which reads the whole file.
    package static func diagnose(path: String, indexOnly: Bool = false) -> ContainerDiagnosis? {
        guard let file = HeaderReader(path: path) else { return nil }
        defer { file.close() }
        if file.size == 0 { return indexOnly ? nil : ContainerDiagnosis(problem: "is empty (0 bytes)") }
        for walk in indexOnly ? [isoBoxes] : [isoBoxes, oggPages, flacHeader, mpegAudioFrames] {
            if let found = walk(file) { return found.problem.isEmpty ? nil : found }
        }
        return nil
    }

    /// Each walk returns nil when the file is not in its format, a diagnosis with an empty
    /// problem when it is and nothing is wrong, or what is wrong.
    private static let intact = ContainerDiagnosis(problem: "")

    // MARK: ISO-BMFF (MP4, M4A, MOV)

    /// Types that may open an ISO-BMFF or QuickTime file.
    private static let openingBoxes: Set<String> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid", "styp", "sidx", "moof", "pdin", "meta", "junk"]

    /// Top-level boxes, each a 32-bit size (1: a 64-bit size follows; 0: to the end of the file)
    /// and a type. The index is `moov`; a recording killed before it was written has none, and
    /// its `mdat` often claims more bytes than the file holds.
    package static func isoBoxes(_ file: HeaderReader) -> ContainerDiagnosis? {
        var offset: UInt64 = 0
        var sawIndex = false
        var boxes = 0
        while offset < file.size {
            let remaining = file.size - offset
            guard remaining >= 8, let header = file.read(at: offset, count: 16), header.count >= 8 else {
                return boxes == 0 ? nil : truncated(at: offset, sawIndex: sawIndex, file: file)
            }
            let type = header[4..<8]
            guard type.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                return boxes == 0 ? nil : truncated(at: offset, sawIndex: sawIndex, file: file)
            }
            let name = String(decoding: type, as: UTF8.self)
            if boxes == 0, !openingBoxes.contains(name) { return nil }
            var size = UInt64(header[0]) << 24 | UInt64(header[1]) << 16 | UInt64(header[2]) << 8 | UInt64(header[3])
            var headerSize: UInt64 = 8
            if size == 1 {
                guard header.count >= 16 else { return truncated(at: offset, sawIndex: sawIndex, file: file) }
                size = header[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
                headerSize = 16
            } else if size == 0 {
                size = remaining  // to the end of the file
            }
            guard size >= headerSize else {
                return boxes == 0 ? nil : truncated(at: offset, sawIndex: sawIndex, file: file)
            }
            boxes += 1
            if size > remaining {
                let end = offset + size
                if name == "moov" {
                    return .ends(at: file.size, ", inside its index (which runs to byte \(end)): the file was cut short")
                }
                if !sawIndex { return .ends(at: file.size, " before its index: the file was not finished") }
                let what = name == "mdat" ? "its media data" : "its \"\(name)\" box"
                return .ends(at: file.size, ", inside \(what) (which runs to byte \(end)): the file was cut short")
            }
            if name == "moov" { sawIndex = true }
            offset += size
        }
        return sawIndex ? intact : .ends(at: file.size, " before its index: the file was not finished")
    }

    /// The box structure breaks at `offset`: the file ends inside a box header, or no box
    /// starts there. What follows is said as it is: a file that goes on past the break is not
    /// one that ends there (random bytes after a whole header once read "ends at byte 24"
    /// for a file of 100 KB).
    private static func truncated(at offset: UInt64, sawIndex: Bool, file: HeaderReader) -> ContainerDiagnosis {
        let endsInHeader = file.size - offset < 16
        if endsInHeader {
            if !sawIndex { return .ends(at: file.size, " before its index: the file was not finished") }
            return .ends(at: file.size, ", inside a box header at byte \(offset): the file was cut short")
        }
        let rest = file.size - offset
        if !sawIndex {
            return ContainerDiagnosis(problem: "is damaged at byte \(offset): no MP4 box starts there, and no index came before it (\(rest) more bytes follow, which are not MP4 boxes)")
        }
        return ContainerDiagnosis(problem: "is damaged at byte \(offset): no box starts there")
    }

    // MARK: Ogg (Vorbis, Opus, FLAC in Ogg)

    /// Pages, each "OggS", a 27-byte header, a segment table and the segments; every page carries
    /// a CRC-32 of itself, so a changed byte anywhere is found.
    package static func oggPages(_ file: HeaderReader) -> ContainerDiagnosis? {
        guard file.read(at: 0, count: 4).map({ $0.elementsEqual("OggS".utf8) }) == true else { return nil }
        var offset: UInt64 = 0
        var page = 0
        while offset < file.size {
            page += 1
            guard let header = file.read(at: offset, count: 27), header.count == 27 else {
                return .ends(at: file.size, ", inside the header of Ogg page \(page) at byte \(offset): the file was cut short")
            }
            guard header[0..<4].elementsEqual("OggS".utf8), header[4] == 0 else {
                return ContainerDiagnosis(problem: "is damaged at byte \(offset): Ogg page \(page) should start there and does not")
            }
            let segments = Int(header[26])
            guard let table = file.read(at: offset + 27, count: segments), table.count == segments else {
                return .ends(at: file.size, ", inside the header of Ogg page \(page) at byte \(offset): the file was cut short")
            }
            let size = UInt64(27 + segments + table.reduce(0) { $0 + Int($1) })
            guard offset + size <= file.size else {
                return .ends(at: file.size, ", inside Ogg page \(page) (which runs to byte \(offset + size)): the file was cut short")
            }
            guard var bytes = file.read(at: offset, count: Int(size)), bytes.count == Int(size) else { return nil }
            let stored = UInt32(bytes[22]) | UInt32(bytes[23]) << 8 | UInt32(bytes[24]) << 16 | UInt32(bytes[25]) << 24
            bytes[22] = 0; bytes[23] = 0; bytes[24] = 0; bytes[25] = 0
            guard oggCRC(bytes) == stored else {
                return ContainerDiagnosis(problem: "is damaged: Ogg page \(page), bytes \(offset) to \(offset + size), fails its checksum")
            }
            offset += size
        }
        return intact
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, starting from 0.
    private static let oggTable: [UInt32] = (0..<256).map { i -> UInt32 in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    package static func oggCRC(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for b in bytes { crc = (crc << 8) ^ oggTable[Int((crc >> 24) ^ UInt32(b))] }
        return crc
    }

    // MARK: FLAC

    /// "fLaC", metadata blocks (the first is STREAMINFO, which gives the smallest frame's size),
    /// then frames, which carry no size of their own.
    package static func flacHeader(_ file: HeaderReader) -> ContainerDiagnosis? {
        let start = id3v2Size(file) ?? 0
        guard start < file.size else { return nil }
        guard file.read(at: start, count: 4).map({ $0.elementsEqual("fLaC".utf8) }) == true else { return nil }
        var offset = start + 4
        var smallestFrame: UInt64 = 0
        var first = true
        while true {
            guard let header = file.read(at: offset, count: 4), header.count == 4 else {
                return .ends(at: file.size, ", inside its header: the file was cut short")
            }
            let length = UInt64(header[1]) << 16 | UInt64(header[2]) << 8 | UInt64(header[3])
            let end = offset + 4 + length
            guard end <= file.size else {
                return .ends(at: file.size, ", inside its header (which runs to byte \(end) at least): the file was cut short")
            }
            if first, header[0] & 0x7F == 0, length >= 10, let info = file.read(at: offset + 4, count: 10), info.count == 10 {
                smallestFrame = UInt64(info[4]) << 16 | UInt64(info[5]) << 8 | UInt64(info[6])
            }
            first = false
            offset = end
            if header[0] & 0x80 != 0 { break }  // the last metadata block
        }
        if offset == file.size {
            return .ends(at: file.size, ", right after its header: it holds no audio; the file was cut short")
        }
        if smallestFrame > 0, file.size - offset < smallestFrame {
            return .ends(at: file.size, ", inside its first audio frame (which starts at byte \(offset) and, as its header says, takes at least \(smallestFrame) bytes): the file was cut short")
        }
        return intact
    }

    // MARK: MP3 (MPEG audio)

    /// The length of an ID3v2 tag at the start (10-byte header, syncsafe size, optional footer).
    private static func id3v2Size(_ file: HeaderReader) -> UInt64? {
        guard let h = file.read(at: 0, count: 10), h.count == 10, h[0..<3].elementsEqual("ID3".utf8) else { return nil }
        let size = UInt64(h[6] & 0x7F) << 21 | UInt64(h[7] & 0x7F) << 14 | UInt64(h[8] & 0x7F) << 7 | UInt64(h[9] & 0x7F)
        return 10 + size + (h[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Frames of MPEG-1, 2 or 2.5 audio, layers I to III, each with a 4-byte header that gives
    /// its length. Claimed only when a frame header is found where the file (or its tag) starts.
    package static func mpegAudioFrames(_ file: HeaderReader) -> ContainerDiagnosis? {
        let tag = id3v2Size(file)
        if let tag, tag > file.size {
            return .ends(at: file.size, ", inside its ID3 tag (which runs to byte \(tag)): the file was cut short")
        }
        var offset = tag ?? 0
        var frames = 0
        while offset < file.size {
            guard let h = file.read(at: offset, count: 4), h.count == 4 else {
                return frames == 0 ? nil : cutFrame(after: frames, file: file)
            }
            guard let length = mpegFrameLength(h) else {
                // Not a frame: not MP3 at all, or damage (a decoder resynchronises past it).
                return frames == 0 ? nil : intact
            }
            if offset + length > file.size {
                let frame = frames == 0 ? "its first MP3 frame" : "MP3 frame \(frames + 1)"
                return .ends(at: file.size, ", inside \(frame) (which runs to byte \(offset + length)): the file was cut short")
            }
            frames += 1
            offset += length
        }
        return frames == 0 ? nil : intact
    }

    private static func cutFrame(after frames: Int, file: HeaderReader) -> ContainerDiagnosis {
        .ends(at: file.size, ", inside the header of MP3 frame \(frames + 1): the file was cut short")
    }

    /// The byte length of the MPEG audio frame this header starts, or nil when it is not one.
    package static func mpegFrameLength(_ h: [UInt8]) -> UInt64? {
        guard h[0] == 0xFF, h[1] & 0xE0 == 0xE0 else { return nil }
        let version = (h[1] >> 3) & 3   // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1
        let layer = (h[1] >> 1) & 3     // 1: III, 2: II, 3: I
        let bitrateIndex = Int(h[2] >> 4), rateIndex = Int((h[2] >> 2) & 3), padding = UInt64((h[2] >> 1) & 1)
        guard version != 1, layer != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        let mpeg1 = version == 3
        let bitrates: [UInt64] = switch (mpeg1, layer) {
        case (true, 3): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (true, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (true, _): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (false, 3): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        case (false, _): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
        let base: [UInt64] = [44_100, 48_000, 32_000]
        let rate = base[rateIndex] >> (version == 3 ? 0 : version == 2 ? 1 : 2)
        let bitrate = bitrates[bitrateIndex] * 1000
        if layer == 3 { return (12 * bitrate / rate + padding) * 4 }
        let perFrame: UInt64 = layer == 1 && !mpeg1 ? 72 : 144
        return perFrame * bitrate / rate + padding
    }
}

/// Reads parts of a file by offset (pread), for the walks above.
package struct HeaderReader {
    package let fd: Int32
    package let size: UInt64

    package init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(fd)
            return nil
        }
        self.fd = fd
        // Files whose size the kernel does not know until they are read (those under /proc
        // and /sys say 0) are measured by reading them: their size is what a read gives.
        size = st.st_size > 0 ? UInt64(st.st_size) : Self.measure(fd)
    }

    /// The bytes a read of `fd` gives, up to 64 MiB (a file whose size is unknown is small).
    private static func measure(_ fd: Int32) -> UInt64 {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var total: UInt64 = 0
        while total < 64 << 20 {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(total)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            total += UInt64(n)
        }
        return total
    }

    package func close() { Glibc.close(fd) }

    /// Up to `count` bytes at `offset` (fewer at the end of the file); nil on a read error.
    package func read(at offset: UInt64, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            if n < 0 { if errno == EINTR { continue }; return nil }
            if n == 0 { break }
            done += n
        }
        return Array(bytes.prefix(done))
    }
}
