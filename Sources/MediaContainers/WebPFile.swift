/// A WebP's pictures, read from its RIFF chunks before anything is decoded: the canvas (VP8X, or
/// the one picture's VP8 or VP8L header), alpha, the animation's frames and their durations and
/// loop count (ANIM, ANMF), and its EXIF (the EXIF chunk).
///
/// Bounded: at most ``maximumFrames`` frames and ``maximumChunks`` chunks; each chunk's size is
/// checked against the RIFF's.
public struct WebPFile: Sendable {
    public struct Frame: Sendable, Equatable {
        public let x: Int, y: Int, width: Int, height: Int
        /// Its duration in milliseconds (0 for a still picture).
        public let duration: Int
    }

    public static let maximumFrames = 65_536
    /// At most this many chunks are read (a file of tiny unknown chunks ends there).
    public static let maximumChunks = 1 << 20

    public let width: Int
    public let height: Int
    public let hasAlpha: Bool
    public let isAnimated: Bool
    /// The animation's loop count (0: for ever); nil for a still picture.
    public let loopCount: Int?
    public let frames: [Frame]
    public let exif: EXIFTags?

    /// Whether `start` (a file's first bytes) begins a WebP ("RIFF", a size, "WEBP").
    public static func isWebP(_ start: [UInt8]) -> Bool {
        start.count >= 12 && start.prefix(4).elementsEqual("RIFF".utf8) && start[8..<12].elementsEqual("WEBP".utf8)
    }

    public static func read(_ source: some ByteSource) throws(ContainerError) -> WebPFile {
        func le(_ b: [UInt8], _ at: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 | Int(b[at + $1]) << (8 * $1) } }
        let header = try source.read(at: 0, count: 12)
        guard isWebP(header) else { throw ContainerError("it does not begin as a WebP does") }
        let end = min(8 + le(header, 4, 4), Int(clamping: source.count))
        var at = 12
        var canvas: (Int, Int)?
        var alpha = false, animated = false
        var loopCount: Int?
        var frames: [Frame] = []
        var exif: EXIFTags?
        var still: (Int, Int, Bool)?
        var chunks = 0
        while at + 8 <= end, frames.count < maximumFrames, chunks < maximumChunks {
            chunks += 1
            let chunk = try source.read(at: UInt64(at), count: 8)
            guard chunk.count == 8 else { break }
            let name = String(decoding: chunk.prefix(4), as: UTF8.self), size = le(chunk, 4, 4)
            let payload = at + 8
            guard size <= end - payload else { throw ContainerError("its \(name) chunk at byte \(at) claims \(size) bytes, past the file's end") }
            func body(_ n: Int) throws(ContainerError) -> [UInt8] { try source.read(at: UInt64(payload), count: min(n, size)) }
            switch name {
            case "VP8X":
                let b = try body(10)
                guard b.count == 10 else { throw ContainerError("its VP8X chunk is \(size) bytes, not 10") }
                alpha = b[0] & 0x10 != 0
                animated = b[0] & 0x02 != 0
                canvas = (1 + le(b, 4, 3), 1 + le(b, 7, 3))
            case "ANIM":
                let b = try body(6)
                if b.count == 6 { loopCount = le(b, 4, 2) }
            case "ANMF":
                let b = try body(16)
                guard b.count == 16 else { throw ContainerError("its frame \(frames.count + 1) (ANMF at byte \(at)) is cut short") }
                frames.append(Frame(x: 2 * le(b, 0, 3), y: 2 * le(b, 3, 3), width: 1 + le(b, 6, 3), height: 1 + le(b, 9, 3),
                                    duration: le(b, 12, 3)))
            case "VP8 ":
                let b = try body(10)
                guard b.count == 10, b[3] == 0x9D, b[4] == 0x01, b[5] == 0x2A else { throw ContainerError("its VP8 chunk at byte \(at) has no frame header") }
                still = (le(b, 6, 2) & 0x3FFF, le(b, 8, 2) & 0x3FFF, false)
            case "VP8L":
                let b = try body(5)
                guard b.count == 5, b[0] == 0x2F else { throw ContainerError("its VP8L chunk at byte \(at) has no signature") }
                let bits = le(b, 1, 4)
                still = (1 + bits & 0x3FFF, 1 + (bits >> 14) & 0x3FFF, bits >> 28 & 1 != 0)
            case "EXIF":
                var b = try body(1 << 20)
                if b.starts(with: Array("Exif\0\0".utf8)) { b.removeFirst(6) }
                exif = EXIFTags(tiff: b)
            default:
                break
            }
            at = payload + size + (size & 1)
        }
        let (width, height) = canvas ?? still.map { ($0.0, $0.1) } ?? (0, 0)
        guard width > 0, height > 0 else { throw ContainerError("it states no picture size (no VP8X, VP8 or VP8L chunk)") }
        if !animated || frames.isEmpty { frames = [Frame(x: 0, y: 0, width: width, height: height, duration: 0)] }
        return WebPFile(width: width, height: height, hasAlpha: alpha || still?.2 == true, isAnimated: animated,
                        loopCount: animated ? loopCount ?? 0 : nil, frames: frames, exif: exif)
    }
}
