import CGStreamer

public enum GraphKitInfo {
    public static let version = "0.1.0"

    /// The GStreamer library version this process runs on (needs no initialisation).
    public static var gstreamerVersion: String {
        var major: guint = 0, minor: guint = 0, micro: guint = 0, nano: guint = 0
        gst_version(&major, &minor, &micro, &nano)
        return "\(major).\(minor).\(micro)"
    }
}
