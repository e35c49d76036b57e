import CImageCodecs
import MediaContainers

/// WebP, GIF, TIFF and JPEG pictures decoded by their field libraries (libwebp, giflib, libtiff,
/// libjpeg-turbo), each
/// in a child process of its own, bounded as ``HEIFDecoder``'s are: a file that crashes a
/// library, makes it loop or allocate without end costs that picture, never the caller.
///
/// A frame of an animation comes composed on its canvas as the frames before it leave it (each
/// frame's disposal, blending and transparency), as Apple's ImageIO gives an animated GIF's or
/// WebP's frames; a TIFF's page comes as stored, its orientation not applied.
public enum FrameDecoder {
    public enum Format: Sendable {
        case webp, gif, tiff, jpeg

        var library: String {
            switch self {
            case .webp: "libwebp"
            case .gif: "giflib"
            case .tiff: "libtiff"
            case .jpeg: "libjpeg"
            }
        }

        var code: gk_image_format {
            switch self {
            case .webp: GK_IMAGE_FORMAT_WEBP
            case .gif: GK_IMAGE_FORMAT_GIF
            case .tiff: GK_IMAGE_FORMAT_TIFF
            case .jpeg: GK_IMAGE_FORMAT_JPEG
            }
        }
    }

    /// The longest one picture may take (a frame of an animation decodes those before it too).
    public static let timeout = 60.0

    /// Picture `index` (a frame, or a TIFF's page) of the `format` file `bytes`, which its header
    /// says is `width × height` (an animation's canvas), within `memoryLimit` bytes (absent: 24
    /// a pixel and 256 MiB) and `timeout` seconds (absent: ``timeout``). Throws naming what went
    /// wrong: the library's own reason when it refuses the file, the signal when it crashed, the
    /// limit when it ran too long.
    public static func decode(_ bytes: UnsafeRawBufferPointer, format: Format, index: Int, width: Int, height: Int,
                              memoryLimit: UInt64? = nil, timeout: Double? = nil) throws(ContainerError) -> DecodedPicture {
        guard width > 0, height > 0, width <= FrameSizeLimit.side, height <= FrameSizeLimit.side else {
            throw ContainerError("a picture of \(width) × \(height), outside the 1 to \(FrameSizeLimit.side) pixels a side decoded")
        }
        guard index >= 0, index <= Int(UInt32.max) else { throw ContainerError("no picture \(index)") }
        let seconds = timeout ?? Self.timeout
        let limit = memoryLimit ?? DecodedPicture.memoryLimit(width: width, height: height)
        return try DecodedPicture.decode(width: width, height: height, library: format.library,
                                         stated: "its header says \(width) × \(height)", limit: limit, seconds: seconds) { memory, result in
            gk_image_decode_frame(format.code, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, UInt32(index),
                                  Int32(width), Int32(height), memory, limit, DecodedPicture.milliseconds(seconds), &result)
        }
    }
}
