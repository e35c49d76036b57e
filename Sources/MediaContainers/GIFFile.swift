/// A GIF's frames, read from its blocks (GIF89a) before anything is decoded: the canvas (the
/// logical screen), each frame's place, delay and transparency, and the loop count (Netscape's
/// application extension). The LZW data is skipped, not decoded.
///
/// Bounded: at most ``maximumFrames`` frames; each block's length is checked against the bytes; a
/// screen larger than the bytes could cover is refused.
public struct GIFFile: Sendable {
    public struct Frame: Sendable, Equatable {
        public let x: Int, y: Int, width: Int, height: Int
        /// Its delay in hundredths of a second, as stored (0 when none is given).
        public let delay: Int
        public let transparent: Bool
        public let interlaced: Bool
        /// The disposal: 0 none said, 1 keep, 2 clear to the background, 3 restore the one before.
        public let disposal: Int
    }

    public static let maximumFrames = 65_536

    public let width: Int
    public let height: Int
    public let hasGlobalColourTable: Bool
    /// How many times the animation plays again after the first (0: for ever); nil when the file
    /// says nothing (it plays once).
    public let loopCount: Int?
    public let frames: [Frame]

    /// Whether `start` (a file's first bytes) begins a GIF.
    public static func isGIF(_ start: [UInt8]) -> Bool {
        start.count >= 6 && (start.prefix(6).elementsEqual("GIF87a".utf8) || start.prefix(6).elementsEqual("GIF89a".utf8))
    }

    public static func read(_ source: some ByteSource) throws(ContainerError) -> GIFFile {
        var cursor = ByteCursor(source)
        let header = cursor.take(13)
        guard header.count == 13, isGIF(header) else { throw ContainerError("it does not begin as a GIF does") }
        let width = Int(header[6]) | Int(header[7]) << 8, height = Int(header[8]) | Int(header[9]) << 8
        guard width > 0, height > 0 else { throw ContainerError("its screen is \(width) × \(height)") }
        // Each LZW code takes at least 3 bits and gives at most 4,096 pixels: a file's frames
        // cover at most 10,923 pixels a byte. A screen far past that is a request for memory
        // (the canvas is allocated whole), refused; up to a megapixel is allowed whatever the size.
        guard width * height <= max(1 << 20, Int(clamping: source.count) * 10_923) else {
            throw ContainerError("its screen of \(width) × \(height) is more than its \(source.count) bytes can cover")
        }
        let global = header[10] & 0x80 != 0
        if global { cursor.skip(3 << (Int(header[10] & 7) + 1)) }
        var frames: [Frame] = []
        var loopCount: Int?
        var delay = 0, transparent = false, disposal = 0
        blocks: while frames.count < maximumFrames {
            guard let kind = cursor.take(1).first else { break }
            switch kind {
            case 0x21:
                guard let label = cursor.take(1).first else { break blocks }
                var first = true
                var application = false
                while let size = cursor.take(1).first, size > 0 {
                    let block = cursor.take(Int(size))
                    guard block.count == Int(size) else { break blocks }
                    if label == 0xF9, first, block.count >= 4 {
                        disposal = Int(block[0] >> 2) & 7
                        transparent = block[0] & 1 != 0
                        delay = Int(block[1]) | Int(block[2]) << 8
                    } else if label == 0xFF, first {
                        application = block.elementsEqual("NETSCAPE2.0".utf8) || block.elementsEqual("ANIMEXTS1.0".utf8)
                    } else if label == 0xFF, application, block.count >= 3, block[0] == 1 {
                        loopCount = Int(block[1]) | Int(block[2]) << 8
                    }
                    first = false
                }
            case 0x2C:
                let d = cursor.take(9)
                guard d.count == 9 else { break blocks }
                if d[8] & 0x80 != 0 { cursor.skip(3 << (Int(d[8] & 7) + 1)) }
                guard cursor.take(1).count == 1 else { break blocks }  // the LZW code size
                var complete = false
                while let size = cursor.take(1).first {
                    if size == 0 { complete = true; break }
                    cursor.skip(Int(size))
                }
                guard complete || !cursor.atEnd else { break blocks }
                frames.append(Frame(x: Int(d[0]) | Int(d[1]) << 8, y: Int(d[2]) | Int(d[3]) << 8,
                                    width: Int(d[4]) | Int(d[5]) << 8, height: Int(d[6]) | Int(d[7]) << 8,
                                    delay: delay, transparent: transparent, interlaced: d[8] & 0x40 != 0, disposal: disposal))
                if !complete { break blocks }
                delay = 0; transparent = false; disposal = 0
            case 0x3B:
                break blocks
            default:
                if frames.isEmpty { throw ContainerError("a block of kind \(kind) at byte \(cursor.offset - 1), which GIF has not") }
                break blocks
            }
        }
        guard !frames.isEmpty else { throw ContainerError("it holds no frame") }
        return GIFFile(width: width, height: height, hasGlobalColourTable: global, loopCount: loopCount, frames: frames)
    }
}

/// A source read forward through a buffer of 64 KiB: a GIF's many small blocks cost one read a
/// buffer, not one a block.
struct ByteCursor<Source: ByteSource> {
    let source: Source
    private(set) var offset = 0
    private var buffer: [UInt8] = []
    private var start = 0

    init(_ source: Source) { self.source = source }

    var atEnd: Bool { UInt64(offset) >= source.count }

    mutating func take(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        if offset < start || offset + count > start + buffer.count {
            start = offset
            buffer = (try? source.read(at: UInt64(offset), count: max(count, 1 << 16))) ?? []
        }
        let from = offset - start
        let taken = Array(buffer[from..<min(from + count, buffer.count)])
        offset += taken.count
        return taken
    }

    mutating func skip(_ count: Int) { offset = min(offset + max(count, 0), Int(clamping: source.count)) }
}
