/// The largest picture GraphKit decodes: 16384 pixels a side, what its own frames take
/// (`PixelBufferPool`, `CVPixelBuffer`, `scale`, `crop`). An MP4 or MOV states its pictures' size
/// in each video track's sample entry, and a decoder allocates frames of that size before it
/// reads a byte of picture: a few-KB file whose `avc1` claims 65535×65535 asks for gigabytes a
/// frame (and was reported as a decoder not installed). Such a claim is refused by name before
/// any decoder is made: by `source.file` (so `decode`, thumbnails and `graphctl export`'s
/// re-encoding presets) and by `graphctl probe`. A codec whose size is stated in its sample entry
/// (H.264, HEVC, MJPEG's `jpeg` and `mjpa`, …) is covered; a size stated only inside the stream
/// (a bare JPEG's frame header) is not read here.
public enum FrameSizeLimit {
    /// The most pixels a side.
    public static let side = 16_384

    /// Why `source`'s video cannot be decoded here: its first video track whose sample entry
    /// claims a picture wider or taller than ``side``, named with its codec and size. Nil when
    /// every claim is within the limit, and for a file that is not an MP4 or MOV (or whose index
    /// cannot be read: what reads it says why).
    public static func problem(in source: some ByteSource) -> String? {
        // Only a file that is an MP4 or MOV by its first bytes has its boxes walked.
        guard let format = try? MediaContainerFormat.detect(source), format == .mp4 || format == .mov,
              let file = try? MP4File(source), let movie = try? file.movie() else { return nil }
        for (_, track) in movie.tracks(handler: "vide") {
            guard let entry = SampleDescription(track), let size = entry.size, size.width > side || size.height > side else { continue }
            return "its track \(track.trackID) (\(entry.codec)) claims frames of \(size.width)x\(size.height) (\(size.width * size.height) pixels), "
                + "which exceeds the limit of \(side)x\(side) (\(side * side) pixels) that GraphKit decodes: the file is damaged, "
                + "or its pictures are larger than any decoder here is given"
        }
        return nil
    }
}
