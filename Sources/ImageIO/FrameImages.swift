import CoreVideo
import Glibc
@_spi(Engine) import GraphKitCore
import ImageCodecs
import MediaContainers

// WebP, GIF and TIFF through ImageIO: each frame of an animation (composed on its canvas, as
// Apple's), or each page of a TIFF, is a picture of the source, described from the file's own
// structure by the container library (WebPFile, GIFFile, TIFFFile) and decoded by the image
// codecs (FrameDecoder: libwebp, giflib and libtiff in a child process; a JPEG's by libjpeg-turbo
// there too, its header read as before).

extension ImageFileHeader {
    /// What an animated file says of itself (Apple's file-level `{GIF}` and `{WebP}`).
    struct Animation: Equatable, Sendable {
        let canvasWidth: Int
        let canvasHeight: Int
        /// Its loop count as the file states it (0: for ever; a GIF's Netscape extension and a
        /// WebP's ANIM chunk count differently, and Apple passes either on as stored); nil when
        /// the file says nothing.
        let loopCount: Int?
        /// Each frame's delay in seconds, as stored.
        let delays: [Double]
        let hasGlobalColourMap: Bool
    }

    /// The headers of a WebP's pictures: one for a still picture, one a frame for an animation.
    static func webp(_ source: some ByteSource) -> Result<[ImageFileHeader], Refusal> {
        let file: WebPFile
        do throws(ContainerError) { file = try WebPFile.read(source) } catch { return .failure(.damaged("a WebP, \(error.reason)")) }
        guard file.width <= maximumDimension, file.height <= maximumDimension else { return .failure(.tooLarge(width: file.width, height: file.height)) }
        let orientation = file.exif.flatMap(orientation) ?? .up
        let animation = file.isAnimated ? Animation(canvasWidth: file.width, canvasHeight: file.height, loopCount: file.loopCount,
                                                    delays: file.frames.map { Double($0.duration) / 1000 }, hasGlobalColourMap: false) : nil
        return .success(file.frames.indices.map { n in
            ImageFileHeader(kind: .webp, width: file.width, height: file.height, orientation: orientation, hasAlpha: file.hasAlpha, depth: 8,
                            components: file.hasAlpha ? 4 : 3, progressive: false, interlaced: false, bitsPerPixel: file.hasAlpha ? 32 : 24,
                            arithmetic: false, item: UInt32(n), exif: file.exif, delay: animation?.delays[n], animation: animation)
        })
    }

    /// The headers of a GIF's frames, each the size of its canvas.
    static func gif(_ source: some ByteSource) -> Result<[ImageFileHeader], Refusal> {
        let file: GIFFile
        do throws(ContainerError) { file = try GIFFile.read(source) } catch { return .failure(.damaged("a GIF, \(error.reason)")) }
        guard file.width <= maximumDimension, file.height <= maximumDimension else { return .failure(.tooLarge(width: file.width, height: file.height)) }
        let alpha = file.frames.contains { $0.transparent }
        let animation = Animation(canvasWidth: file.width, canvasHeight: file.height, loopCount: file.loopCount,
                                  delays: file.frames.map { Double($0.delay) / 100 }, hasGlobalColourMap: file.hasGlobalColourTable)
        return .success(file.frames.indices.map { n in
            ImageFileHeader(kind: .gif, width: file.width, height: file.height, orientation: .up, hasAlpha: alpha, depth: 8,
                            components: alpha ? 4 : 3, progressive: false, interlaced: file.frames[n].interlaced, bitsPerPixel: 8,
                            arithmetic: false, item: UInt32(n), delay: animation.delays[n], animation: animation)
        })
    }

    /// The headers of a TIFF's pages; the first carries the file's tags.
    static func tiff(_ source: some ByteSource) -> Result<[ImageFileHeader], Refusal> {
        let file: TIFFFile
        do throws(ContainerError) { file = try TIFFFile.read(source) } catch { return .failure(.damaged("a TIFF, \(error.reason)")) }
        var headers: [ImageFileHeader] = []
        for (n, page) in file.pages.enumerated() {
            guard page.width > 0, page.height > 0 else { return .failure(.damaged("a TIFF whose page \(n + 1) is \(page.width) × \(page.height)")) }
            guard page.width <= maximumDimension, page.height <= maximumDimension else { return .failure(.tooLarge(width: page.width, height: page.height)) }
            let components = page.photometric <= 1 ? 1 + (page.hasAlpha ? 1 : 0) : page.photometric == 5 ? 4 : 3 + (page.hasAlpha ? 1 : 0)
            headers.append(ImageFileHeader(kind: .tiff, width: page.width, height: page.height,
                                           orientation: CGImagePropertyOrientation(rawValue: UInt32(page.orientation)) ?? .up,
                                           hasAlpha: page.hasAlpha, depth: page.bitsPerSample, components: components, progressive: false,
                                           interlaced: false, bitsPerPixel: page.bitsPerSample * page.samplesPerPixel, arithmetic: false,
                                           item: UInt32(n), exif: n == 0 ? file.tags : nil))
        }
        return .success(headers)
    }

    /// Apple's per-format dictionary of a frame: `{GIF}` or `{WebP}` with its delays (the delay
    /// clamped to at least 0.1 s, as Apple's; the unclamped one as stored).
    var frameDictionary: (String, [String: Any])? {
        guard let delay else { return nil }
        let times: [String: Any] = [kCGImagePropertyGIFDelayTime: NSNumber(value: max(delay, 0.1)),
                                    kCGImagePropertyGIFUnclampedDelayTime: NSNumber(value: delay)]
        switch kind {
        case .gif: return (kCGImagePropertyGIFDictionary, times)
        case .webp: return (kCGImagePropertyWebPDictionary, times)
        default: return nil
        }
    }

    /// Apple's file-level `{GIF}` or `{WebP}` (``CGImageSourceCopyProperties(_:_:)``): the loop
    /// count, the canvas, each frame's delays.
    var fileDictionary: (String, [String: Any])? {
        guard let animation, kind == .gif || kind == .webp else { return nil }
        var d: [String: Any] = [
            kCGImagePropertyGIFCanvasPixelWidth: NSNumber(value: animation.canvasWidth),
            kCGImagePropertyGIFCanvasPixelHeight: NSNumber(value: animation.canvasHeight),
            kCGImagePropertyGIFFrameInfoArray: animation.delays.map { delay -> [String: Any] in
                [kCGImagePropertyGIFDelayTime: NSNumber(value: max(delay, 0.1)), kCGImagePropertyGIFUnclampedDelayTime: NSNumber(value: delay)]
            },
        ]
        if let loops = animation.loopCount { d[kCGImagePropertyGIFLoopCount] = NSNumber(value: loops) }
        if kind == .gif { d[kCGImagePropertyGIFHasGlobalColorMap] = NSNumber(value: animation.hasGlobalColourMap) }
        return (kind == .gif ? kCGImagePropertyGIFDictionary : kCGImagePropertyWebPDictionary, d)
    }
}

extension CGImageSource {
    /// The WebP, GIF, TIFF or JPEG picture of `header`, decoded to BGRA as stored; nil, the reason
    /// logged, when it cannot be.
    func decodedFrame(_ header: ImageFileHeader, caller: String) -> SampleBuffer? {
        let format: FrameDecoder.Format
        switch header.kind {
        case .webp: format = .webp
        case .gif: format = .gif
        case .tiff: format = .tiff
        case .jpeg: format = .jpeg
        default: return nil
        }
        do {
            let picture = try withBytes { bytes throws(ContainerError) in
                try FrameDecoder.decode(bytes, format: format, index: Int(header.item), width: header.width, height: header.height)
            }
            let f = MediaFormat.VideoFormat(pixelFormat: .bgra, width: header.width, height: header.height, frameRate: FrameRate(1))
            return SampleBuffer(format: .rawVideo(f), wrapping: picture.memory, presentationTime: .zero,
                                release: { withExtendedLifetime(picture) {} })
        } catch {
            let what = header.kind == .tiff ? "page" : "frame"
            log("\(caller): cannot decode \(name)\(header.animation != nil || header.kind == .tiff ? " (its \(what) \(header.item + 1))" : ""): \(error)")
            return nil
        }
    }
}
