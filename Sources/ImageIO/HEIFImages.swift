import CoreVideo
import Glibc
@_spi(Engine) import GraphKitCore
import ImageCodecs
import MediaContainers

// HEIC and AVIF through ImageIO: each top-level image of a HEIF file is a picture of the source
// (the primary first), described from the file's `meta` box by the container library (HEIFFile:
// size, orientation from irot and imir, alpha, thumbnails, colour) and decoded by the image
// codecs (HEIFDecoder: libheif in a child process), as stored, with its orientation apart.

extension ImageFileHeader {
    /// A HEIF image's thumbnail item (`thmb`): its size and orientation.
    struct Thumbnail: Equatable, Sendable {
        let item: UInt32
        /// Its size as coded, and the part of it shown.
        let coded: HEIFFile.Rect
        let shown: HEIFFile.Rect
        let orientation: CGImagePropertyOrientation

        var width: Int { shown.width }
        var height: Int { shown.height }
    }

    /// The coded types the image codecs decode: HEVC and AV1, and grids of them.
    static let decodedTypes: Set<FourCC> = ["hvc1", "av01"]

    /// The headers of the top-level images of the HEIF file in `source`, the primary first.
    static func heif(_ source: some ByteSource) -> Result<[ImageFileHeader], Refusal> {
        let file: HEIFFile
        do throws(ContainerError) {
            file = try HEIFFile.read(source)
        } catch {
            return .failure(.damaged("a HEIF file, \(error.reason)"))
        }
        var headers: [ImageFileHeader] = []
        var otherCodings: Set<String> = []
        for item in file.topLevelImages {
            let coded = file.codedType(of: item)
            guard decodedTypes.contains(coded) else {
                otherCodings.insert(coded.description)
                continue
            }
            guard let width = item.width, let height = item.height, let shown = item.shown, width > 0, height > 0 else {
                return .failure(.damaged("a HEIF image (item \(item.id)) that states no size (ispe)"))
            }
            guard width <= maximumDimension, height <= maximumDimension else { return .failure(.tooLarge(width: width, height: height)) }
            let alpha = file.hasAlpha(item.id)
            let thumbnail = file.items(referring: "thmb", to: item.id)
                .compactMap { t -> Thumbnail? in
                    guard decodedTypes.contains(t.type), let w = t.width, let h = t.height, let shown = t.shown, w > 0, h > 0,
                          w <= maximumDimension, h <= maximumDimension else { return nil }
                    return Thumbnail(item: t.id, coded: HEIFFile.Rect(x: 0, y: 0, width: w, height: h), shown: shown,
                                     orientation: CGImagePropertyOrientation(rawValue: UInt32(t.orientation)) ?? .up)
                }
                .max { $0.width * $0.height < $1.width * $1.height }
            let depth = item.bitDepth ?? 8
            let exif = file.items(referring: "cdsc", to: item.id).first { $0.type == "Exif" }
                .flatMap { try? file.data(of: $0, in: source) }.flatMap(EXIFTags.init(heifExifItem:))
            headers.append(ImageFileHeader(kind: coded == "av01" ? .avif : .heic, width: shown.width, height: shown.height,
                                           orientation: CGImagePropertyOrientation(rawValue: UInt32(item.orientation)) ?? .up,
                                           hasAlpha: alpha, depth: depth, components: alpha ? 4 : 3, progressive: false, interlaced: false,
                                           bitsPerPixel: depth * (alpha ? 4 : 3), arithmetic: false,
                                           item: item.id, coded: HEIFFile.Rect(x: 0, y: 0, width: width, height: height), shown: shown,
                                           thumbnail: thumbnail, nclx: item.nclx, exif: exif))
        }
        if headers.isEmpty {
            return .failure(otherCodings.isEmpty ? .damaged("a HEIF file with no image to show")
                : .damaged("a HEIF file whose images are coded as \(otherCodings.sorted().joined(separator: ", ")), which GraphKit does not decode (HEVC and AV1 only)"))
        }
        return .success(headers)
    }

    /// The name of the colour space its `nclx` describes, as Apple's ImageIO names it
    /// (`kCGImagePropertyProfileName`); nil for one it does not name.
    var profileName: String? {
        guard let nclx else { return nil }
        switch (nclx.primaries, nclx.transfer) {
        case (12, _): return "Display P3"
        case (9, 16): return "Rec. ITU-R BT.2100 PQ"
        case (9, 18): return "Rec. ITU-R BT.2100 HLG"
        case (9, _): return "ITU-R BT.2020"
        case (1, 1), (1, 13), (1, 2): return "sRGB IEC61966-2.1"
        default: return nil
        }
    }
}

extension CGImageSource {
    /// The HEIF picture of `header` (or its `thumbnail`), decoded to BGRA as stored; nil, the
    /// reason logged, when it cannot be.
    func decodedHEIF(_ header: ImageFileHeader, thumbnail: ImageFileHeader.Thumbnail?, caller: String) -> SampleBuffer? {
        guard let coded = thumbnail?.coded ?? header.coded, let shown = thumbnail?.shown ?? header.shown else { return nil }
        let (width, height) = (shown.width, shown.height)
        do {
            let picture = try withBytes { bytes throws(ContainerError) in
                try HEIFDecoder.decode(bytes, image: header.item, thumbnail: thumbnail?.item ?? 0, width: coded.width, height: coded.height,
                                       shown: shown)
            }
            let format = MediaFormat.VideoFormat(pixelFormat: .bgra, width: width, height: height, frameRate: FrameRate(1))
            return SampleBuffer(format: .rawVideo(format), wrapping: picture.memory, presentationTime: .zero,
                                release: { withExtendedLifetime(picture) {} })
        } catch {
            log("\(caller): cannot decode \(name)\(thumbnail.map { " (its thumbnail, item \($0.item))" } ?? ""): \(error)")
            return nil
        }
    }

    /// `body` with the source's bytes: memory's, or the file's mapped (read-only, private) for
    /// the call.
    func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws(ContainerError) -> T) throws(ContainerError) -> T {
        switch origin {
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { raw in Result { () throws(ContainerError) in try body(raw) } }
            return try result.get()
        case .file(let path):
            let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw ContainerError("cannot open it: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            return try MappedFile.withBytes(of: fd, body)
        }
    }
}
