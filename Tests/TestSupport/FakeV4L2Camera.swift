import Foundation
import GraphKit
import GraphKitTesting

/// A V4L2 camera for machines without one (Tests/Fixtures/fake-v4l2/fake-v4l2.c): the fixture
/// built into a preload library, and a file whose path a process started with ``environment``
/// sees as a capture device (320x240 YUYV at 30 frames a second through read() I/O, a bar
/// moving 4 pixels a frame). Started with `busyAttempts`, the device refuses its format with
/// EBUSY that many times first, as a camera another program streams from does.
public final class FakeV4L2Camera: Sendable {
    public let folder: URL
    public let devicePath: String
    private let library: String

    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fake-v4l2/fake-v4l2.c").path

    public init(in folder: URL) throws {
        self.folder = folder
        library = folder.appendingPathComponent("libfakev4l2.so").path
        devicePath = folder.appendingPathComponent("video0").path
        try TestMedia.runTool("clang", ["-shared", "-fPIC", "-O2", "-o", library, Self.source, "-ldl"])
        FileManager.default.createFile(atPath: devicePath, contents: nil)
    }

    /// What a process needs to see the camera (libcamera's informational lines, which its
    /// device monitor prints, kept out of the output); `busyAttempts`: the camera refuses that
    /// many attempts to set its format first (a program that lets it go after a while).
    public func settings(busyAttempts: Int = 0) -> [String: String] {
        ["LD_PRELOAD": library, "FAKE_V4L2_PATH": devicePath,
         "FAKE_V4L2_BUSY_COUNT": String(busyAttempts), "LIBCAMERA_LOG_LEVELS": "ERROR"]
    }

    /// The test process's environment with ``settings(busyAttempts:)``.
    public func environment(busyAttempts: Int = 0) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(settings(busyAttempts: busyAttempts)) { $1 }
    }
}
