import Foundation
import GraphKitTesting
import ImageCodecs
import MediaContainers
import Testing
import TestSupport

/// HEIFDecoder: HEIC and AVIF pictures made by heif-enc in the test, decoded in a child process
/// and checked against heif-convert's decode of the same file.
@Suite(.media) struct HEIFDecoderTests {
    /// A PNG of ffmpeg's test pattern (`testsrc2`), with an alpha ramp when `alpha`.
    static func pattern(_ folder: URL, _ name: String, width: Int, height: Int, alpha: Bool = false, colour: String? = nil) throws -> URL {
        let png = folder.appendingPathComponent(name + ".png")
        let source = colour.map { "color=c=\($0):s=\(width)x\(height)" } ?? "testsrc2=s=\(width)x\(height)"
        let filter = alpha ? ["-vf", "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'"] : []
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", source, "-frames:v", "1"] + filter + [png.path])
        return png
    }

    /// The pattern (``pattern(_:_:width:height:alpha:colour:)``) coded by heif-enc with `options`
    /// into `file` in `folder`.
    static func heifEnc(_ folder: URL, _ name: String, width: Int, height: Int, alpha: Bool = false, colour: String? = nil,
                        _ options: [String], to file: String) throws -> URL {
        let png = try pattern(folder, name, width: width, height: height, alpha: alpha, colour: colour)
        let out = folder.appendingPathComponent(file)
        _ = try TestMedia.runTool("heif-enc", options + ["-o", out.path, png.path])
        return out
    }

    /// A PNG's pixels as BGRA, read by ffmpeg.
    static func bgra(_ png: URL) throws -> [UInt8] {
        let raw = png.deletingPathExtension().appendingPathExtension("bgra")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "bgra", raw.path])
        return [UInt8](try Data(contentsOf: raw))
    }

    static func decode(_ file: URL, thumbnail: Bool = false) throws -> (HEIFFile, DecodedPicture) {
        let bytes = [UInt8](try Data(contentsOf: file))
        let heif = try HEIFFile.read(MemoryBytes(bytes))
        let primary = try #require(heif.primary)
        let item = thumbnail ? try #require(heif.items(referring: "thmb", to: primary.id).first) : primary
        let picture = try bytes.withUnsafeBytes { raw in
            try HEIFDecoder.decode(raw, image: primary.id, thumbnail: thumbnail ? item.id : 0,
                                   width: item.width ?? 0, height: item.height ?? 0, shown: item.shown)
        }
        return (heif, picture)
    }

    static func largestDifference(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        zip(a, b).reduce(0) { max($0, abs(Int($1.0) - Int($1.1))) }
    }

    @Test func aHEICDecodesAsHeifConvertDecodesIt() throws {
        let folder = try TestMedia.temporaryFolder()
        let heic = try Self.heifEnc(folder, "pattern", width: 320, height: 240, ["-q", "90"], to: "pattern.heic")
        let (file, picture) = try Self.decode(heic)
        #expect(file.primary?.type == "hvc1" && picture.width == 320 && picture.height == 240 && !picture.hasAlpha)
        // libheif's own decode of the same file, by its own tool: the same pixels.
        let reference = folder.appendingPathComponent("reference.png")
        _ = try TestMedia.runTool("heif-convert", [heic.path, reference.path])
        let expected = try Self.bgra(reference)
        #expect(expected.count == picture.memory.count)
        #expect(Self.largestDifference(UnsafeRawBufferPointer(picture.memory), expected) <= 1)
        // And near the pattern it was made from (a lossy code at quality 90).
        let source = try Self.bgra(folder.appendingPathComponent("pattern.png"))
        let squared = zip(picture.memory, source).enumerated().filter { $0.offset % 4 != 3 }
            .reduce(0.0) { $0 + pow(Double($1.element.0) - Double($1.element.1), 2) }
        let psnr = 10 * log10(255 * 255 / (squared / Double(320 * 240 * 3)))
        #expect(psnr > 30, "PSNR \(psnr) dB against the pattern")
    }

    @Test func anAVIFWithAlphaKeepsItsAlpha() throws {
        let folder = try TestMedia.temporaryFolder()
        let avif = try Self.heifEnc(folder, "alpha", width: 128, height: 64, alpha: true, ["-A", "-q", "90"], to: "alpha.avif")
        let (file, picture) = try Self.decode(avif)
        #expect(file.primary?.type == "av01" && picture.hasAlpha)
        #expect(file.items(referring: "auxl", to: file.primaryID).count == 1)
        // Alpha rises left to right as the pattern's does: transparent at the left, opaque at the right.
        let row = UnsafeRawBufferPointer(picture.memory)
        #expect(row[3] < 16 && row[127 * 4 + 3] > 235, "alpha \(row[3]) at the left, \(row[127 * 4 + 3]) at the right")
    }

    @Test func aThumbnailItemDecodesAtItsOwnSize() throws {
        let folder = try TestMedia.temporaryFolder()
        let heic = try Self.heifEnc(folder, "big", width: 640, height: 480, ["-q", "80", "-t", "160"], to: "thumbed.heic")
        let (file, thumbnail) = try Self.decode(heic, thumbnail: true)
        #expect(file.topLevelImages.count == 1)
        #expect(thumbnail.width == 160 && thumbnail.height == 120)
    }

    /// A grid of four tiles, each coded apart by heif-enc and put together here as a phone
    /// writes a grid: the tiles' colours land in their quadrants.
    @Test func aGridIsItsTilesInPlace() throws {
        let folder = try TestMedia.temporaryFolder()
        let colours = ["red", "lime", "blue", "white"]
        var items = [HEIFBuilder.Item(id: 1, type: "grid", data: HEIFBuilder.gridData(rows: 2, columns: 2, width: 128, height: 128),
                                      properties: [HEIFBuilder.ispe(128, 128)], references: [("dimg", [2, 3, 4, 5])])]
        for (n, colour) in colours.enumerated() {
            let tile = try HEIFBuilder.encoded(png: try Self.pattern(folder, colour, width: 64, height: 64, colour: colour), in: folder)
            items.append(.init(id: UInt32(n + 2), type: "hvc1", hidden: true, data: tile.data, properties: [tile.configuration, HEIFBuilder.ispe(64, 64)]))
        }
        let grid = folder.appendingPathComponent("grid.heic")
        try Data(HEIFBuilder(primary: 1, items: items).bytes()).write(to: grid)
        let (_, picture) = try Self.decode(grid)
        func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(picture.memory[(y * 128 + x) * 4 + $0]) } }  // B, G, R
        for (n, expected) in [[0, 0, 255], [0, 255, 0], [255, 0, 0], [255, 255, 255]].enumerated() {
            let got = pixel(32 + 64 * (n % 2), 32 + 64 * (n / 2))
            #expect(zip(got, expected).allSatisfy { abs($0 - $1) < 12 }, "tile \(n) (\(colours[n])): \(got)")
        }
    }

    static let boundReport = "GRAPHKIT_HEIF_BOUND_REPORT"
    static let boundFile = "GRAPHKIT_HEIF_BOUND_FILE"

    /// A decoder that cannot have the memory a picture needs fails in its own process: the caller
    /// gets an error naming it and goes on (a bound of 1 MiB for a 4096 × 2048 decode, which needs
    /// about 50 MB). The bound counts what the child makes writable beyond what it inherited, and
    /// a busy process inherits free heap the child may reuse, so the test decodes in a process of
    /// its own (this test binary, filtered to this test), as a fresh server would.
    @Test func aDecoderThatRunsOutOfMemoryCostsOnlyItsPicture() throws {
        let environment = ProcessInfo.processInfo.environment
        if let report = environment[Self.boundReport], let file = environment[Self.boundFile] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
            var said: [String] = []
            do {
                _ = try bytes.withUnsafeBytes { try HEIFDecoder.decode($0, image: 1, width: 4096, height: 2048, memoryLimit: 1 << 20) }
                said.append("decoded within 1 MiB")
            } catch {
                said.append("refused: \((error as? ContainerError)?.reason ?? "\(error)")")
            }
            let again = try? bytes.withUnsafeBytes { try HEIFDecoder.decode($0, image: 1, width: 4096, height: 2048) }
            said.append("then \(again?.width ?? 0)")
            try said.joined(separator: "\n").write(toFile: report, atomically: true, encoding: .utf8)
            return
        }
        let folder = try TestMedia.temporaryFolder()
        let heic = try Self.heifEnc(folder, "p", width: 4096, height: 2048, colour: "gray", ["-q", "10"], to: "p.heic")
        let report = folder.appendingPathComponent("bound.txt").path
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        child.arguments = ["--testing-library", "swift-testing", "--filter", "aDecoderThatRunsOutOfMemoryCostsOnlyItsPicture"]
        var childEnvironment = environment
        childEnvironment[Self.boundReport] = report
        childEnvironment[Self.boundFile] = heic.path
        child.environment = childEnvironment
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        child.waitUntilExit()
        let said = try String(contentsOfFile: report, encoding: .utf8)
        #expect(child.terminationStatus == 0)
        #expect(said.hasPrefix("refused: libheif"), "\(said)")
        #expect(said.hasSuffix("then 4096"), "\(said)")
    }

    /// A decode past its time is stopped (its process killed) and reported; the next one works.
    @Test func aDecoderPastItsTimeIsStopped() throws {
        let folder = try TestMedia.temporaryFolder()
        let heic = try Self.heifEnc(folder, "t", width: 1024, height: 1024, ["-q", "50"], to: "t.heic")
        let bytes = [UInt8](try Data(contentsOf: heic))
        let error = try #require(throws: ContainerError.self) {
            try bytes.withUnsafeBytes { try HEIFDecoder.decode($0, image: 1, width: 1024, height: 1024, timeout: 0.001) }
        }
        #expect(error.reason.contains("was stopped"), "\(error)")
        #expect(try bytes.withUnsafeBytes { try HEIFDecoder.decode($0, image: 1, width: 1024, height: 1024) }.width == 1024)
    }

    /// Damaged files: cut short anywhere and bytes changed at random. Each gives a picture or an
    /// error; the test's own process never crashes, whatever libheif or its decoders do.
    @Test func damagedFilesGiveAnErrorOrAPictureNeverACrash() throws {
        let folder = try TestMedia.temporaryFolder()
        let heic = try Self.heifEnc(folder, "d", width: 96, height: 64, ["-q", "70"], to: "d.heic")
        let bytes = [UInt8](try Data(contentsOf: heic))
        var random = SplitMix(seed: 7272)
        var errors = 0
        for round in 0..<120 {
            var damaged = bytes
            if round < 20 {
                damaged.removeLast(Int(random.next() % UInt64(bytes.count - 1)) + 1)
            } else {
                for _ in 0..<(1 + round % 8) { damaged[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next()) }
            }
            guard let file = try? HEIFFile.read(MemoryBytes(damaged)), let primary = file.primary,
                  let width = primary.width, let height = primary.height else { errors += 1; continue }
            do {
                let picture = try damaged.withUnsafeBytes {
                    try HEIFDecoder.decode($0, image: primary.id, width: width, height: height, shown: primary.shown)
                }
                #expect(picture.width == primary.shown?.width)
            } catch {
                errors += 1
                #expect(!"\(error)".isEmpty)
            }
        }
        #expect(errors > 0)
    }
}
