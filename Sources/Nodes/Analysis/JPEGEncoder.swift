import CImageCodecs
import Glibc

/// Baseline JPEG (JFIF, 8-bit, no chroma subsampling) of a BGRA picture: the thumbnails' second
/// format beside ``PNGEncoder``, so a picture becomes a file without a pipeline of its own
/// (GStreamer's `jpegenc` would need one per picture). Written by libjpeg-turbo (CImageCodecs), the field's
/// own encoder, which reads BGRA as it is: the 12 MP photo job's encoding and copies take 0.27 s
/// where they took 1.38 s with the Swift encoder this replaced (BENCHMARKS.md, "Photos").
///
/// `quality` (1...100) is libjpeg's (`-quality`; ffmpeg's `-q:v` the other way round): 50 is the
/// standard's tables as printed, 100 all ones. Chroma is kept at full resolution (4:4:4):
/// thumbnails are small, and the edges of drawn text and graphics stay clean.
package struct JPEGEncoder {
    package let quality: Int

    package init(quality: Int) {
        self.quality = min(100, max(1, quality))
    }

    /// The JPEG file of a `width` × `height` BGRA picture whose rows start `bytesPerRow` apart.
    package func encode(bgra: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int) -> [UInt8] {
        precondition(width > 0 && height > 0 && width <= 65_535 && height <= 65_535)
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var error = [CChar](repeating: 0, count: 256)
        let done = gk_jpeg_encode_bgra(bgra.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(height), bytesPerRow,
                                       Int32(quality), &out, &size, &error, error.count)
        // libjpeg fails only where memory does (the sizes are checked above): as a Swift
        // allocation that fails would, it stops the process, naming the reason.
        guard done != 0, let out else { fatalError("libjpeg-turbo could not encode a \(width) × \(height) picture: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))") }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }
}
