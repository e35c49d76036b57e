import Glibc
import MediaContainers

/// A file's bytes mapped read-only for a call: what the decoders read (they take the whole file),
/// without copying it into the process's heap.
public enum MappedFile {
    /// `body` with the bytes of the regular file open at `descriptor` (the descriptor stays open).
    public static func withBytes<T>(of descriptor: Int32, _ body: (UnsafeRawBufferPointer) throws(ContainerError) -> T) throws(ContainerError) -> T {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else {
            throw ContainerError("it is not a file with bytes in it")
        }
        let size = Int(info.st_size)
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapped != MAP_FAILED else {
            throw ContainerError("cannot map it: \(String(cString: strerror(errno)))")
        }
        defer { munmap(mapped, size) }
        return try body(UnsafeRawBufferPointer(start: mapped, count: size))
    }
}

/// The main picture of a photo file that the image codecs decode (HEIC and AVIF: the primary
/// image, cropped to its clean aperture; WebP and GIF: the first frame; TIFF: the first page; a
/// JPEG),
/// with the EXIF orientation it is shown with: what a thumbnail of any photo starts from.
public struct StillPicture {
    public let picture: DecodedPicture
    /// EXIF's orientation, 1 to 8 (HEIF: from `irot`/`imir`; WebP and JPEG: their EXIF; TIFF: its
    /// tag).
    public let orientation: Int
    /// The picture decoded was the file's own thumbnail (a HEIF `thmb` item), not its image.
    public let fromThumbnail: Bool

    /// Whether the first bytes of a file (64 are enough) are a format decoded here.
    public static func isDecoded(_ start: [UInt8]) -> Bool {
        HEIFFile.isHEIF(start) || WebPFile.isWebP(start) || GIFFile.isGIF(start) || TIFFFile.isTIFF(start) || isJPEG(start)
    }

    static func isJPEG(_ start: [UInt8]) -> Bool { start.count >= 3 && start[0] == 0xFF && start[1] == 0xD8 && start[2] == 0xFF }

    /// The main picture of the file open at `descriptor`, or nil when it is not a format decoded
    /// here. A HEIF file's own thumbnail is decoded instead of its image when its longer side is
    /// at least `side` (0: never): an iPhone's 12 MP HEIC holds one of 320 × 240. Throws naming
    /// the fault: the structure's, or the decoder's (which refuses sizes past
    /// ``FrameSizeLimit/side`` before it allocates).
    public static func decode(descriptor: Int32, thumbnailOfAtLeast side: Int = 0) throws(ContainerError) -> StillPicture? {
        let source = FileBytes(descriptor: descriptor)
        let start = try source.read(at: 0, count: 64)
        if HEIFFile.isHEIF(start) {
            let file = try HEIFFile.read(source)
            guard let item = file.primary ?? file.topLevelImages.first, let w = item.width, let h = item.height, let shown = item.shown else {
                throw ContainerError("its primary image states no size (ispe)")
            }
            let thumbnail = side <= 0 ? nil : file.items(referring: "thmb", to: item.id)
                .filter { t in t.width.map { $0 <= FrameSizeLimit.side } == true && t.height.map { $0 <= FrameSizeLimit.side } == true && t.shown != nil }
                .filter { max($0.shown!.width, $0.shown!.height) >= side }
                .min { $0.shown!.width * $0.shown!.height < $1.shown!.width * $1.shown!.height }
            let picture = try MappedFile.withBytes(of: descriptor) { bytes throws(ContainerError) in
                if let t = thumbnail, let tw = t.width, let th = t.height {
                    return try HEIFDecoder.decode(bytes, image: item.id, thumbnail: t.id, width: tw, height: th, shown: t.shown)
                }
                return try HEIFDecoder.decode(bytes, image: item.id, width: w, height: h, shown: shown)
            }
            return StillPicture(picture: picture, orientation: thumbnail?.orientation ?? item.orientation, fromThumbnail: thumbnail != nil)
        }
        let format: FrameDecoder.Format
        let size: (Int, Int)
        var orientation = 1
        if WebPFile.isWebP(start) {
            let file = try WebPFile.read(source)
            (format, size) = (.webp, (file.width, file.height))
            orientation = file.exif?.orientation ?? 1
        } else if GIFFile.isGIF(start) {
            let file = try GIFFile.read(source)
            (format, size) = (.gif, (file.width, file.height))
        } else if TIFFFile.isTIFF(start) {
            let page = try TIFFFile.read(source).pages[0]
            (format, size, orientation) = (.tiff, (page.width, page.height), page.orientation)
        } else if isJPEG(start), let read = StillImageHeader.read({ offset, count in (try? source.read(at: UInt64(max(offset, 0)), count: count)) ?? [] }) {
            let header = try read.get()
            guard header.fits(in: Int(clamping: source.count)) else {
                throw ContainerError("its header claims \(header.width) × \(header.height) pixels, more than its \(source.count) bytes can hold")
            }
            (format, size, orientation) = (.jpeg, (header.width, header.height), header.orientation)
        } else {
            return nil
        }
        let picture = try MappedFile.withBytes(of: descriptor) { bytes throws(ContainerError) in
            try FrameDecoder.decode(bytes, format: format, index: 0, width: size.0, height: size.1)
        }
        return StillPicture(picture: picture, orientation: orientation, fromThumbnail: false)
    }
}
