import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// What every graphctl process pays for before it runs a graph. The AVFoundation compatibility
/// modules re-export full Foundation (as Apple's do), whose libraries cost a process about 8 MB of
/// resident memory (BENCHMARKS.md, "After the move"); they are a product of their own
/// (AVFoundation), not in the shared library, so graphctl and the plugins, which link only
/// libGraphKitShared.so, load FoundationEssentials and nothing more.
@Suite(.media) struct FootprintTests {
    @Test(.timeLimit(.minutes(10)))
    func graphctlLoadsNoFullFoundation() throws {
        let libraries = try TestMedia.runTool("ldd", [Graphctl.executable.path])
        #expect(libraries.contains("libGraphKitShared.so"), "graphctl no longer links the shared library: \(libraries)")
        #expect(libraries.contains("libFoundationEssentials.so"))
        for heavy in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so", "libFoundationNetworking.so"] {
            #expect(!libraries.contains(heavy), "graphctl loads \(heavy):\n\(libraries)")
        }
    }

    /// gkavdec (decode's read-only frames) loads libavcodec when it first starts: a job that
    /// decodes no H.264 or HEVC through it maps neither libavcodec nor the codec libraries it
    /// links (libx265, libdav1d, libvpx, ...).
    @Test(.timeLimit(.minutes(10)))
    func graphctlLinksNoLibavcodec() throws {
        let libraries = try TestMedia.runTool("ldd", [Graphctl.executable.path])
        #expect(libraries.contains("libGraphKitShared.so"))
        for loadedLater in ["libavcodec.so", "libavutil.so", "libx265.so", "libdav1d.so"] {
            #expect(!libraries.contains(loadedLater), "graphctl links \(loadedLater):\n\(libraries)")
        }
    }
}
