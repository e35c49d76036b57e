extension GStreamer {
    /// The Debian 12 package that provides each element GraphKit uses or advises on, as
    /// `dpkg -S` names the owner of the element's plugin file (`gst-inspect-1.0 ELEMENT` shows
    /// the file). A test checks every installed element here against dpkg, so this cannot drift.
    ///
    /// Not listed, because no Debian package provides them: `fdkaacenc` and `faac` (their
    /// libraries, fdk-aac and faac, are not free software, and Debian builds
    /// gstreamer1.0-plugins-bad without them). PulseAudio's elements moved into
    /// gstreamer1.0-plugins-good; gstreamer1.0-pulseaudio is only a transitional package.
    public static let debianPackages: [String: String] = {
        let byPackage: [String: [String]] = [
            "libgstreamer1.0-0": ["queue", "tee", "filesrc", "filesink", "fakesink", "identity", "capsfilter", "typefind"],
            "gstreamer1.0-plugins-base": ["appsrc", "appsink", "audioconvert", "audioresample", "audiotestsrc", "videotestsrc",
                                          "videoconvert", "videoscale", "videorate", "decodebin"],
            "gstreamer1.0-plugins-good": ["mp4mux", "qtmux", "qtdemux", "wavparse", "wavenc", "flacparse", "flacdec",
                                          "v4l2src", "videoflip", "videocrop", "videobox", "gdkpixbufoverlay",
                                          "level", "mpegaudioparse", "mpg123audiodec", "lamemp3enc", "pulsesrc", "pulsesink"],
            "gstreamer1.0-plugins-bad": ["voaacenc", "h264parse", "openh264enc", "faad"],
            "gstreamer1.0-plugins-ugly": ["x264enc", "a52dec", "mpeg2dec"],
            "gstreamer1.0-libav": ["avenc_aac", "avdec_aac", "avdec_h264", "avdec_mp3", "avdec_mp3float"],
            "gstreamer1.0-x": ["textoverlay", "timeoverlay", "clockoverlay", "ximagesink", "xvimagesink"],
            "gstreamer1.0-alsa": ["alsasrc", "alsasink"],
        ]
        var table: [String: String] = [:]
        for (package, elements) in byPackage {
            for element in elements { table[element] = package }
        }
        return table
    }()

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
}
