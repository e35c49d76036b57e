import Foundation

/// What a fragmented MP4 being written holds so far, read from its boxes (ISO/IEC 14496-12):
/// how many video samples are in fragments that are complete on disk (a `moof` and the `mdat`
/// after it, both whole). A test waits on this instead of on the clock.
struct MP4Fragments {
    /// Complete fragments (moof + mdat).
    var fragments = 0
    /// Video samples in those fragments, from their `trun` boxes.
    var videoSamples = 0

    init(path: String) {
        let bytes = Self.read(path)
        let top = Self.boxes(bytes, 0..<bytes.count)
        var videoTrack: UInt32?
        if let moov = top.first(where: { $0.type == "moov" && $0.isComplete }) {
            for trak in Self.boxes(bytes, moov.body) where trak.type == "trak" {
                let children = Self.boxes(bytes, trak.body)
                guard let tkhd = children.first(where: { $0.type == "tkhd" }),
                      let mdia = children.first(where: { $0.type == "mdia" }),
                      let hdlr = Self.boxes(bytes, mdia.body).first(where: { $0.type == "hdlr" }) else { continue }
                // hdlr: version/flags (4), pre_defined (4), handler_type (4).
                if Self.fourCC(bytes, hdlr.body.lowerBound + 8) == "vide" {
                    // tkhd: version/flags (4), then creation and modification times (4 or 8 each).
                    let version = bytes[tkhd.body.lowerBound]
                    videoTrack = Self.uint32(bytes, tkhd.body.lowerBound + 4 + (version == 1 ? 16 : 8))
                }
            }
        }
        for (i, box) in top.enumerated() where box.type == "moof" {
            guard box.isComplete, i + 1 < top.count, top[i + 1].type == "mdat", top[i + 1].isComplete else { continue }
            fragments += 1
            for traf in Self.boxes(bytes, box.body) where traf.type == "traf" {
                let children = Self.boxes(bytes, traf.body)
                // tfhd: version/flags (4), track_ID (4). trun: version/flags (4), sample_count (4).
                guard let tfhd = children.first(where: { $0.type == "tfhd" }),
                      Self.uint32(bytes, tfhd.body.lowerBound + 4) == videoTrack else { continue }
                for trun in children where trun.type == "trun" {
                    videoSamples += Int(Self.uint32(bytes, trun.body.lowerBound + 4) ?? 0)
                }
            }
        }
    }

    /// The file's bytes so far, read with read(2): FileManager.contents(atPath:) leaks a 4 KiB
    /// buffer for each empty file it reads (swift-foundation; seen under the address sanitizer),
    /// and the file is empty until the muxer writes.
    static func read(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return bytes }
            bytes += chunk[0..<n]
        }
    }

    struct Box {
        var type: String
        var body: Range<Int>
        var isComplete: Bool
    }

    /// The boxes in `range`; the last may run past the end of what was written (incomplete).
    static func boxes(_ bytes: [UInt8], _ range: Range<Int>) -> [Box] {
        var result: [Box] = []
        var offset = range.lowerBound
        while offset + 8 <= range.upperBound, let size32 = uint32(bytes, offset), let type = fourCC(bytes, offset + 4) {
            var header = 8
            var size = Int(size32)
            var known = true
            if size32 == 1 {
                guard let high = uint32(bytes, offset + 8), let low = uint32(bytes, offset + 12) else { break }
                size = Int(UInt64(high) << 32 | UInt64(low))
                header = 16
            } else if size32 == 0 {
                size = range.upperBound - offset  // "to the end of the file": not known to be whole yet
                known = false
            }
            guard size >= header else { break }
            let end = offset + size
            result.append(Box(type: type, body: (offset + header)..<min(end, range.upperBound), isComplete: known && end <= range.upperBound))
            offset = end
        }
        return result
    }

    static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return bytes[at..<at + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func fourCC(_ bytes: [UInt8], _ at: Int) -> String? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        return String(decoding: bytes[at..<at + 4], as: UTF8.self)
    }
}
