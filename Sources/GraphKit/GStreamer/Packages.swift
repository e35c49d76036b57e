import CGStreamer
import CGraphKitGlue

extension GStreamer {
    /// The Debian package that provides an element, for "missing plugin" messages.
    public static func debianPackage(forElement factory: String) -> String {
        let packages: [String: [String]] = [
            "gstreamer1.0-libav": ["avenc_aac", "avdec_aac", "avdec_h264", "avdec_mp3", "avdec_mp3float"],
            "gstreamer1.0-plugins-ugly": ["x264enc", "a52dec", "mpeg2dec"],
            "gstreamer1.0-plugins-good": ["mp4mux", "qtmux", "qtdemux", "wavparse", "wavenc", "flacparse", "flacdec",
                                          "v4l2src", "videoflip", "videocrop", "videobox", "gdkpixbufoverlay",
                                          "level", "mpegaudioparse", "mpg123audiodec", "lamemp3enc"],
            "gstreamer1.0-plugins-bad": ["voaacenc", "fdkaacenc", "h264parse", "openh264enc", "faac", "faad"],
            "gstreamer1.0-pulseaudio": ["pulsesrc", "pulsesink"],
            "gstreamer1.0-x": ["textoverlay", "timeoverlay", "clockoverlay", "ximagesink", "xvimagesink"],
            "gstreamer1.0-alsa": ["alsasrc", "alsasink"],
            "libgstreamer1.0-0": ["queue", "tee", "filesrc", "filesink", "fakesink", "identity", "capsfilter", "typefind"],
        ]
        return packages.first { $0.value.contains(factory) }?.key ?? "gstreamer1.0-plugins-base"
    }
}
