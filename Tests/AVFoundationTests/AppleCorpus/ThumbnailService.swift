// Written for Apple's platforms: a thumbnail service that cuts a poster frame from a video with
// AVAssetImageGenerator and saves it with ImageIO, naming types with UniformTypeIdentifiers, the
// way server and app code does on a Mac. Compiled unchanged; ImageIOTests calls it.
import AVFoundation
import ImageIO
import UniformTypeIdentifiers

enum ThumbnailError: Error {
    case noDestination(String)
    case finalizeFailed(URL)
    case unreadable(URL)
}

struct SavedThumbnail {
    let url: URL
    let pixelWidth: Int
    let pixelHeight: Int
    let orientation: CGImagePropertyOrientation
    let typeIdentifier: String
}

final class ThumbnailService {
    let maximumSide: CGFloat
    let quality: CGFloat

    init(maximumSide: CGFloat = 320, quality: CGFloat = 0.8) {
        self.maximumSide = maximumSide
        self.quality = quality
    }

    /// The poster frame of `videoURL` at `seconds`, saved beside `outputURL`'s name in the type its
    /// extension names (JPEG by default).
    func savePoster(of videoURL: URL, at seconds: Double, to outputURL: URL) throws -> SavedThumbnail {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: videoURL))
        generator.appliesPreferredTrackTransform = true
        generator.maximumSize = CGSize(width: maximumSide, height: maximumSide)
        let image = try generator.copyCGImage(at: CMTime(seconds: seconds, preferredTimescale: 600), actualTime: nil)

        let type = UTType(filenameExtension: outputURL.pathExtension) ?? .jpeg
        guard type.conforms(to: .image),
              let destination = CGImageDestinationCreateWithURL(outputURL as CFURL, type.identifier as CFString, 1, nil) else {
            throw ThumbnailError.noDestination(type.identifier)
        }
        var options: [CFString: Any] = [kCGImagePropertyOrientation: CGImagePropertyOrientation.up.rawValue]
        if type == .jpeg {
            options[kCGImageDestinationLossyCompressionQuality] = quality
        }
        CGImageDestinationAddImage(destination, image, options as CFDictionary)
        guard CGImageDestinationFinalize(destination) else { throw ThumbnailError.finalizeFailed(outputURL) }
        return try describe(outputURL)
    }

    /// What ImageIO says of a saved picture.
    func describe(_ url: URL) throws -> SavedThumbnail {
        guard let source = CGImageSourceCreateWithURL(url as CFURL, nil),
              let type = CGImageSourceGetType(source),
              let properties = CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as NSDictionary?,
              let width = (properties[kCGImagePropertyPixelWidth] as? NSNumber)?.intValue,
              let height = properties[kCGImagePropertyPixelHeight] as? Int else {
            throw ThumbnailError.unreadable(url)
        }
        let raw = (properties[kCGImagePropertyOrientation] as? NSNumber)?.uint32Value ?? 1
        return SavedThumbnail(url: url, pixelWidth: width, pixelHeight: height,
                              orientation: CGImagePropertyOrientation(rawValue: raw) ?? .up, typeIdentifier: type as String)
    }

    /// A PNG of `image` in memory, for an upload.
    func pngData(of image: CGImage) -> Data? {
        let data = NSMutableData()
        guard let destination = CGImageDestinationCreateWithData(data as CFMutableData, UTType.png.identifier as CFString, 1, nil) else {
            return nil
        }
        CGImageDestinationAddImage(destination, image, nil)
        guard CGImageDestinationFinalize(destination) else { return nil }
        return data as Data
    }

    /// A small version of picture bytes, as a photo pipeline makes one.
    func downsample(_ data: Data, to maxPixelSize: Int) -> CGImage? {
        let sourceOptions = [kCGImageSourceShouldCache: false] as CFDictionary
        guard let source = CGImageSourceCreateWithData(data as CFData, sourceOptions) else { return nil }
        let options: [CFString: Any] = [
            kCGImageSourceCreateThumbnailFromImageAlways: true,
            kCGImageSourceShouldCacheImmediately: true,
            kCGImageSourceCreateThumbnailWithTransform: true,
            kCGImageSourceThumbnailMaxPixelSize: maxPixelSize,
        ]
        return CGImageSourceCreateThumbnailAtIndex(source, 0, options as CFDictionary)
    }
}
