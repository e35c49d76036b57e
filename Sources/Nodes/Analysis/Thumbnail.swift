import Glibc
import GraphKitCore
import GraphKitRuntime
import ImageCodecs
import MediaContainers

/// One thumbnail of any photo or video, the same call for both: what an upload service makes of
/// every file it is given, and what `graphctl thumbnail` runs.
///
/// - A HEIC, AVIF, WebP, GIF, TIFF or JPEG is described by the container library and decoded by the
///   image codecs in a child process (``StillPicture``): its primary image, first frame or first
///   page; a HEIF file's own thumbnail when it is at least the size asked (so the picture is
///   never scaled up from a smaller one); turned upright by its orientation.
/// - A PNG: its header read first (``StillImageHeader``: a claim its bytes cannot hold
///   refused), decoded by GStreamer, turned by its EXIF orientation.
/// - A movie: one picture by seeking (``ThumbnailSession``), the frame at `seconds` (default a
///   tenth of the way in), turned as the movie says it is shown, HDR tone-mapped to SDR.
///
/// The picture is scaled down to fit `side` × `side` (each pixel the mean of those it covers;
/// never up) and written as JPEG or PNG through an ``OutputFile``: complete under its name or not
/// at all, an earlier file left as it was when this fails.
public enum Thumbnail {
    /// The picture of the file at `path` (a name `open` takes), fitted within `side` pixels.
    public static func picture(of path: String, side: Int, at seconds: Double? = nil) throws(GraphError) -> SampleBuffer {
        guard side >= 1, side <= FrameSizeLimit.side else { throw GraphError(.usage, "a thumbnail of \(side) pixels: give 1 to \(FrameSizeLimit.side)") }
        if let seconds, !(seconds.isFinite && seconds >= 0) { throw GraphError(.usage, "a thumbnail at \(seconds) s: give a time of 0 or more seconds") }
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw GraphError(.inputUnreadable, "cannot read \"\(path)\": \(String(cString: strerror(errno)).lowercased())") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw GraphError(.inputUnreadable, "cannot read \"\(path)\": it is not a regular file")
        }
        let start = (try? FileBytes(descriptor: fd).read(at: 0, count: 64)) ?? []
        if StillPicture.isDecoded(start) {
            let still: StillPicture
            do throws(ContainerError) {
                guard let decoded = try StillPicture.decode(descriptor: fd, thumbnailOfAtLeast: side) else { throw ContainerError("not a photo") }
                still = decoded
            } catch {
                throw GraphError(.inputUnreadable, "cannot read \"\(path)\": \(error.reason)")
            }
            let picture = still.picture
            let format = MediaFormat.VideoFormat(pixelFormat: .bgra, width: picture.width, height: picture.height, frameRate: FrameRate(1))
            let frame = SampleBuffer(format: .rawVideo(format), wrapping: picture.memory, presentationTime: .zero,
                                     release: { withExtendedLifetime(picture) {} })
            // Scaled, then turned: the box is square, so the order does not change the size.
            return try ThumbnailPicker.turned(try ThumbnailPicker.packed(frame, fittingIn: (side, side), at: .zero), orientation: still.orientation)
        }
        // GStreamer reads it by the open file, not by its name again.
        let reopened = "/proc/self/fd/\(fd)"
        // A PNG: its header read first (sizes and claims refused before GStreamer's decoder
        // allocates), its one frame decoded, turned by its EXIF.
        let bytes = FileBytes(descriptor: fd)
        if let header = StillImageHeader.read({ offset, count in (try? bytes.read(at: UInt64(max(offset, 0)), count: count)) ?? [] }) {
            let h: StillImageHeader
            do throws(ContainerError) { h = try header.get() } catch { throw GraphError(.inputUnreadable, "cannot read \"\(path)\": \(error.reason)") }
            guard h.width <= FrameSizeLimit.side, h.height <= FrameSizeLimit.side else {
                throw GraphError(.inputUnreadable, "cannot read \"\(path)\": its header claims \(h.width) × \(h.height) pixels, more than the \(FrameSizeLimit.side) a side decoded")
            }
            guard h.fits(in: Int(clamping: bytes.count)) else {
                throw GraphError(.inputUnreadable, "cannot read \"\(path)\": its header claims \(h.width) × \(h.height) pixels, more than its \(bytes.count) bytes can hold")
            }
            return try ThumbnailPicker.turned(try stillFrame(reopened, named: path, side: side), orientation: h.orientation)
        }
        let media: MediaFileInfo
        do throws(GraphError) { media = try MediaFileInfo(path: reopened) } catch {
            throw GraphError(error.code, "cannot read \"\(path)\": \(error.message.replacing(reopened, with: path))", cause: error.cause)
        }
        guard let video = media.streams.first(where: { $0.kind == .video }) else {
            throw GraphError(.inputUnreadable, "\"\(path)\" holds no picture (\(media.streams.isEmpty ? "no streams" : media.streams.map(\.kind.rawValue).joined(separator: ", ")))")
        }
        let duration = media.duration
        var time = MediaTime.zero
        if duration > .zero { time = MediaTime(seconds: min(seconds ?? duration.seconds / 10, duration.seconds)) }
        let session = ThumbnailSession(path: reopened, autorotate: true, toneMapsHDR: video.color?.hdr != nil)
        defer { _ = session.close() }
        do throws(GraphError) {
            let frame = try session.frame(at: time, toleranceBefore: .positiveInfinity)
            return try ThumbnailPicker.packed(frame, fittingIn: (side, side), at: frame.presentationTime ?? time)
        } catch {
            throw GraphError(error.code, "cannot take the picture of \"\(path)\" at \(ThumbnailPicker.seconds(time)) s: \(error.message.replacing(reopened, with: path))",
                             cause: error.cause)
        }
    }

    /// The one picture of a still file GStreamer decodes, fitted within `side`.
    static func stillFrame(_ path: String, named name: String, side: Int) throws(GraphError) -> SampleBuffer {
        let frame: SampleBuffer
        do throws(GraphError) { frame = try ThumbnailPicker.firstFrame(of: path) } catch {
            throw GraphError(error.code, "cannot decode \"\(name)\": \(error.message.replacing(path, with: name))", cause: error.cause)
        }
        return try ThumbnailPicker.packed(frame, fittingIn: (side, side), at: .zero)
    }

    /// `picture` written to `output` as `format` (JPEG at `quality`, or PNG), complete or not at
    /// all.
    public static func write(_ picture: SampleBuffer, to output: String, as format: ImageFileFormat, quality: Int = 85) throws(GraphError) {
        let file = OutputFile(path: output, location: "output", node: "thumbnail")
        try file.prepare()
        do throws(GraphError) {
            try ThumbnailPicker.encode(picture, as: format, quality: quality) { (bytes) throws(GraphError) in try file.write(bytes) }
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }
}
