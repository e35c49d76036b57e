import CoreVideo
import Glibc
@_spi(Engine) import GraphKitCore
import Nodes

// ImageIO's image writing (CGImageDestination.h) for JPEG and PNG, the two picture types a
// thumbnail service writes: a destination made for a URL or a CFMutableData and a type
// identifier, an image added with its properties (quality, orientation), and Finalize, which
// writes everything or nothing. The encoders are GraphKit's own (Nodes: JPEGEncoder, PNGEncoder,
// as the thumbnails node writes its pictures).

/// Where pictures are written, as ImageIO's `CGImageDestination`: a file (by the engine's rule
/// for outputs) or a `CFMutableData`, of one type, `public.jpeg` or `public.png`.
///
/// Where it differs from Apple's: JPEG and PNG only (``CGImageDestinationCopyTypeIdentifiers()``);
/// one image a destination, as those formats hold; nothing is written before
/// ``CGImageDestinationFinalize(_:)``, which reports a failure as `false` and says why on the
/// standard error, as ImageIO logs it.
public final class CGImageDestination: Sendable {
    enum Target {
        case file(URL)
        case data(CFMutableData)
    }

    /// Unchecked: the CFMutableData (NSMutableData, not Sendable) is written only by Finalize,
    /// under the state's lock, as ImageIO writes it on the caller's thread.
    private struct Unchecked<T>: @unchecked Sendable { var value: T }

    private let target: Unchecked<Target>
    let kind: ImageFileHeader.Kind
    let capacity: Int
    private struct State {
        var images: [(image: CGImage, properties: [String: Any])] = []
        var properties: [String: Any] = [:]
        var finalized = false
    }
    private let state: Guarded<Unchecked<State>>

    init(target: Target, kind: ImageFileHeader.Kind, capacity: Int, options: [String: Any]?) {
        self.target = Unchecked(value: target)
        self.kind = kind
        self.capacity = capacity
        state = Guarded(Unchecked(value: State(properties: options ?? [:])))
    }

    /// The picture types a destination writes, by identifier.
    static let typeIdentifiers: [String] = [UTType.jpeg.identifier, UTType.png.identifier]

    static func kind(of type: String) -> ImageFileHeader.Kind? {
        switch type.lowercased() {
        case "public.jpeg": .jpeg
        case "public.png": .png
        default: nil
        }
    }

    fileprivate func add(_ image: CGImage, _ properties: [String: Any]?) {
        state.withLock { s in
            guard !s.value.finalized else { return log("CGImageDestinationAddImage: the destination is already finalized") }
            guard s.value.images.count < capacity else {
                return log("CGImageDestinationAddImage: the destination was made for \(capacity) image(s); this one is not added")
            }
            s.value.images.append((image, properties ?? [:]))
        }
    }

    fileprivate func setProperties(_ properties: [String: Any]?) {
        state.withLock { s in s.value.properties.merge(properties ?? [:]) { _, new in new } }
    }

    fileprivate func finalize() -> Bool {
        state.withLock { s -> Bool in
            guard !s.value.finalized else {
                log("CGImageDestinationFinalize: the destination is already finalized")
                return false
            }
            s.value.finalized = true
            guard let first = s.value.images.first else {
                log("CGImageDestinationFinalize: no image was added")
                return false
            }
            let properties = s.value.properties.merging(first.properties) { _, image in image }
            let bytes: [UInt8]
            do throws(GraphError) {
                bytes = try Self.encode(first.image, as: kind, properties)
            } catch {
                log("CGImageDestinationFinalize: cannot encode the image as \(kind.identifier): \(error.message)")
                return false
            }
            switch target.value {
            case .data(let data):
                bytes.withUnsafeBytes { data.append($0.baseAddress!, length: $0.count) }
                return true
            case .file(let url):
                do throws(GraphError) {
                    try Self.write(bytes, to: url)
                    return true
                } catch {
                    log("CGImageDestinationFinalize: \(error.message)")
                    return false
                }
            }
        }
    }

    // MARK: Encoding

    /// The file's bytes: the picture (scaled down to ``kCGImageDestinationImageMaxPixelSize``
    /// when set) as a JPEG of the quality asked or a PNG, with its orientation when one is given.
    static func encode(_ image: CGImage, as kind: ImageFileHeader.Kind, _ properties: [String: Any]) throws(GraphError) -> [UInt8] {
        var picture = try packedBGRA(image)
        if let largest = settingsNumber(properties[kCGImageDestinationImageMaxPixelSize]), largest >= 1, largest.isFinite {
            let side = Int(min(largest, Double(ImageFileHeader.maximumDimension)))
            picture = try ThumbnailPicker.packed(picture, fittingIn: (side, side), at: .zero)
        }
        let orientation = orientation(in: properties)
        var bytes: [UInt8] = []
        switch kind {
        case .jpeg:
            let quality = settingsNumber(properties[kCGImageDestinationLossyCompressionQuality]).map(jpegQuality) ?? 75
            try ThumbnailPicker.encode(picture, as: .jpeg, quality: quality) { bytes += $0 }
            // EXIF's APP1 after JFIF's APP0 (20 bytes in: SOI, then APP0 of 16 + 2).
            if let orientation, bytes.count > 20, bytes[2] == 0xFF, bytes[3] == 0xE0 {
                bytes.insert(contentsOf: ImageFileHeader.jpegExifSegment(orientation: orientation), at: 20)
            }
        case .png:
            var first = true
            try ThumbnailPicker.encode(picture, as: .png) { chunk in
                bytes += chunk
                // The signature and IHDR come first, then the orientation's eXIf chunk.
                if first, let orientation { bytes += ImageFileHeader.pngExifChunk(orientation: orientation) }
                first = false
            }
        case .heic, .avif, .webp, .gif, .tiff:
            throw GraphError(.runFailed, "GraphKit writes \(typeIdentifiers.joined(separator: ", ")), not \(kind.identifier)")
        }
        return bytes
    }

    /// ImageIO's quality 0…1 on libjpeg's scale 1…100.
    static func jpegQuality(_ q: Double) -> Int {
        guard q.isFinite else { return 75 }
        return max(1, min(100, Int((q * 100).rounded())))
    }

    /// The orientation given by ``kCGImagePropertyOrientation``, or inside `{TIFF}`.
    static func orientation(in properties: [String: Any]) -> CGImagePropertyOrientation? {
        let value = properties[kCGImagePropertyOrientation] ?? (properties[kCGImagePropertyTIFFDictionary] as? [String: Any])?[kCGImagePropertyTIFFOrientation]
        if let o = value as? CGImagePropertyOrientation { return o }
        return settingsInteger(value).flatMap { CGImagePropertyOrientation(rawValue: UInt32(clamping: $0)) }
    }

    /// The image as a BGRA SampleBuffer with packed rows, alpha 255 where its layout has none
    /// (a generator's `noneSkipFirst`, whose fourth byte means nothing); any layout a CGImage holds.
    static func packedBGRA(_ image: CGImage) throws(GraphError) -> SampleBuffer {
        guard let pixels = image.packedBGRA() else {
            throw GraphError(.usage, "the image is not a complete 8-bit bitmap")
        }
        let format = MediaFormat.VideoFormat(pixelFormat: .bgra, width: image.width, height: image.height, frameRate: FrameRate(1))
        return SampleBuffer(format: .rawVideo(format), bytes: pixels, presentationTime: .zero)
    }

    // MARK: Files

    /// Writes `bytes` at `url` by the engine's rule for outputs (``OutputFile``: a temporary file
    /// beside it, renamed over the name when complete, so an existing file is replaced only by a
    /// complete one and a failure leaves nothing under the name). Unlike GraphKit's graphs, and as
    /// ImageIO does, a missing folder is not made: it is an error.
    static func write(_ bytes: [UInt8], to url: URL) throws(GraphError) {
        let path = url.path
        let folder = url.deletingLastPathComponent().path
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            let reason = errno == ENOENT || info.st_mode == 0 ? "does not exist" : "is not a folder"
            throw GraphError(.outputUnwritable, at: path, "cannot write \(path): its folder \(folder) \(reason) (ImageIO creates no folders)")
        }
        let file = OutputFile(path: path, location: path, node: "CGImageDestination")
        do throws(GraphError) {
            try file.prepare()
            try file.write(bytes)
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }
}

/// ImageIO's message on the standard error, as it logs its failures on Apple's platforms.
func log(_ message: String) {
    let line = Array("ImageIO: \(message)\n".utf8)
    _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
}

// MARK: Apple's functions

/// A destination writing a picture of `type` (`public.jpeg`, `public.png`: `UTType.jpeg.identifier`,
/// `kUTTypeJPEG`) to the file at `url`, once finalized; nil for another type, a URL that is not
/// a file URL, or a `count` below 1. `options` are file properties, as
/// ``CGImageDestinationSetProperties(_:_:)`` sets them.
public func CGImageDestinationCreateWithURL(_ url: CFURL, _ type: CFString, _ count: Int, _ options: CFDictionary?) -> CGImageDestination? {
    guard let kind = CGImageDestination.kind(of: type) else {
        log("CGImageDestinationCreateWithURL: unsupported type \(type) (GraphKit writes \(CGImageDestination.typeIdentifiers.joined(separator: ", ")))")
        return nil
    }
    guard url.isFileURL, count >= 1 else { return nil }
    return CGImageDestination(target: .file(url), kind: kind, capacity: count, options: options)
}

/// A destination appending a picture of `type` to `data` (an `NSMutableData`, as Apple code
/// passes it) once finalized; nil as ``CGImageDestinationCreateWithURL(_:_:_:_:)``.
public func CGImageDestinationCreateWithData(_ data: CFMutableData, _ type: CFString, _ count: Int, _ options: CFDictionary?) -> CGImageDestination? {
    guard let kind = CGImageDestination.kind(of: type) else {
        log("CGImageDestinationCreateWithData: unsupported type \(type) (GraphKit writes \(CGImageDestination.typeIdentifiers.joined(separator: ", ")))")
        return nil
    }
    guard count >= 1 else { return nil }
    return CGImageDestination(target: .data(data), kind: kind, capacity: count, options: options)
}

/// Adds `image` with its `properties`: ``kCGImageDestinationLossyCompressionQuality`` (JPEG,
/// 0.0…1.0), ``kCGImagePropertyOrientation`` (1…8, written as EXIF: a JPEG's APP1 segment, a PNG's
/// eXIf chunk), ``kCGImageDestinationImageMaxPixelSize``. Images past the destination's count are
/// not added (logged), as ImageIO's.
public func CGImageDestinationAddImage(_ idst: CGImageDestination, _ image: CGImage, _ properties: CFDictionary?) {
    idst.add(image, properties)
}

/// Adds the picture at `index` of `isrc` (decoded; nothing is added when it cannot be), with its
/// orientation unless `properties` give another.
public func CGImageDestinationAddImageFromSource(_ idst: CGImageDestination, _ isrc: CGImageSource, _ index: Int, _ properties: CFDictionary?) {
    guard let image = CGImageSourceCreateImageAtIndex(isrc, index, nil) else {
        return log("CGImageDestinationAddImageFromSource: the source has no picture at \(index)")
    }
    var merged: [String: Any] = [:]
    if let header = isrc.header(at: index), header.orientation != .up { merged[kCGImagePropertyOrientation] = Int(header.orientation.rawValue) }
    merged.merge(properties ?? [:]) { _, given in given }
    idst.add(image, merged)
}

/// Properties for the whole file (under each image's own): the quality and orientation keys.
public func CGImageDestinationSetProperties(_ idst: CGImageDestination, _ properties: CFDictionary?) {
    idst.setProperties(properties)
}

/// Encodes the image and writes it: into the data, or into a temporary file beside the URL's
/// name renamed over it when complete. False, with the reason on the standard error, when no
/// image was added, the destination was finalized already, or the file cannot be written (its
/// folder missing, its name a folder, no permission, a full disk): then nothing is left under
/// the name, and a file that was there is as it was. As every GraphKit output, a symbolic link
/// at the name is refused (`OutputFile.followsSymbolicLinks` lets it be written through), where
/// Apple's writes through it.
public func CGImageDestinationFinalize(_ idst: CGImageDestination) -> Bool {
    idst.finalize()
}

/// The types a destination writes: `public.jpeg` and `public.png`.
public func CGImageDestinationCopyTypeIdentifiers() -> CFArray {
    CGImageDestination.typeIdentifiers
}
