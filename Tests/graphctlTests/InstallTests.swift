import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// `make install` as a user runs it (the debug build, into a staging DESTDIR; its build step is
/// `make test`'s own): graphctl runs
/// from any folder with no environment set, loads a plugin dropped in the installed plugin
/// folder, runs the example graph with it; `make uninstall` removes exactly what was installed.
@Suite(.media) struct InstallTests {
    @Test(.timeLimit(.minutes(15)))
    func installRunUninstall() throws {
        let stage = try TestMedia.temporaryFolder()
        let make = { (target: String) throws in
            try TestMedia.runTool("make", ["-C", Graphctl.root.path, target, "CONFIG=debug", "DESTDIR=\(stage.path)", "PREFIX=/opt/gk"])
        }
        // install-files is install without its build step: `make test` has built graphctl, and
        // other tests are running it (a relink under them would crash them).
        try make("install-files")
        let prefix = stage.appendingPathComponent("opt/gk")
        let graphctl = prefix.appendingPathComponent("bin/graphctl").path
        let installed = try FileManager.default.subpathsOfDirectory(atPath: stage.path).sorted()
        #expect(installed.contains("opt/gk/bin/graphctl") && installed.contains("opt/gk/lib/graphkit/libGraphKitShared.so")
                && installed.contains("opt/gk/lib/graphkit/plugins"), "\(installed)")

        // From /, with nothing in the environment: the rpath finds the library.
        let version = try TestMedia.runTool("env", ["-i", "sh", "-c", "cd / && '\(graphctl)' --version"])
        #expect(version.hasPrefix("graphctl "))

        // A plugin copied into the installed folder is loaded with no flag or variable.
        let plugins = prefix.appendingPathComponent("lib/graphkit/plugins")
        try FileManager.default.copyItem(atPath: Graphctl.root.appendingPathComponent("out/plugins/libEchoPlugin.so").path,
                                         toPath: plugins.appendingPathComponent("libEchoPlugin.so").path)
        let listed = try TestMedia.runTool("env", ["-i", "sh", "-c", "cd / && '\(graphctl)' inspect --plugins"])
        #expect(listed.contains("echo 1.0.0"), "\(listed)")
        let wav = stage.appendingPathComponent("in.wav").path, out = stage.appendingPathComponent("echo.m4a").path
        try TestMedia.writeWAV(wav, seconds: 1)
        try TestMedia.runTool("env", ["-i", "sh", "-c", "cd / && '\(graphctl)' run --quiet "
            + "'\(Graphctl.root.appendingPathComponent("examples/plugin-echo/echo.json").path)' --set src.path='\(wav)' --set file.path='\(out)'"])
        #expect(try MediaProbe(out).duration > 2, "the echo's tail lengthens the file")

        // Uninstall removes what install added; the plugin the user added stays, with its folder.
        try make("uninstall")
        let left = try FileManager.default.subpathsOfDirectory(atPath: prefix.path).sorted()
        #expect(left == ["bin", "lib", "lib/graphkit", "lib/graphkit/plugins", "lib/graphkit/plugins/libEchoPlugin.so"], "\(left)")
    }
}
