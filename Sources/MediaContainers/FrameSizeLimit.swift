/// The largest picture GraphKit decodes: 16384 pixels a side, what its own frames take
/// (`PixelBufferPool`, `CVPixelBuffer`, `scale`, `crop`). An MP4 or MOV states its pictures' size
/// in each video track's sample entry, and a decoder allocates frames of that size before it
/// reads a byte of picture: a few-KB file whose `avc1` claims 65535×65535 asks for gigabytes a
/// frame (and was reported as a decoder not installed). Such a claim is refused by name before
/// any decoder is made: by `source.file` (so `decode`, thumbnails and `graphctl export`'s
/// re-encoding presets) and by `graphctl probe`. A codec whose size is stated in its sample entry
/// (H.264, HEVC, MJPEG's `jpeg` and `mjpa`, …) is covered here; a size stated elsewhere (another
/// container, a parsed SPS, a JPEG frame's header) meets the same rule at every video decoder's
/// input (`gk_guard_video_decoders`, installed when GStreamer starts).
public enum FrameSizeLimit {
    /// The most pixels a side.
    public static let side = 16_384

    /// libavcodec's own bound on a picture (`av_image_check_size`, which every one of its video
    /// decoders applies): (width + 128) × (height + 128) under 2²⁸. Inside the 16384-a-side
    /// limit it refuses 16384×16300, for one: GStreamer's libav decoder then fails its caps, and
    /// decodebin went on to the next decoder (libde265's, which corrupted the heap on it).
    public static let decodersArea = 1 << 28

    /// The most pixels a JPEG frame of `bytes` can hold: every 8×8 block of its fullest
    /// component codes at least its DC difference, a Huffman code of one bit or more, so a
    /// frame holds at most 512 pixels a byte. A frame's header claiming more is not believed
    /// (its decoder would allocate the claim: a few KB asked for gigabytes).
    public static func jpegPixels(inFrameOf bytes: Int) -> Int { bytes.multipliedReportingOverflow(by: 512).overflow ? .max : bytes * 512 }

    /// Why frames of `width`×`height` are not decoded here, as the end of a sentence that
    /// begins "… claims frames of W×H (N pixels), ": over ``side`` a side, or past what the
    /// decoders take (``decodersArea``), or, given `frameBytes` of a JPEG frame, more than it
    /// can hold. Nil for a size every decoder here is given. Sizes of 0 or less are the
    /// decoders' to refuse.
    public static func excess(width: Int, height: Int, jpegFrameBytes frameBytes: Int? = nil) -> String? {
        guard width > 0, height > 0 else { return nil }
        if width > side || height > side {
            return "which exceeds the limit of \(side)x\(side) (\(side * side) pixels) that GraphKit decodes"
        }
        if (width + 128) * (height + 128) >= decodersArea {
            return "which is more than the video decoders here take: (width + 128) x (height + 128) must stay under 2^28 "
                + "(\(decodersArea)), libavcodec's bound, and is \((width + 128) * (height + 128))"
        }
        if let frameBytes, frameBytes >= 0, width * height > jpegPixels(inFrameOf: frameBytes) {
            return "which a JPEG frame of \(frameBytes) bytes cannot hold (at most \(jpegPixels(inFrameOf: frameBytes)) pixels: "
                + "every 8x8 block takes a bit at least)"
        }
        return nil
    }

    /// The whole sentence for a stream (`what`: its codec, as its track or caps name it) whose
    /// frames are claimed at `width`×`height` and refused by ``excess(width:height:jpegFrameBytes:)``.
    public static func refusal(_ what: String, width: Int, height: Int, jpegFrameBytes: Int? = nil) -> String? {
        guard let excess = excess(width: width, height: height, jpegFrameBytes: jpegFrameBytes) else { return nil }
        return "\(what) claims frames of \(width)x\(height) (\(width * height) pixels), \(excess): the file is damaged, "
            + "or its pictures are larger than any decoder here is given"
    }

    /// Why `source`'s video cannot be decoded here: its first video track whose sample entry
    /// claims a picture ``excess(width:height:jpegFrameBytes:)`` refuses, named with its codec
    /// and size. Nil when every claim is within the limit, and for a file that is not an MP4 or
    /// MOV (or whose index cannot be read: what reads it says why). Sizes claimed elsewhere
    /// (a Matroska track, an SPS, a JPEG frame's header) are checked at each video decoder's
    /// input, by the check GraphKitRuntime installs there.
    public static func problem(in source: some ByteSource) -> String? {
        // Only a file that is an MP4 or MOV by its first bytes has its boxes walked.
        guard let format = try? MediaContainerFormat.detect(source), format == .mp4 || format == .mov,
              let file = try? MP4File(source), let movie = try? file.movie() else { return nil }
        for (_, track) in movie.tracks(handler: "vide") {
            guard let entry = SampleDescription(track), let size = entry.size,
                  let refusal = refusal("its track \(track.trackID) (\(entry.codec))", width: size.width, height: size.height) else { continue }
            return refusal
        }
        return nil
    }
}
