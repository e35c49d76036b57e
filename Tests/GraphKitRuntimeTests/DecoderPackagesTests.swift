import CGStreamer
import CGraphKitGlue
import Foundation
import GraphKit
import Testing
import TestSupport

/// `GStreamer.decoders` against Debian's own packaging: every package a missing-decoder message
/// advises declares, in its `Gstreamer-Decoders` field (what PackageKit's codec installer reads),
/// that it decodes that kind of stream. (DebianPackagesTests checks each element's package.)
@Suite(.media, .enabled(if: aptKnowsDecoders, "needs apt-cache with Debian's package lists"))
struct DecoderPackagesTests {
    /// The caps in a package's `Gstreamer-Decoders` field, as `apt-cache show` prints it.
    static func declaredDecoders(of package: String) -> [String]? {
        guard let text = try? runAptCache(["show", package]) else { return nil }
        // The first record (the candidate); the field is one line of caps separated by ";".
        let record = text.components(separatedBy: "\n\n").first ?? ""
        guard let line = record.split(separator: "\n").first(where: { $0.hasPrefix("Gstreamer-Decoders:") }) else { return nil }
        return line.dropFirst("Gstreamer-Decoders:".count).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    static func runAptCache(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/apt-cache")
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test func everyAdvisedPackageDeclaresTheDecoder() throws {
        GStreamer.initialize()
        var declared: [String: [String]] = [:]
        for (key, element) in GStreamer.decoders.sorted(by: { $0.key < $1.key }) {
            let package = try #require(GStreamer.debianPackage(decoding: key), "\(key): \(element) has no package in the table")
            if declared[package] == nil { declared[package] = Self.declaredDecoders(of: package) ?? [] }
            let wanted = try #require(gst_caps_from_string(key), "\(key) is not caps")
            defer { gk_caps_unref(wanted) }
            let matches = declared[package]!.contains { entry in
                guard let caps = gst_caps_from_string(entry) else { return false }
                defer { gk_caps_unref(caps) }
                return gst_caps_can_intersect(caps, wanted) != 0
            }
            #expect(matches, "\(package) does not declare a decoder for \(key) (GraphKit advises it for \(element))")
        }
    }

    @Test func keysSeparateMP3FromAACAndTheProgramStream() {
        #expect(GStreamer.decoderKey(mediaType: "audio/mpeg", mpegVersion: 1) == "audio/mpeg, mpegversion=1")
        #expect(GStreamer.debianPackage(decoding: "audio/mpeg, mpegversion=1") == "gstreamer1.0-plugins-good")
        #expect(GStreamer.debianPackage(decoding: GStreamer.decoderKey(mediaType: "audio/mpeg", mpegVersion: 4)) == "gstreamer1.0-libav")
        #expect(GStreamer.decoderKey(mediaType: "video/mpeg", mpegVersion: 2, systemStream: true) == "video/mpeg, systemstream=true")
        #expect(GStreamer.decoderKey(mediaType: "video/x-h264", mpegVersion: nil) == "video/x-h264")
        #expect(GStreamer.debianPackage(decoding: "video/x-dirac") == nil)  // none known: none invented
    }
}

/// Whether apt-cache can say what Debian's GStreamer packages decode (its package lists are here).
private let aptKnowsDecoders: Bool = FileManager.default.isExecutableFile(atPath: "/usr/bin/apt-cache")
    && DecoderPackagesTests.declaredDecoders(of: "gstreamer1.0-plugins-base") != nil
