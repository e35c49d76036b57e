/// Vorbis comments (xiph.org's Vorbis I specification, section 5), the tags of FLAC and Ogg
/// files: little-endian, a vendor string, a count, then that many `KEY=value` strings (UTF-8,
/// keys case-insensitive, read upper-cased), each after its length.
package enum VorbisComment {
    /// Reads a comment list into `metadata`: the comments before any damage. The vendor string
    /// is the encoder unless an `ENCODER` comment says otherwise.
    package static func read(_ bytes: ArraySlice<UInt8>, into metadata: inout MediaMetadata) {
        var r = ByteReader(bytes)
        guard let vendorLength = try? r.u32LE(), let vendor = try? r.bytes(Int(vendorLength)),
              let count = try? r.u32LE() else { return }
        var chapters = Chapters()
        // Each comment takes at least its 4-byte length: a count beyond that is damage, and
        // the loop stops at the first comment that is not all there.
        for _ in 0..<min(Int(count), r.remaining / 4) {
            guard let length = try? r.u32LE(), let comment = try? r.bytes(Int(length)) else { break }
            guard let equals = comment.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = TagText.utf8(comment[comment.startIndex..<equals]).uppercased()
            let value = TagText.utf8(comment[(equals + 1)...])
            metadata.add(key, value)
            chapters.add(key, value)
        }
        if metadata.encoder == nil, !vendor.isEmpty { metadata.encoder = TagText.utf8(vendor) }
        if metadata.chapters.isEmpty { metadata.chapters = chapters.list }
    }

    /// Chapters as comments (the Vorbis chapter extension, which ffmpeg, VLC and foobar2000
    /// read and write): `CHAPTER001=00:01:02.500` starts chapter 1, `CHAPTER001NAME=Intro`
    /// titles it; chapters in the order of their numbers, those without a readable time left
    /// out.
    struct Chapters {
        private var starts: [Int: Double] = [:]
        private var names: [Int: String] = [:]

        mutating func add(_ key: String, _ value: String) {
            guard key.hasPrefix("CHAPTER") else { return }
            let rest = key.dropFirst("CHAPTER".count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6, let number = Int(digits) else { return }
            switch rest.dropFirst(digits.count) {
            case "": if starts[number] == nil, let t = Self.seconds(value) { starts[number] = t }
            case "NAME": if names[number] == nil { names[number] = value }
            default: break
            }
        }

        var list: [MediaMetadata.Chapter] {
            starts.keys.sorted().prefix(MP4Movie.mostChapters).map { MediaMetadata.Chapter(start: starts[$0]!, title: names[$0] ?? "") }
        }

        /// `HH:MM:SS.sss` (hours and a fraction of any length; `MM:SS.sss` too) in seconds.
        static func seconds(_ text: String) -> Double? {
            let parts = text.trimmingSpaces.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count) else { return nil }
            var total = 0.0
            for (i, part) in parts.enumerated() {
                let last = i == parts.count - 1
                guard !part.isEmpty, part.allSatisfy({ ($0.isASCII && $0.isNumber) || (last && $0 == ".") }),
                      let value = Double(part), value.isFinite, i == 0 || value < 60 else { return nil }
                total = total * 60 + value
            }
            return total
        }
    }
}

extension FLAC {
    /// The metadata blocks read: VORBIS_COMMENT.
    static let vorbisComment: UInt8 = 4
    /// PICTURE.
    static let picture: UInt8 = 6

    /// Reads a FLAC file's VORBIS_COMMENT and PICTURE blocks (after an ID3 tag, when the file
    /// has one) into `metadata`; blocks that run past the file's end are not read. Throws only
    /// when the file cannot be read.
    package static func readMetadata(_ source: some ByteSource, into metadata: inout MediaMetadata) throws(ContainerError) {
        var offset = MPEGAudio.id3v2Length(source) ?? 0
        guard try source.read(at: offset, count: 4).elementsEqual(marker) else { return }
        offset += 4
        // A file has a handful of blocks; the limit only bounds a walk of damaged bytes.
        for _ in 0..<1024 {
            guard let header = BlockHeader(try source.read(at: offset, count: 4)) else { return }
            let end = offset + 4 + header.length
            guard end <= source.count else { return }
            if header.type == vorbisComment || header.type == picture {
                let body = try source.read(at: offset + 4, count: Int(header.length))
                if header.type == vorbisComment {
                    VorbisComment.read(body[...], into: &metadata)
                } else {
                    readPicture(body[...], into: &metadata)
                }
            }
            if header.isLast { return }
            offset = end
        }
    }

    /// A PICTURE block's body (big-endian): type, MIME type, description, width, height, depth,
    /// colours, then the picture's length and bytes.
    static func readPicture(_ body: ArraySlice<UInt8>, into metadata: inout MediaMetadata) {
        var r = ByteReader(body)
        guard let type = try? r.u32(), let mimeLength = try? r.u32(), let mime = try? r.bytes(Int(mimeLength)),
              let descriptionLength = try? r.u32(), (try? r.skip(Int(descriptionLength))) != nil,
              (try? r.skip(16)) != nil, let length = try? r.u32(), let data = try? r.bytes(Int(length)) else { return }
        let mimeType = TagText.latin1(mime)
        metadata.addPicture(data, mimeType: mimeType.contains("/") ? mimeType : nil, frontCover: type == 3)
    }
}

extension Ogg {
    /// Reads the comment header of an Ogg file's first stream (Vorbis: its second packet,
    /// `\u{3}vorbis`; Opus: `OpusTags`) into `metadata`. Pages are walked from the start while
    /// they are whole and their checksums match, and only until that packet is complete. Throws
    /// only when the file cannot be read.
    package static func readMetadata(_ source: some ByteSource, into metadata: inout MediaMetadata) throws(ContainerError) {
        var offset: UInt64 = 0
        var serial: [UInt8]?
        var packets: [[UInt8]] = []
        var packet: [UInt8] = []
        // A comment header spans a few pages, a large picture some hundreds; the limit only
        // bounds a walk of damaged bytes.
        pages: for _ in 0..<4096 {
            let header = try source.read(at: offset, count: headerLength)
            guard isPageHeader(header) else { return }
            let table = try source.read(at: offset + UInt64(headerLength), count: Int(header[26]))
            guard table.count == Int(header[26]) else { return }
            let length = pageLength(segmentTable: table)
            let page = try source.read(at: offset, count: Int(length))
            guard page.count == Int(length), checksumMatches(page: page) else { return }
            offset += length
            // Another stream's page (a file with several) is passed over.
            if serial == nil { serial = Array(header[14..<18]) }
            guard header[14..<18].elementsEqual(serial!) else { continue }
            var at = headerLength + table.count
            for lacing in table {
                packet += page[at..<(at + Int(lacing))]
                at += Int(lacing)
                if lacing < 255 {  // the packet ends here
                    packets.append(packet)
                    packet = []
                    if packets.count == 2 { break pages }
                }
            }
        }
        guard packets.count == 2 else { return }
        let (identification, comments) = (packets[0], packets[1][...])
        if identification.starts(with: [1] + Array("vorbis".utf8)), comments.starts(with: [3] + Array("vorbis".utf8)) {
            VorbisComment.read(comments.dropFirst(7), into: &metadata)
        } else if identification.starts(with: Array("OpusHead".utf8)), comments.starts(with: Array("OpusTags".utf8)) {
            VorbisComment.read(comments.dropFirst(8), into: &metadata)
        }
    }
}
