import CImageCodecs
import Glibc
import MediaContainers

/// A decoded picture: 8-bit BGRA, straight (not premultiplied) alpha, rows `width × 4` bytes
/// apart, in memory this object owns (shared with the process that decoded it, unmapped when
/// it goes).
public final class DecodedPicture: @unchecked Sendable {
    public let width: Int
    public let height: Int
    public var bytesPerRow: Int { width * 4 }
    /// The picture's bytes: `height × bytesPerRow`.
    public let memory: UnsafeMutableRawBufferPointer
    /// Whether libheif says the picture has an alpha channel (absent, every pixel's alpha is 255).
    /// The other decoders leave it false: the file's structure says it (``WebPFile``,
    /// ``GIFFile``, ``TIFFFile``), and their pixels carry it either way.
    public let hasAlpha: Bool

    init(width: Int, height: Int, memory: UnsafeMutableRawBufferPointer, hasAlpha: Bool) {
        self.width = width
        self.height = height
        self.memory = memory
        self.hasAlpha = hasAlpha
    }

    deinit { gk_image_shared_free(memory.baseAddress, memory.count) }
}

extension DecodedPicture {
    /// The private memory a decode may add to what its child inherits: 24 bytes a pixel (the
    /// decoder's planes, the conversion, a grid's tiles or an animation's canvas) and 256 MiB for
    /// the libraries.
    static func memoryLimit(width: Int, height: Int) -> UInt64 {
        UInt64(width) * UInt64(height) * 24 + (256 << 20)
    }

    /// `seconds` as the child's bound in milliseconds: at least 1, at most a day.
    static func milliseconds(_ seconds: Double) -> Int32 {
        Int32(seconds.isFinite ? max(1, min(seconds * 1000, 86_400_000)) : 86_400_000)
    }

    /// A picture of `width` × `height` (as `stated` puts it, for the message when it decodes to
    /// another size) decoded by `call` (which runs `library` in a child process
    /// and writes into the shared memory it is given, and its outcome into the result), or the
    /// error that says why not.
    static func decode(width: Int, height: Int, library: String, stated: String, limit: UInt64, seconds: Double,
                       _ call: (UnsafeMutablePointer<UInt8>, inout gk_image_result) -> Void) throws(ContainerError) -> DecodedPicture {
        let size = width * height * 4
        guard let memory = gk_image_shared_alloc(size) else {
            throw ContainerError("no memory for a picture of \(width) × \(height): \(String(cString: strerror(errno)))")
        }
        var kept = false
        defer { if !kept { gk_image_shared_free(memory, size) } }
        var result = gk_image_result()
        call(memory.assumingMemoryBound(to: UInt8.self), &result)
        let message = withUnsafeBytes(of: result.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        switch result.status {
        case GK_IMAGE_DECODED:
            kept = true
            return DecodedPicture(width: width, height: height, memory: UnsafeMutableRawBufferPointer(start: memory, count: size),
                                  hasAlpha: result.has_alpha != 0)
        case GK_IMAGE_OTHER_SIZE:
            throw ContainerError("the picture decodes as \(result.width) × \(result.height), where \(stated)")
        case GK_IMAGE_CRASHED:
            throw ContainerError(result.signal != 0
                ? "\(library)'s decoder died of signal \(result.signal) (\(String(cString: strsignal(result.signal)))) on it, in a process of its own"
                    + (result.signal == SIGABRT || result.signal == SIGSEGV ? ", or ran out of the \(limit >> 20) MiB it may use" : "")
                : "\(library)'s decoder ended without a picture")
        case GK_IMAGE_TIMED_OUT:
            throw ContainerError("\(library)'s decoder took more than \(seconds) s on it and was stopped")
        default:
            throw ContainerError(message.isEmpty ? "\(library) refused it" : message)
        }
    }
}
