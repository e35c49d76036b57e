import Foundation
import GraphKitTesting
import MediaContainers

/// MP4 files whose index claims what no file means (an edit list starting its media at 2^63−1,
/// a sample entry of 65535×65535), made from a good one through the container library, as an
/// attacker would craft them: the media as it was, the index edited.
package enum CraftedMP4 {
    /// 3 s of 160×120 H.264 (a key frame a second) with AAC, as ffmpeg writes it (the index after
    /// the media, so an index that grows moves no sample).
    package static func movie(_ path: String) throws {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=3",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3",
                                         "-c:v", "libx264", "-g", "25", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", path])
    }

    /// A copy of the MP4 at `path`, whose index must come last, at `output`, with `edit` made to
    /// its index; `padding` makes it that many bytes larger (a `free` box before the index).
    package static func edited(_ path: String, to output: String, padding: Int = 0, _ edit: (inout MP4Movie) throws -> Void) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let file = try MP4File(MemoryBytes(bytes))
        guard let extent = file.first("moov"), extent.offset + extent.size == UInt64(bytes.count) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path])
        }
        var movie = try MP4Movie(parsing: bytes[Int(extent.offset)...])
        try edit(&movie)
        var free: [UInt8] = []
        if padding >= 8 {
            free = [UInt8](repeating: 0, count: padding)
            free.replaceSubrange(0..<8, with: [UInt8(padding >> 24), UInt8((padding >> 16) & 0xFF), UInt8((padding >> 8) & 0xFF), UInt8(padding & 0xFF)] + Array("free".utf8))
        }
        try Data(bytes[..<Int(extent.offset)] + free + movie.bytes).write(to: URL(fileURLWithPath: output))
    }

    /// The first track of `handler` (`vide`, `soun`) of `movie`, edited by `edit`.
    package static func track(_ handler: FourCC, of movie: inout MP4Movie, _ edit: (inout MP4Track) -> Void) throws {
        guard let (index, found) = movie.tracks(handler: handler).first else { throw CocoaError(.fileReadCorruptFile) }
        var track = found
        edit(&track)
        movie.setTrack(index, track)
    }

    /// `levels` boxes of `type`, each holding the next, as bytes: a `meta` (a full box) with its
    /// 4 bytes of version and flags first, and the chain preceded by them too, so that it is the
    /// body of one more `meta`; for another type, the body of one more of it.
    package static func nested(_ type: FourCC, levels: Int) -> [UInt8] {
        let header = type == "meta" ? 12 : 8
        var bytes = [UInt8](repeating: 0, count: levels * header)
        for i in 0..<levels {
            let size = UInt32((levels - i) * header), at = i * header
            bytes.replaceSubrange(at..<(at + 8), with: [UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)] + type.bytes)
        }
        return (type == "meta" ? [0, 0, 0, 0] : []) + bytes
    }
}
