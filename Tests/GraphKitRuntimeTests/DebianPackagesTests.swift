import CGStreamer
import Foundation
import Testing
import GraphKit
import TestSupport

/// `GStreamer.debianPackages` against the machine: for every element in the table that is
/// installed, the package dpkg says owns its plugin file must be the one the table names.
@Suite(.media, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-query"), "dpkg is Debian's"))
struct DebianPackagesTests {
    /// The plugin file of an installed element, as `gst-inspect-1.0 ELEMENT` shows it.
    static func pluginFile(of element: String) -> String? {
        GStreamer.initialize()
        guard let factory = gst_element_factory_find(element) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(factory)) }
        guard let plugin = gst_plugin_feature_get_plugin(factory) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(plugin)) }
        return gst_plugin_get_filename(plugin).map { String(cString: $0) }
    }

    /// `dpkg-query -S` for several files at once: the owning package of each file it knows.
    static func owners(of paths: [String]) throws -> [String: String] {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/dpkg-query")
        p.arguments = ["-S"] + paths
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice  // "no path found" for the spellings it does not know
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        var owners: [String: String] = [:]
        // "gstreamer1.0-plugins-good:amd64: /usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstisomp4.so"
        for line in text.split(separator: "\n") where !line.hasPrefix("diversion") {
            guard let separator = line.range(of: ": /") else { continue }
            let package = line[..<separator.lowerBound].split(separator: ",").first.map { String($0.split(separator: ":")[0]) }
            owners[String(line[line.index(before: separator.upperBound)...])] = package
        }
        return owners
    }

    @Test func everyInstalledElementIsInThePackageTheTableNames() throws {
        var files: [String: [String]] = [:]  // element -> the spellings of its plugin file
        for element in GStreamer.debianPackages.keys {
            guard let file = Self.pluginFile(of: element) else { continue }  // not installed here
            // Since /usr was merged, GStreamer may say /lib/… where dpkg knows /usr/lib/….
            let real = URL(fileURLWithPath: file).resolvingSymlinksInPath().path
            files[element] = Array(Set([file, real]))
        }
        #expect(files.count >= GStreamer.debianPackages.count / 2, "most of the table should be installed: \(files.keys.sorted())")
        let owners = try Self.owners(of: Array(Set(files.values.joined())))
        for (element, spellings) in files.sorted(by: { $0.key < $1.key }) {
            let owner = spellings.lazy.compactMap { owners[$0] }.first
            #expect(owner == GStreamer.debianPackages[element], "\(element) (\(spellings[0])) is in \(owner ?? "no package")")
        }
    }

    /// amrnbdec and amrwbdec moved from -ugly to -good in GStreamer 1.24: the advice follows the
    /// version that runs (Debian 12's 1.22, Debian 13's 1.26), and every other element stays put.
    @Test func theAMRDecodersPackageFollowsTheGStreamerVersion() {
        let old = GStreamer.debianPackages(gstreamerMinor: 22), new = GStreamer.debianPackages(gstreamerMinor: 26)
        for element in ["amrnbdec", "amrwbdec"] {
            #expect(old[element] == "gstreamer1.0-plugins-ugly")
            #expect(GStreamer.debianPackages(gstreamerMinor: 24)[element] == "gstreamer1.0-plugins-good")
            #expect(new[element] == "gstreamer1.0-plugins-good")
        }
        #expect(old.filter { !$0.key.hasPrefix("amr") } == new.filter { !$0.key.hasPrefix("amr") })
        #expect(GStreamer.debianPackages == GStreamer.debianPackages(gstreamerMinor: GStreamer.version.minor))
    }

    @Test func anElementNobodyPackagesHasNoPackage() {
        #expect(GStreamer.debianPackage(providing: "x264enc") == "gstreamer1.0-plugins-ugly")
        #expect(GStreamer.debianPackage(providing: "pulsesrc") == "gstreamer1.0-plugins-good")
        for element in ["fdkaacenc", "faac", "x264enc_not_installed"] {
            #expect(GStreamer.debianPackage(providing: element) == nil, "\(element)")
        }
        #expect(GStreamer.debianPackage(forElement: "x264enc_not_installed") == "that provides it")
    }
}
