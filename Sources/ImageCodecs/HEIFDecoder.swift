import CImageCodecs
import MediaContainers

/// HEIF and AVIF pictures decoded by libheif, each in a child process of its own (forked, not
/// exec'd): a file that crashes libheif or the HEVC and AV1 decoders under it, makes it loop or
/// makes it allocate without end costs that one picture and is reported as such, never the
/// caller's process. The child's private memory is bounded (``memoryLimit(width:height:)``) and
/// its time too (``timeout``); it writes the picture straight into memory the caller then owns,
/// so nothing is copied back.
///
/// The picture comes out as stored: its `irot`, `imir` and `clap` are not applied (the caller
/// applies the orientation, which ``HEIFFile`` reads), as Apple's `CGImageSourceCreateImageAtIndex`
/// gives a picture and its orientation apart. A picture of more than 8 bits is scaled to 8.
public enum HEIFDecoder {
    /// The longest one picture may take to decode: a 48 MP grid takes about 2 s on one core here.
    public static let timeout = 60.0

    /// The private memory a decode may add to what the child inherits (`RLIMIT_DATA`; free heap
    /// the caller's process already held may be reused by the child, so a decode's peak is at
    /// most the caller's size at the fork plus this): 24 bytes a pixel (the
    /// decoder's planes, the RGBA conversion, the tiles of a grid) and 256 MiB for the libraries.
    public static func memoryLimit(width: Int, height: Int) -> UInt64 {
        DecodedPicture.memoryLimit(width: width, height: height)
    }

    /// libheif's version here.
    public static var libraryVersion: String { String(cString: gk_heif_version()) }

    /// Picture `image` (an item ID of ``HEIFFile/topLevelImages``) of the HEIF file `bytes`, or
    /// its thumbnail `thumbnail` (an item that refers to it with `thmb`), which its header says
    /// is `width × height` as stored (`ispe`); the part of it `shown` (its clean aperture: absent,
    /// all of it), within `memoryLimit` bytes (absent: ``memoryLimit(width:height:)``) and
    /// `timeout` seconds (absent: ``timeout``). Throws
    /// naming what went wrong: libheif's own reason when it refuses the file, the signal when
    /// the decoder crashed, the limit when it ran too long.
    public static func decode(_ bytes: UnsafeRawBufferPointer, image: UInt32, thumbnail: UInt32 = 0,
                              width: Int, height: Int, shown: HEIFFile.Rect? = nil,
                              memoryLimit: UInt64? = nil, timeout: Double? = nil) throws(ContainerError) -> DecodedPicture {
        let seconds = timeout ?? Self.timeout
        let milliseconds = DecodedPicture.milliseconds(seconds)
        let limit = memoryLimit ?? Self.memoryLimit(width: width, height: height)
        guard width > 0, height > 0, width <= FrameSizeLimit.side, height <= FrameSizeLimit.side else {
            throw ContainerError("a picture of \(width) × \(height), outside the 1 to \(FrameSizeLimit.side) pixels a side decoded")
        }
        let part = shown ?? HEIFFile.Rect(x: 0, y: 0, width: width, height: height)
        guard part.x >= 0, part.y >= 0, part.width >= 1, part.height >= 1, part.x <= width - part.width, part.y <= height - part.height else {
            throw ContainerError("its shown part (\(part.width) × \(part.height) at \(part.x), \(part.y)) lies outside its \(width) × \(height) picture")
        }
        return try DecodedPicture.decode(width: part.width, height: part.height, library: "libheif", stated: "its header (ispe) says \(width) × \(height)",
                                         limit: limit, seconds: seconds) { memory, result in
            gk_heif_decode(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, image, thumbnail,
                           Int32(width), Int32(height), Int32(part.x), Int32(part.y), Int32(part.width), Int32(part.height),
                           memory, limit, milliseconds, &result)
        }
    }
}
