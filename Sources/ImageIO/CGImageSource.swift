import CoreVideo
import Glibc
import MediaContainers
@_spi(Engine) import GraphKitCore
import GraphKitRuntime
import Nodes

// ImageIO's image reading (CGImageSource.h) for JPEG, PNG, HEIC, AVIF, WebP, GIF and TIFF: a source made from a
// URL or a CFData, what its header says (type, count, properties) read from its bytes without
// decoding, and its picture decoded: a PNG through the engine, a graph source.file →
// decode (BGRA) → sink.app, where GStreamer's pngdec decodes (ThumbnailPicker.makeRun,
// the graph the image generator decodes a frame with); HEIC and AVIF by the image codecs
// (HEIFImages.swift); WebP, GIF, TIFF and JPEG by the image codecs too (FrameImages.swift).

/// Pictures to read, as ImageIO's `CGImageSource`: a JPEG, PNG, HEIC, AVIF, WebP, GIF or TIFF
/// file or bytes (an animation's frames and a TIFF's pages are its pictures).
///
/// Where it differs from Apple's: these seven formats only (another file makes a source of
/// no image: ``CGImageSourceGetCount(_:)`` 0, ``CGImageSourceGetType(_:)`` nil, as Apple's for
/// data it cannot read); no incremental sources; images are 8-bit BGRA (`CGImage` here), decoded
/// on each call. Memory is bounded by what the file holds: what its header claims (a HEIF file's
/// `meta` box) is read before anything is decoded, and a picture larger than 16384 pixels a side,
/// or larger than the file's bytes could encode at the format's highest compression (a 70-byte
/// PNG claiming 16000 × 16000), is refused (a source of no image, ``CGImageSourceGetStatus(_:)``
/// `.statusInvalidData`), so a small file cannot make the decoder allocate gigabytes.
public final class CGImageSource: Sendable {
    enum Origin: Sendable {
        case file(String)
        case bytes([UInt8])
    }

    let origin: Origin
    /// What the bytes say of each picture (a JPEG or PNG holds one; a HEIF file, a GIF, a WebP or a TIFF one or more, the
    /// primary first), or why they are not pictures GraphKit reads.
    let images: Result<[ImageFileHeader], ImageFileHeader.Refusal>
    let byteCount: Int

    init(origin: Origin, images: Result<[ImageFileHeader], ImageFileHeader.Refusal>, byteCount: Int) {
        self.origin = origin
        self.images = images
        self.byteCount = byteCount
    }

    /// The source of the picture whose bytes are `source` (`count` of them): a JPEG's or PNG's
    /// header read by `read(offset, count)`, a HEIF file's `meta` box through `source`.
    static func make(_ origin: Origin, _ source: some ByteSource) -> CGImageSource {
        let size = Int(clamping: source.count)
        let read = { (offset: Int, count: Int) -> [UInt8] in
            guard offset >= 0, count > 0 else { return [] }
            return (try? source.read(at: UInt64(offset), count: count)) ?? []
        }
        let images: Result<[ImageFileHeader], ImageFileHeader.Refusal>
        let start = read(0, 64)
        if HEIFFile.isHEIF(start) {
            images = ImageFileHeader.heif(source)
        } else if WebPFile.isWebP(start) {
            images = ImageFileHeader.webp(source)
        } else if GIFFile.isGIF(start) {
            images = ImageFileHeader.gif(source)
        } else if TIFFFile.isTIFF(start) {
            images = ImageFileHeader.tiff(source)
        } else {
            images = ImageFileHeader.read(read).flatMap { $0.checked(againstFileSize: size) }.map { [$0] }
        }
        return CGImageSource(origin: origin, images: images, byteCount: size)
    }

    /// The first picture's header, or why there is none.
    var parsed: Result<ImageFileHeader, ImageFileHeader.Refusal> {
        images.flatMap { $0.first.map { .success($0) } ?? .failure(.notAnImage) }
    }

    /// The header of the picture at `index`.
    func header(at index: Int) -> ImageFileHeader? {
        guard case .success(let headers) = images, headers.indices.contains(index) else { return nil }
        return headers[index]
    }

    var count: Int { (try? images.get().count) ?? 0 }

    var name: String {
        switch origin {
        case .file(let path): path
        case .bytes(let b): "\(b.count) bytes of data"
        }
    }

    // MARK: Decoding

    /// The picture, decoded to BGRA at its full size; nil (the reason logged) when it cannot be,
    /// or when the decoder gives another size than the header said.
    func decoded(at index: Int, caller: String) -> SampleBuffer? {
        guard let header = header(at: index) else {
            if case .failure(let refusal) = parsed { log("\(caller): \(name) is \(refusal.description)") }
            else { log("\(caller): no image at index \(index)") }
            return nil
        }
        switch header.kind {
        case .heic, .avif: return decodedHEIF(header, thumbnail: nil, caller: caller)
        case .webp, .gif, .tiff, .jpeg: return decodedFrame(header, caller: caller)
        case .png: break
        }
        do throws(GraphError) {
            let frame = try withFile { (path) throws(GraphError) in try ThumbnailPicker.firstFrame(of: path) }
            guard case .rawVideo(let v)? = frame.format, v.width == header.width, v.height == header.height else {
                log("\(caller): \(name) decoded as \(frame.format?.description ?? "nothing") where its header says \(header.width) × \(header.height)")
                return nil
            }
            return frame
        } catch {
            log("\(caller): cannot decode \(name): \(error.message)")
            return nil
        }
    }

    /// `body` with a path GStreamer's filesrc can read: the file's own, or for bytes, an
    /// unnamed file holding them (`/proc/self/fd/N`), gone when closed.
    private func withFile<T>(_ body: (String) throws(GraphError) -> T) throws(GraphError) -> T {
        switch origin {
        case .file(let path):
            return try body(path)
        case .bytes(let bytes):
            let folder = FileManager.default.temporaryDirectory.path
            // O_TMPFILE (Glibc's module does not export it): a file with no name in the folder.
            var fd = open(folder, 0o20000000 | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
            if fd < 0 {
                let name = "\(folder)/.graphkit-imageio-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
                fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
                if fd >= 0 { unlink(name) }
            }
            guard fd >= 0 else { throw GraphError(.inputUnreadable, "cannot hold the image's bytes in a file in \(folder): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw GraphError(.inputUnreadable, "cannot hold the image's bytes in a file in \(folder): \(String(cString: strerror(errno)))") }
                written += n
            }
            return try body("/proc/self/fd/\(fd)")
        }
    }


    // MARK: Properties

    func properties(at index: Int) -> [String: Any]? {
        guard let header = header(at: index) else { return nil }
        var p: [String: Any] = [
            kCGImagePropertyPixelWidth: NSNumber(value: header.width),
            kCGImagePropertyPixelHeight: NSNumber(value: header.height),
            kCGImagePropertyOrientation: NSNumber(value: header.orientation.rawValue),
            kCGImagePropertyDepth: NSNumber(value: header.depth),
            kCGImagePropertyHasAlpha: NSNumber(value: header.hasAlpha),
            kCGImagePropertyColorModel: header.components <= 2 ? kCGImagePropertyColorModelGray
                : header.components == 4 && header.kind == .jpeg ? kCGImagePropertyColorModelCMYK : kCGImagePropertyColorModelRGB,
            kCGImagePropertyTIFFDictionary: [kCGImagePropertyTIFFOrientation: NSNumber(value: header.orientation.rawValue)] as [String: Any],
        ]
        if let exif = header.exif {
            for (key, value) in exifDictionaries(exif) {
                // {TIFF} keeps the orientation the picture shows with when the EXIF names none.
                if key == kCGImagePropertyTIFFDictionary, var tiff = value as? [String: Any] {
                    if tiff[kCGImagePropertyTIFFOrientation] == nil { tiff[kCGImagePropertyTIFFOrientation] = NSNumber(value: header.orientation.rawValue) }
                    p[key] = tiff
                } else {
                    p[key] = value
                }
            }
        }
        switch header.kind {
        case .jpeg: p[kCGImagePropertyJFIFDictionary] = ["IsProgressive": NSNumber(value: header.progressive)] as [String: Any]
        case .png: p[kCGImagePropertyPNGDictionary] = [kCGImagePropertyPNGInterlaceType: NSNumber(value: header.interlaced ? 1 : 0)] as [String: Any]
        case .heic, .avif:
            if let name = header.profileName { p[kCGImagePropertyProfileName] = name }
        case .gif:
            p[kCGImagePropertyIsIndexed] = NSNumber(value: true)
        case .webp, .tiff:
            break
        }
        if let (key, frame) = header.frameDictionary { p[key] = frame }
        return p
    }
}

// MARK: Apple's functions

/// A source of the file at `url`; nil when `url` is not a file URL or the file cannot be opened.
/// Only its header is read here (a JPEG's segments up to its frame header, a PNG's chunks up to
/// its data, a HEIF file's `meta` box); a file that is none of the four, or claims more than
/// 16384 pixels a side or more than its size can hold, gives a source of no image.
public func CGImageSourceCreateWithURL(_ url: CFURL, _ options: CFDictionary?) -> CGImageSource? {
    guard url.isFileURL else { return nil }
    let path = url.path
    // Non-blocking: a named pipe at the path must not hang the open (it is refused below).
    let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else {
        log("CGImageSourceCreateWithURL: cannot open \(path): \(String(cString: strerror(errno)))")
        return nil
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
        log("CGImageSourceCreateWithURL: \(path) is not a file")
        return nil
    }
    return CGImageSource.make(.file(path), FileBytes(descriptor: fd))
}

/// A source of the picture in `data` (copied: later changes to a mutable one are not seen).
public func CGImageSourceCreateWithData(_ data: CFData, _ options: CFDictionary?) -> CGImageSource? {
    let bytes = [UInt8](data as Data)
    return CGImageSource.make(.bytes(bytes), MemoryBytes(bytes))
}

/// The number of pictures: 1 for a JPEG, PNG or still WebP GraphKit reads; a HEIF file's
/// top-level images (not its tiles, thumbnails or auxiliary images); an animated GIF's or WebP's
/// frames; a TIFF's pages; 0 for a source of no image.
public func CGImageSourceGetCount(_ isrc: CGImageSource) -> Int {
    isrc.count
}

/// The source's type identifier (`public.jpeg`, `public.png`, `public.heic`, `public.avif`,
/// `org.webmproject.webp`, `com.compuserve.gif`, `public.tiff`), or nil when it is none of them.
public func CGImageSourceGetType(_ isrc: CGImageSource) -> CFString? {
    isrc.header(at: 0)?.kind.identifier
}

/// The index of the main picture: 0 (a HEIF file's primary image comes first).
public func CGImageSourceGetPrimaryImageIndex(_ isrc: CGImageSource) -> Int { 0 }

/// Whether the source is readable: complete, of an unknown type, or invalid (damaged, or larger
/// than GraphKit decodes).
public func CGImageSourceGetStatus(_ isrc: CGImageSource) -> CGImageSourceStatus {
    switch isrc.parsed {
    case .success: .statusComplete
    case .failure(.notAnImage): .statusUnknownType
    case .failure: .statusInvalidData
    }
}

public func CGImageSourceGetStatusAtIndex(_ isrc: CGImageSource, _ index: Int) -> CGImageSourceStatus {
    isrc.header(at: index) != nil ? .statusComplete : index == 0 ? CGImageSourceGetStatus(isrc) : .statusInvalidData
}

/// The picture types a source reads: `public.jpeg`, `public.png`, `public.heic`, `public.avif`,
/// `org.webmproject.webp`, `com.compuserve.gif`, `public.tiff`.
public func CGImageSourceCopyTypeIdentifiers() -> CFArray {
    CGImageDestination.typeIdentifiers + [UTType.heic.identifier, UTType.avif.identifier, UTType.webP.identifier, UTType.gif.identifier,
                                          UTType.tiff.identifier]
}

/// The file's properties: its size (``kCGImagePropertyFileSize``); for an animated GIF or WebP,
/// `{GIF}` or `{WebP}` with its loop count (where the file says one), canvas and each frame's
/// delays (`FrameInfo`).
public func CGImageSourceCopyProperties(_ isrc: CGImageSource, _ options: CFDictionary?) -> CFDictionary? {
    var p: [String: Any] = [kCGImagePropertyFileSize: NSNumber(value: isrc.byteCount)]
    if let (key, animation) = isrc.header(at: 0)?.fileDictionary { p[key] = animation }
    return p
}

/// The picture's properties, from its header (nothing is decoded): ``kCGImagePropertyPixelWidth``,
/// ``kCGImagePropertyPixelHeight``, ``kCGImagePropertyOrientation`` (1 when the file says none),
/// ``kCGImagePropertyDepth``, ``kCGImagePropertyHasAlpha``, ``kCGImagePropertyColorModel``, and
/// `{TIFF}` with the orientation; numbers are NSNumbers, as CFNumbers arrive on Apple's platforms
/// (`as? Int`, `as? UInt32`, `as? Double` read them; `as? CGFloat` does not on Linux). Nil for
/// an index past the last picture or a source of no image; an animation's frame adds `{GIF}` or `{WebP}` with its delays.
public func CGImageSourceCopyPropertiesAtIndex(_ isrc: CGImageSource, _ index: Int, _ options: CFDictionary?) -> CFDictionary? {
    isrc.properties(at: index)
}

/// The picture at `index`, decoded (BGRA, as stored: its orientation not applied, as Apple's);
/// nil when there is none, it cannot be decoded (a truncated or damaged file the decoder
/// refuses), or it is larger than GraphKit decodes. Blocks while it decodes.
public func CGImageSourceCreateImageAtIndex(_ isrc: CGImageSource, _ index: Int, _ options: CFDictionary?) -> CGImage? {
    guard let frame = isrc.decoded(at: index, caller: "CGImageSourceCreateImageAtIndex") else { return nil }
    return CGImage(bgra: frame, straightAlpha: isrc.header(at: index)?.hasAlpha == true)
}

/// A thumbnail of the picture at `index`: the file's own (a HEIF image's thumbnail item) unless
/// ``kCGImageSourceCreateThumbnailFromImageAlways`` is true, or
/// ``kCGImageSourceCreateThumbnailFromImageIfAbsent`` is and the file's own is smaller than the
/// size asked; else made from the picture when either option is true (without them, a file with
/// no thumbnail of its own gives nil, as Apple's). Scaled down to fit
/// ``kCGImageSourceThumbnailMaxPixelSize`` (each pixel the mean of those it covers; never scaled
/// up; absent, the picture's size), and turned upright by its orientation with
/// ``kCGImageSourceCreateThumbnailWithTransform``.
public func CGImageSourceCreateThumbnailAtIndex(_ isrc: CGImageSource, _ index: Int, _ options: CFDictionary?) -> CGImage? {
    let options = options ?? [:]
    let always = settingsBool(options[kCGImageSourceCreateThumbnailFromImageAlways]) == true
    let ifAbsent = settingsBool(options[kCGImageSourceCreateThumbnailFromImageIfAbsent]) == true
    var side = 0
    if let largest = settingsNumber(options[kCGImageSourceThumbnailMaxPixelSize]), largest.isFinite, largest >= 1 {
        side = Int(min(largest, Double(ImageFileHeader.maximumDimension)))
    }
    let caller = "CGImageSourceCreateThumbnailAtIndex"
    let header = isrc.header(at: index)
    var own = always ? nil : header?.thumbnail
    if ifAbsent, let thumbnail = own, side == 0 || max(thumbnail.width, thumbnail.height) < side { own = nil }
    guard own != nil || always || ifAbsent else {
        log("\(caller): \(isrc.name) holds no thumbnail of its own; set kCGImageSourceCreateThumbnailFromImageAlways to make one from the picture")
        return nil
    }
    let decoded = own != nil ? header.flatMap { isrc.decodedHEIF($0, thumbnail: own, caller: caller) } : isrc.decoded(at: index, caller: caller)
    guard let header, let frame = decoded else { return nil }
    let transform = settingsBool(options[kCGImageSourceCreateThumbnailWithTransform]) == true
    do throws(GraphError) {
        // Scaled, then turned: the box is square, so the order does not change the size.
        var picture = try ThumbnailPicker.packed(frame, fittingIn: (side, side), at: .zero)
        if transform { picture = try ThumbnailPicker.turned(picture, orientation: Int((own?.orientation ?? header.orientation).rawValue)) }
        return CGImage(bgra: picture, straightAlpha: header.hasAlpha)
    } catch {
        log("\(caller): \(error.message)")
        return nil
    }
}
