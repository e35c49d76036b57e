/// What a media prober (GStreamer's discoverer, on `qtdemux`) reports of an MP4, MOV or M4A
/// file, read from the file's own index instead: the movie's duration and, per track, the
/// codec in words, the stream as stored (GStreamer caps, with the codec configuration), a
/// sound's rate and channels, a picture's size and frame rate. It answers only for what it
/// reads exactly as the prober would (plain H.264 and AAC tracks of a whole, unfragmented file
/// whose tables agree); anything else is nil, and the caller asks the prober.
package struct MP4StreamFacts: Sendable, Equatable {
    package struct Stream: Sendable, Equatable {
        /// `vide` or `soun`.
        package var handler: FourCC
        /// The codec in words, as GStreamer's `gst_pb_utils_get_codec_description` says it
        /// (`H.264 (High Profile)`, `MPEG-4 AAC`).
        package var codec: String
        /// The stream as stored, as GStreamer caps text.
        package var caps: String
        package var sampleRate: Int?
        package var channels: Int?
        package var width: Int?
        package var height: Int?
        /// Frames a second as a fraction (numerator, denominator).
        package var frameRate: (numerator: Int, denominator: Int)?
        /// A video stream's colour, bit depth and chroma format, as its sample entry states them.
        package var colour: VideoColourFacts? = nil

        package static func == (a: Self, b: Self) -> Bool {
            a.handler == b.handler && a.codec == b.codec && a.caps == b.caps && a.sampleRate == b.sampleRate && a.colour == b.colour
                && a.channels == b.channels && a.width == b.width && a.height == b.height
                && a.frameRate?.numerator == b.frameRate?.numerator && a.frameRate?.denominator == b.frameRate?.denominator
        }
    }

    /// The movie's duration (`mvhd`), in nanoseconds rounded down, as `qtdemux` gives it.
    package var durationNanoseconds: UInt64
    /// Every track, in the file's order.
    package var streams: [Stream]

    /// The facts of `source`, an ISO BMFF file; nil when it is not one, when it is cut short,
    /// fragmented or damaged, or when a track is anything but H.264 video or AAC sound with
    /// samples: what a prober must then read.
    package init?<Source: ByteSource>(_ source: Source) {
        guard let file = try? MP4File(source), file.isWholeMovie, let movie = try? file.movie() else { return nil }
        self.init(movie: movie, fileSize: source.count)
    }

    /// The facts of `movie`, the index of a file of `fileSize` bytes (see ``init(_:)``).
    package init?(movie: MP4Movie, fileSize: UInt64) {
        guard movie.moov.first("mvex") == nil, let header = movie.header, header.timescale > 0, header.duration > 0,
              header.duration != UInt64(UInt32.max), !movie.trackIndices.isEmpty else { return nil }
        durationNanoseconds = Self.scale(header.duration, 1_000_000_000, UInt64(header.timescale))
        var streams: [Stream] = []
        for i in movie.trackIndices {
            guard let stream = Self.stream(movie.track(i), fileSize: fileSize) else { return nil }
            streams.append(stream)
        }
        self.streams = streams
    }

    private static func stream(_ track: MP4Track, fileSize: UInt64) -> Stream? {
        guard let entries = track.box.find(["mdia", "minf", "stbl", "stsd"])?.children, entries.count == 1,
              let description = SampleDescription(track), let configuration = description.configuration,
              let samples = try? track.samples(fileSize: fileSize), !samples.isEmpty else { return nil }
        switch (track.handler ?? "    ", description.codec, configuration.type) {
        case ("vide", "avc1", "avcC"):
            return h264(track, description, configuration.body, samples, entry: entries[0].body)
        case ("soun", "mp4a", "esds"):
            return aac(configuration.body)
        default:
            return nil
        }
    }

    private static func h264(_ track: MP4Track, _ description: SampleDescription, _ avcC: [UInt8], _ samples: [MP4Sample],
                             entry: [UInt8]) -> Stream? {
        guard avcC.count >= 7, avcC[0] == 1, let size = description.size, size.width > 0, size.height > 0,
              let profile = h264Profile(avcC[1], flags: avcC[2]) else { return nil }
        // qtdemux's rate: the average frame duration but for the first frame (sometimes cut
        // short), snapped to a common rate by gst_video_guess_framerate.
        let timescale = UInt64(track.mediaTimescale), duration = track.mediaHeader?.duration ?? 0
        guard samples.count > 1, timescale > 0, duration > UInt64(samples[0].duration), duration != UInt64(UInt32.max) else { return nil }
        let average = scaleRounded(duration - UInt64(samples[0].duration), 1_000_000_000, timescale * UInt64(samples.count - 1))
        guard let rate = guessFrameRate(nanoseconds: average) else { return nil }
        let level = h264Level(avcC[3], flags: avcC[2])
        let caps = "video/x-h264, stream-format=(string)avc, alignment=(string)au, level=(string)\(level), profile=(string)\(profile.nick), "
            + "codec_data=(buffer)\(hex(avcC)), width=(int)\(size.width), height=(int)\(size.height), framerate=(fraction)\(rate.0)/\(rate.1)"
        return Stream(handler: "vide", codec: "H.264 (\(profile.name) Profile)", caps: caps, sampleRate: nil, channels: nil,
                      width: size.width, height: size.height, frameRate: (rate.0, rate.1),
                      colour: VideoColourFacts(h264EntryBody: entry, avcC: avcC))
    }

    /// GStreamer's profile nick (`gst_codec_utils_h264_get_profile`) and its name in a codec
    /// description, for the profiles an encoder of files for players writes; nil for others.
    static func h264Profile(_ idc: UInt8, flags: UInt8) -> (nick: String, name: String)? {
        let set1 = flags & 0x40 != 0, set3 = flags & 0x10 != 0, set4 = flags & 0x08 != 0
        switch idc {
        case 66: return set1 ? ("constrained-baseline", "Constrained Baseline") : ("baseline", "Baseline")
        case 77: return ("main", "Main")
        case 100: return set4 ? nil : ("high", "High")
        case 110: return set3 || set4 ? nil : ("high-10", "High 10")
        default: return nil
        }
    }

    /// GStreamer's level text (`gst_codec_utils_h264_get_level`): `1b`, `3`, `3.1`.
    static func h264Level(_ idc: UInt8, flags: UInt8) -> String {
        if idc == 9 || (idc == 11 && flags & 0x10 != 0) { return "1b" }
        return idc % 10 == 0 ? "\(idc / 10)" : "\(idc / 10).\(idc % 10)"
    }

    /// An AAC track from its `esds`'s decoder configuration: MPEG-4 audio (object type 0x40) of the plain object types
    /// (Main, LC, SSR, LTP) whose AudioSpecificConfig states its rate by index and its
    /// channels by configuration, which qtdemux takes over the sample entry's.
    /// `decoding`: the object type, then the AudioSpecificConfig (``SampleDescription``'s
    /// configuration of an `esds`).
    private static func aac(_ decoding: [UInt8]) -> Stream? {
        guard decoding.count >= 3, decoding[0] == 0x40 else { return nil }
        let config = Array(decoding.dropFirst())
        guard let head = AudioSpecificConfig(config), (1...4).contains(head.objectType), head.rateIndex != 15,
              let channels = head.channels else { return nil }
        let rate = head.sampleRate
        let caps = "audio/mpeg, mpegversion=(int)4, framed=(boolean)true, stream-format=(string)raw, "
            + "codec_data=(buffer)\(hex(config)), rate=(int)\(rate), channels=(int)\(channels)"
        return Stream(handler: "soun", codec: "MPEG-4 AAC", caps: caps, sampleRate: rate, channels: channels,
                      width: nil, height: nil, frameRate: nil)
    }

    /// GStreamer's `gst_video_guess_framerate`: the rate of a frame lasting `nanoseconds`,
    /// as n/1, n/2, n/3, n/4 or n·1000/1001 when one is within 0.1 %, else exact to 10 µs.
    static func guessFrameRate(nanoseconds duration: UInt64) -> (Int, Int)? {
        guard duration > 0 else { return nil }
        let second: UInt64 = 1_000_000_000
        var best: (n: UInt64, d: UInt64) = duration > 100_000 ? (second / 10_000, duration / 10_000) : (second, duration)
        var bestError = UInt64.max
        for d: UInt64 in [1, 2, 3, 4, 1001] {
            var n = scaleRounded(d, second, duration)
            if d == 1001 {
                n += 500
                n -= n % 1000
            }
            guard n > 0 else { continue }
            let a = scale(second, d, n)
            let error = a < duration ? duration - a : a - duration
            if error < 2 {
                best = (n, d)
                break
            }
            if error * 1000 < duration && error < bestError {
                bestError = error
                best = (n, d)
            }
        }
        var (x, y) = (best.n, best.d)
        while y != 0 { (x, y) = (y, x % y) }
        guard x > 0, best.n / x <= UInt64(Int32.max), best.d / x <= UInt64(Int32.max), best.d / x > 0 else { return nil }
        return (Int(best.n / x), Int(best.d / x))
    }

    /// `value × num / den` rounded down, without overflow for a duration's magnitudes.
    static func scale(_ value: UInt64, _ num: UInt64, _ den: UInt64) -> UInt64 {
        let (high, low) = value.multipliedFullWidth(by: num)
        guard high < den else { return .max }
        return den.dividingFullWidth((high, low)).quotient
    }

    /// `value × num / den` rounded to the nearest.
    static func scaleRounded(_ value: UInt64, _ num: UInt64, _ den: UInt64) -> UInt64 {
        let (high, low) = value.multipliedFullWidth(by: num)
        let (sum, carry) = low.addingReportingOverflow(den / 2)
        let top = high + (carry ? 1 : 0)
        guard top < den else { return .max }
        return den.dividingFullWidth((top, sum)).quotient
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension MP4File {
    /// Whether the file is one whole, unfragmented movie: its top-level boxes end where the
    /// file ends, with an index (`moov`), media data (`mdat`) and no fragment (`moof`).
    package var isWholeMovie: Bool {
        ending == nil && boxes.allSatisfy(isWhole) && first("moov") != nil && first("mdat") != nil && first("moof") == nil
    }
}
