import CGStreamer
import GraphKitCore
import MediaContainers
extension GStreamer {
    /// The GStreamer library's version in this process (major, minor, micro), as it reports it.
    public static var version: (major: Int, minor: Int, micro: Int) {
        var major: guint = 0, minor: guint = 0, micro: guint = 0, nano: guint = 0
        gst_version(&major, &minor, &micro, &nano)
        return (Int(major), Int(minor), Int(micro))
    }

    /// The Debian package that provides each element GraphKit uses or advises on, as
    /// `dpkg -S` names the owner of the element's plugin file (`gst-inspect-1.0 ELEMENT` shows
    /// the file). A test checks every installed element here against dpkg, so this cannot drift.
    ///
    /// Not listed, because no Debian package provides them: `fdkaacenc` and `faac` (their
    /// libraries, fdk-aac and faac, are not free software, and Debian builds
    /// gstreamer1.0-plugins-bad without them). PulseAudio's elements moved into
    /// gstreamer1.0-plugins-good; gstreamer1.0-pulseaudio is only a transitional package.
    ///
    /// Which package ships an element can change between GStreamer releases: amrnbdec and
    /// amrwbdec moved from gstreamer1.0-plugins-ugly to -good in 1.24 (Debian 13's 1.26 has them
    /// there). Decided by the running GStreamer's version, as a last resort: the element is
    /// advised on because it is not installed, so there is no plugin file to ask.
    public static let debianPackages: [String: String] = debianPackages(gstreamerMinor: version.minor)

    /// The table for GStreamer 1.`minor` (Debian 12 has 1.22, Ubuntu 24.04 1.24, Debian 13 1.26).
    package static func debianPackages(gstreamerMinor minor: Int) -> [String: String] {
        let amr = ["amrnbdec", "amrwbdec"]
        let movedToGood = minor >= 24 ? amr : []
        let byPackage: [String: [String]] = [
            "libgstreamer1.0-0": ["queue", "tee", "filesrc", "filesink", "fakesink", "identity", "capsfilter", "typefind"],
            "gstreamer1.0-plugins-base": ["appsrc", "appsink", "audioconvert", "audioresample", "audiomixer", "audiotestsrc", "videotestsrc",
                                          "videoconvert", "videoscale", "videorate", "decodebin",
                                          "oggdemux", "oggmux", "vorbisdec", "opusdec", "opusenc", "theoradec"],
            "gstreamer1.0-plugins-good": ["mp4mux", "qtmux", "qtdemux", "wavparse", "wavenc", "flacparse", "flacdec",
                                          "v4l2src", "videoflip", "videocrop", "videobox", "gdkpixbufoverlay",
                                          "level", "mpegaudioparse", "mpg123audiodec", "lamemp3enc", "pulsesrc", "pulsesink",
                                          "matroskademux", "avidemux", "speexdec", "wavpackdec", "alawdec", "mulawdec",
                                          "vp8dec", "vp9dec", "vp9enc", "flacenc", "jpegdec", "pngdec", "matroskamux", "webmmux"] + movedToGood,
            "gstreamer1.0-plugins-bad": ["voaacenc", "h264parse", "openh264enc", "faad", "dtsdec", "av1dec", "tsdemux",
                                         "mpegpsdemux", "aiffparse", "waylandsink", "h265parse", "opusparse",
                                         "h264timestamper", "h265timestamper", "x265enc", "av1enc", "webrtcbin", "srtsrc", "srtsink",
                                         "rtmp2sink"],
            "gstreamer1.0-nice": ["nicesrc", "nicesink"],
            "gstreamer1.0-plugins-ugly": ["x264enc", "a52dec", "mpeg2dec", "asfdemux"] + (minor >= 24 ? [] : amr),
            "gstreamer1.0-libav": ["avenc_aac", "avdec_aac", "avdec_h264", "avdec_mp3", "avdec_mp3float", "avdec_h265",
                                   "avdec_mpeg4", "avdec_eac3", "avdec_alac", "avdec_wmav2", "avdec_truehd", "avdec_prores",
                                   "avdec_dnxhd", "avenc_alac"],
            "gstreamer1.0-x": ["textoverlay", "timeoverlay", "clockoverlay", "ximagesink", "xvimagesink"],
            "gstreamer1.0-alsa": ["alsasrc", "alsasink"],
            "gstreamer1.0-pipewire": ["pipewiresrc", "pipewiresink"],
            "gstreamer1.0-libcamera": ["libcamerasrc"],
        ]
        var table: [String: String] = [:]
        for (package, elements) in byPackage {
            for element in elements { table[element] = package }
        }
        return table
    }

    /// The Debian package that provides an element, or nil when GraphKit does not know one (an
    /// element it does not use, or one Debian does not ship): a message then must not name one.
    public static func debianPackage(providing element: String) -> String? {
        debianPackages[element]
    }

    /// For "missing plugin" messages worded "install the Debian package …": the package's name,
    /// or "that provides it" when none is known, so that no package is invented.
    /// ``debianPackage(providing:)`` says which of the two it is.
    public static func debianPackage(forElement factory: String) -> String {
        debianPackage(providing: factory) ?? "that provides it"
    }

    /// The element that decodes (or demultiplexes) each kind of stream a file may hold, keyed as
    /// ``decoderKey(mediaType:mpegVersion:systemStream:)`` makes the key from decodebin's
    /// missing-plugin caps: the Debian package to advise is that element's. Each key is one that
    /// Debian's own packaging declares the package decodes (its `Gstreamer-Decoders` field);
    /// a test checks both against the machine.
    public static let decoders: [String: String] = [
        // audio
        "audio/mpeg, mpegversion=1": "mpg123audiodec", "audio/mpeg, mpegversion=2": "avdec_aac",
        "audio/mpeg, mpegversion=4": "avdec_aac", "audio/x-vorbis": "vorbisdec", "audio/x-opus": "opusdec",
        "audio/x-flac": "flacdec", "audio/x-ac3": "a52dec", "audio/x-eac3": "avdec_eac3", "audio/x-alac": "avdec_alac",
        "audio/x-wma": "avdec_wmav2", "audio/x-speex": "speexdec", "audio/x-wavpack": "wavpackdec",
        "audio/x-alaw": "alawdec", "audio/x-mulaw": "mulawdec", "audio/AMR": "amrnbdec", "audio/AMR-WB": "amrwbdec",
        "audio/x-dts": "dtsdec", "audio/x-true-hd": "avdec_truehd",
        // video
        "video/x-h264": "avdec_h264", "video/x-h265": "avdec_h265", "video/x-vp8": "vp8dec", "video/x-vp9": "vp9dec",
        "video/x-av1": "av1dec", "video/x-theora": "theoradec", "video/mpeg, mpegversion=1": "mpeg2dec",
        "video/mpeg, mpegversion=2": "mpeg2dec", "video/mpeg, mpegversion=4": "avdec_mpeg4",
        "video/x-prores": "avdec_prores", "video/x-dnxhd": "avdec_dnxhd", "image/jpeg": "jpegdec", "image/png": "pngdec",
        // containers
        "video/quicktime": "qtdemux", "audio/x-m4a": "qtdemux", "video/x-matroska": "matroskademux",
        "video/webm": "matroskademux", "audio/x-matroska": "matroskademux", "audio/webm": "matroskademux",
        "application/ogg": "oggdemux", "audio/ogg": "oggdemux", "video/ogg": "oggdemux", "video/x-msvideo": "avidemux",
        "audio/x-wav": "wavparse", "audio/x-aiff": "aiffparse", "video/mpegts": "tsdemux",
        "video/mpeg, systemstream=true": "mpegpsdemux", "video/x-ms-asf": "asfdemux",
    ]

    /// The key of ``decoders`` for a stream: its media type, with the MPEG version for MPEG audio
    /// and video (MP3 and AAC share `audio/mpeg`), or `systemstream=true` for an MPEG program stream.
    public static func decoderKey(mediaType: String, mpegVersion: Int?, systemStream: Bool = false) -> String {
        guard mediaType == "audio/mpeg" || mediaType == "video/mpeg" else { return mediaType }
        if systemStream { return "\(mediaType), systemstream=true" }
        return mpegVersion.map { "\(mediaType), mpegversion=\($0)" } ?? mediaType
    }

    /// The Debian package whose decoder reads a stream of this kind, or nil when GraphKit knows
    /// none (a message then says so, and invents no package).
    public static func debianPackage(decoding key: String) -> String? {
        decoders[key].flatMap { debianPackage(providing: $0) }
    }
}
