@testable import MediaContainers
import Testing
import TestSupport

/// WebPFile, GIFFile and TIFFFile: the structure of pictures made here byte by byte (canvas,
/// frames, delays, loop counts, pages, tags), and damage that cannot loop, read out of bounds or
/// claim more than the bytes hold.
@Suite struct PictureFilesTests {
    static func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    // MARK: GIF

    /// A GIF of `frames` (x, y, w, h, delay in hundredths, transparent), each of one pixel's
    /// LZW data (not decoded here), with Netscape's loop count when given.
    static func gif(width: Int, height: Int, frames: [(Int, Int, Int, Int, Int, Bool)], loops: Int?, trailer: Bool = true) -> [UInt8] {
        var b = Array("GIF89a".utf8) + le(width, 2) + le(height, 2) + [0x80, 0, 0] + [UInt8](repeating: 0, count: 6)
        if let loops { b += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le(loops, 2) + [0] }
        for f in frames {
            b += [0x21, 0xF9, 4, (2 << 2) | (f.5 ? 1 : 0)] + le(f.4, 2) + [0, 0]
            b += [0x2C] + le(f.0, 2) + le(f.1, 2) + le(f.2, 2) + le(f.3, 2) + [0x40]
            b += [2, 2, 0x4C, 0x01, 0]  // LZW minimum code size, one sub-block, end
        }
        if trailer { b.append(0x3B) }
        return b
    }

    @Test func aGIFsFramesDelaysAndLoopCountAreRead() throws {
        let bytes = Self.gif(width: 300, height: 200, frames: [(0, 0, 300, 200, 7, false), (10, 20, 30, 40, 0, true), (0, 0, 1, 1, 250, false)], loops: 0)
        let file = try GIFFile.read(MemoryBytes(bytes))
        #expect(file.width == 300 && file.height == 200 && file.hasGlobalColourTable)
        #expect(file.loopCount == 0)
        #expect(file.frames.map(\.delay) == [7, 0, 250])
        #expect(file.frames[1] == GIFFile.Frame(x: 10, y: 20, width: 30, height: 40, delay: 0, transparent: true, interlaced: true, disposal: 2))
        #expect(try GIFFile.read(MemoryBytes(Self.gif(width: 1, height: 1, frames: [(0, 0, 1, 1, 5, false)], loops: nil))).loopCount == nil)
    }

    @Test func aDamagedGIFKeepsTheFramesBeforeTheDamageOrIsRefused() throws {
        let whole = Self.gif(width: 8, height: 8, frames: Array(repeating: (0, 0, 8, 8, 10, false), count: 3), loops: 2, trailer: false)
        // Cut in the third frame's data: two frames are whole.
        #expect(try GIFFile.read(MemoryBytes(Array(whole.dropLast(2)))).frames.count == 2)
        #expect(throws: ContainerError.self) { try GIFFile.read(MemoryBytes(Array("GIF89a".utf8) + [0, 0, 0, 0, 0, 0, 0])) }
        #expect(throws: ContainerError.self) { try GIFFile.read(MemoryBytes(Self.gif(width: 8, height: 8, frames: [], loops: nil))) }
        // A block GIF has not, before any frame.
        var odd = Self.gif(width: 8, height: 8, frames: [], loops: nil, trailer: false)
        odd.append(0x99)
        #expect(throws: ContainerError.self) { try GIFFile.read(MemoryBytes(odd)) }
    }

    @Test func aGIFOfMoreFramesThanTheBoundStopsThere() throws {
        var b = Self.gif(width: 1, height: 1, frames: [], loops: nil, trailer: false)
        let frame: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 0]
        b.reserveCapacity(b.count + frame.count * (GIFFile.maximumFrames + 10))
        for _ in 0..<(GIFFile.maximumFrames + 10) { b += frame }
        #expect(try GIFFile.read(MemoryBytes(b)).frames.count == GIFFile.maximumFrames)
    }

    // MARK: WebP

    static func chunk(_ name: String, _ payload: [UInt8]) -> [UInt8] {
        Array(name.utf8) + le(payload.count, 4) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    static func webp(_ chunks: [[UInt8]]) -> [UInt8] {
        let body = Array("WEBP".utf8) + chunks.joined()
        return Array("RIFF".utf8) + le(body.count, 4) + body
    }

    @Test func aStillWebPsSizeAndAlphaComeFromItsPicturesHeader() throws {
        // VP8L: signature, then 14 bits width − 1, 14 bits height − 1, 1 bit alpha.
        let bits = (321 - 1) | (123 - 1) << 14 | 1 << 28
        let lossless = try WebPFile.read(MemoryBytes(Self.webp([Self.chunk("VP8L", [0x2F] + Self.le(bits, 4) + [0, 0])])))
        #expect(lossless.width == 321 && lossless.height == 123 && lossless.hasAlpha && !lossless.isAnimated)
        #expect(lossless.frames.count == 1 && lossless.loopCount == nil)
        // VP8: a key frame's tag, the start code, then 14-bit sizes.
        let lossy = try WebPFile.read(MemoryBytes(Self.webp([Self.chunk("VP8 ", [0x10, 0x02, 0, 0x9D, 0x01, 0x2A] + Self.le(640, 2) + Self.le(480, 2))])))
        #expect(lossy.width == 640 && lossy.height == 480 && !lossy.hasAlpha)
    }

    @Test func anAnimatedWebPsFramesDurationsLoopsAndEXIFAreRead() throws {
        func frame(_ x: Int, _ y: Int, _ w: Int, _ h: Int, _ ms: Int) -> [UInt8] {
            Self.chunk("ANMF", Self.le(x / 2, 3) + Self.le(y / 2, 3) + Self.le(w - 1, 3) + Self.le(h - 1, 3) + Self.le(ms, 3) + [0])
        }
        var exif = EXIFBuilder(little: true)
        exif.primary = [(0x0112, .shorts([6])), (0x010F, .ascii("Camera"))]
        let bytes = Self.webp([Self.chunk("VP8X", [0x12, 0, 0, 0] + Self.le(399, 3) + Self.le(299, 3)), Self.chunk("ANIM", [0, 0, 0, 0] + Self.le(3, 2)),
                               frame(0, 0, 400, 300, 40), frame(10, 20, 50, 60, 100), Self.chunk("EXIF", Array("Exif\0\0".utf8) + exif.bytes())])
        let file = try WebPFile.read(MemoryBytes(bytes))
        #expect(file.width == 400 && file.height == 300 && file.hasAlpha && file.isAnimated && file.loopCount == 3)
        #expect(file.frames == [WebPFile.Frame(x: 0, y: 0, width: 400, height: 300, duration: 40), WebPFile.Frame(x: 10, y: 20, width: 50, height: 60, duration: 100)])
        #expect(file.exif?.primary[0x0112] == .integers([6]) && file.exif?.primary[0x010F] == .text("Camera"))
    }

    @Test func aWebPWhoseChunksClaimTooMuchIsRefusedNamingTheChunk() throws {
        var bytes = Self.webp([Self.chunk("VP8X", [0, 0, 0, 0] + Self.le(9, 3) + Self.le(9, 3))])
        bytes += Array("ANMF".utf8) + Self.le(1 << 30, 4)
        let riff = bytes.count - 8
        bytes.replaceSubrange(4..<8, with: Self.le(riff, 4))
        #expect { try WebPFile.read(MemoryBytes(bytes)) } throws: { "\($0)".contains("ANMF chunk at byte 30 claims 1073741824 bytes") }
        #expect(throws: ContainerError.self) { try WebPFile.read(MemoryBytes(Self.webp([]))) }
        #expect(throws: ContainerError.self) { try WebPFile.read(MemoryBytes(Self.webp([Self.chunk("VP8L", [0x00, 0, 0, 0, 0])]))) }
    }

    // MARK: TIFF

    /// A TIFF of `pages` (width, height, orientation), each directory pointing to the next
    /// (`loop`: the last back to the first), the first with a make.
    static func tiff(_ pages: [(Int, Int, Int)], loop: Bool = false, little: Bool = true) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { little ? le(v, 2) : le(v, 2).reversed() }
        func u32(_ v: Int) -> [UInt8] { little ? le(v, 4) : le(v, 4).reversed() }
        var b: [UInt8] = (little ? [0x49, 0x49] : [0x4D, 0x4D]) + u16(42) + u32(8)
        let make = Array("Maker\0".utf8)
        for (n, page) in pages.enumerated() {
            let entries: [(Int, Int, Int)] = [(256, 4, page.0), (257, 4, page.1), (258, 3, 8), (274, 3, page.2), (277, 3, 4), (338, 3, 2)]
                + (n == 0 ? [(271, 2, 0)] : [])
            let start = b.count, size = 2 + entries.count * 12 + 4
            let makeAt = start + size
            b += u16(entries.count)
            for e in entries {
                b += u16(e.0) + u16(e.1)
                switch e.1 {
                case 2: b += u32(make.count) + u32(makeAt)
                case 3: b += u32(1) + u16(e.2) + [0, 0]
                default: b += u32(1) + u32(e.2)
                }
            }
            let last = n == pages.count - 1
            b += u32(last ? (loop ? 8 : 0) : makeAt + (n == 0 ? make.count : 0))
            if n == 0 { b += make }
        }
        return b
    }

    @Test(arguments: [true, false])
    func aTIFFsPagesAndFirstPagesTagsAreRead(little: Bool) throws {
        let file = try TIFFFile.read(MemoryBytes(Self.tiff([(640, 480, 6), (32, 24, 1)], little: little)))
        #expect(file.pages.count == 2)
        #expect(file.pages[0] == TIFFFile.Page(width: 640, height: 480, bitsPerSample: 8, samplesPerPixel: 4, hasAlpha: true, orientation: 6,
                                               photometric: 2, compression: 1))
        #expect(file.pages[1].width == 32 && file.pages[1].orientation == 1)
        #expect(file.tags.primary[271] == .text("Maker"))
        #expect(TIFFFile.isTIFF(Self.tiff([(1, 1, 1)], little: little)))
    }

    @Test func aTIFFWhosePagesPointBackEndsAndOneWithNoSizeIsRefused() throws {
        #expect(try TIFFFile.read(MemoryBytes(Self.tiff([(8, 8, 1), (4, 4, 1), (2, 2, 1)], loop: true))).pages.count == 3)
        #expect(throws: ContainerError.self) { try TIFFFile.read(MemoryBytes([0x49, 0x49, 42, 0, 0xFF, 0xFF, 0, 0])) }
        var sizeless = Self.tiff([(8, 8, 1)])
        sizeless[10] = 0x99  // the width's tag is no longer 256
        #expect { try TIFFFile.read(MemoryBytes(sizeless)) } throws: { "\($0)".contains("states no size") }
    }

    // MARK: Claims past Int's reach

    /// Sizes up to 2^32 − 1 in a PNG's or a JPEG's header, and a TIFF's tags, read and weighed
    /// without trapping; a GIF's screen larger than its bytes can cover refused.
    @Test func hugeClaimsAreWeighedNotTrappedOn() throws {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 16, 6, 0, 0, 0, 0, 0, 0, 0]
        let header = try #require(try StillImageHeader.read { offset, count in Array(png.dropFirst(offset).prefix(count)) }?.get())
        #expect(header.width == 0xFFFF_FFFF && !header.fits(in: png.count) && !header.fits(in: 1 << 40))
        #expect(!StillImageHeader.fits(kind: .jpeg, width: 0xFFFF, height: 0xFFFF, bitsPerPixel: 24, arithmetic: false, in: 10))
        // A TIFF whose page claims 2^32 − 1 bits a sample.
        var tiff = Self.tiff([(8, 8, 1)])
        tiff.replaceSubrange(8 + 2 + 2 * 12 + 2..<8 + 2 + 2 * 12 + 12, with: [4, 0, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect { try TIFFFile.read(MemoryBytes(tiff)) } throws: { "\($0)".contains("4294967295 bits a sample") }
        // A 40-byte GIF claiming a 16384 × 16384 screen.
        let gif = Self.gif(width: 16384, height: 16384, frames: [(0, 0, 1, 1, 0, false)], loops: nil)
        #expect { try GIFFile.read(MemoryBytes(gif)) } throws: { "\($0)".contains("more than its \(gif.count) bytes can cover") }
    }
}
