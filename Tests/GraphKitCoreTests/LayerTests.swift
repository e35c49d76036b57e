import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// The layers of docs/ARCHITECTURE.md are targets, and these tests keep them so: the core and the
/// containers library cannot reach GStreamer (no target they depend on, however indirectly, is a
/// GStreamer module, so `import CGStreamer` there does not compile), and the nodes and Assets, which
/// could, import none (they build elements through GraphKitRuntime's Swift API only).
@Suite struct LayerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// GStreamer's headers, the C glue over them, and the graphkit GStreamer plugin's elements.
    static let gstreamerModules: Set<String> = ["CGStreamer", "CGraphKitGlue", "GstGraphKit"]

    /// The modules a Swift file imports, whatever the form (`import X`, `public import X`,
    /// `@preconcurrency import X`, `@_implementationOnly import X`, `import struct X.Y`).
    static func imports(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") && !["public", "package", "internal", "private", "fileprivate"].contains($0) }
            guard words.count >= 2, words[0] == "import" else { return nil }
            let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"]
            let name = words.count >= 3 && kinds.contains(words[1]) ? words[2] : words[1]
            return String(name.split(separator: ".")[0])
        }
    }

    /// Each target's direct dependencies, by name, from the manifest as SwiftPM reads it.
    static func targets() throws -> [String: [String]] {
        let json = try manifest()
        var result: [String: [String]] = [:]
        for target in try #require(json["targets"] as? [[String: Any]]) {
            let name = try #require(target["name"] as? String)
            let deps = (target["dependencies"] as? [[String: [Any]]] ?? []).compactMap { $0.values.first?.first as? String }
            result[name] = deps
        }
        return result
    }

    /// The manifest as SwiftPM reads it (`swift package dump-package`).
    static func manifest() throws -> [String: Any] {
        // A scratch folder of its own: `swift test` holds the package's .build locked while it runs.
        let scratch = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let data = Data(try TestMedia.runTool("swift", ["package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package"]).utf8)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func closure(of target: String, in targets: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var next = [target]
        while let t = next.popLast() {
            for d in targets[t] ?? [] where seen.insert(d).inserted { next.append(d) }
        }
        return seen
    }

    @Test(.media, .timeLimit(.minutes(10)))
    func theCoreAndTheContainersCannotReachGStreamer() throws {
        let targets = try Self.targets()
        for layer in ["GraphKitCore", "MediaContainers", "ImageCodecs"] {
            #expect(targets[layer] != nil, "no target \(layer)")
            let reached = Self.closure(of: layer, in: targets)
            #expect(reached.isDisjoint(with: Self.gstreamerModules), "\(layer) depends on \(reached.intersection(Self.gstreamerModules))")
        }
        // The runtime is where GStreamer is: if it stopped depending on it, this test would be stale.
        #expect(Self.closure(of: "GraphKitRuntime", in: targets).isSuperset(of: Self.gstreamerModules))
    }

    /// A file imports only targets its own target depends on (directly or not): an import that
    /// builds only because SwiftPM happened to build the other module first breaks another
    /// build's order (`make fuzz`'s did: Nodes imported the GraphKit umbrella).
    @Test(.media, .timeLimit(.minutes(10)))
    func everyImportIsADeclaredDependency() throws {
        let targets = try Self.targets()
        var strays: [String] = []
        let sources = Self.root.appendingPathComponent("Sources")
        for target in try FileManager.default.contentsOfDirectory(atPath: sources.path) where targets[target] != nil {
            let allowed = Self.closure(of: target, in: targets).union([target])
            for file in try FileManager.default.subpathsOfDirectory(atPath: sources.appendingPathComponent(target).path) where file.hasSuffix(".swift") {
                let text = try String(contentsOf: sources.appendingPathComponent("\(target)/\(file)"), encoding: .utf8)
                for module in Self.imports(in: text) where targets[module] != nil && !allowed.contains(module) {
                    strays.append("Sources/\(target)/\(file) imports \(module)")
                }
            }
        }
        #expect(strays.isEmpty, "imports of targets not depended on: \(strays)")
    }

    /// The import reader the checks here rely on sees every form of import (a check that missed
    /// `public import CGStreamer` would pass a file that breaks the layers).
    @Test func theImportReaderSeesEveryForm() {
        let text = """
            import A
            public import B
            package import C.Sub
            @preconcurrency import D
            @_implementationOnly import E
            import struct F.Thing
            internal import G
            // import H
            let importance = 1
            """
        #expect(Self.imports(in: text) == ["A", "B", "C", "D", "E", "F", "G"])
    }

    @Test func noLayerAboveTheRuntimeImportsGStreamer() throws {
        let importing = try ["GraphKitCore", "MediaContainers", "ImageCodecs", "Nodes", "Assets"].flatMap { layer in
            try FileManager.default.subpathsOfDirectory(atPath: Self.root.appendingPathComponent("Sources/\(layer)").path)
                .filter { $0.hasSuffix(".swift") }
                .filter { file in
                    let text = try String(contentsOf: Self.root.appendingPathComponent("Sources/\(layer)/\(file)"), encoding: .utf8)
                    return !Set(Self.imports(in: text)).isDisjoint(with: Self.gstreamerModules)
                }
                .map { "Sources/\(layer)/\($0)" }
        }
        #expect(importing.isEmpty, "these import a GStreamer module: \(importing)")
    }

    /// The shared library's targets import FoundationEssentials at most: full Foundation (and its
    /// ICU) would be loaded by every graphctl process and plugin host (FootprintTests checks the
    /// built graphctl). Apple's modules, which must re-export Foundation, are not in it.
    @Test(.media, .timeLimit(.minutes(10)))
    func theSharedLibraryImportsNoFullFoundation() throws {
        let json = try Self.manifest()
        let products = try #require(json["products"] as? [[String: Any]])
        let library = try #require(products.first { $0["name"] as? String == "GraphKitShared" })
        let targets = try Self.targets()
        var inLibrary = Set(try #require(library["targets"] as? [String]))
        for t in inLibrary { inLibrary.formUnion(Self.closure(of: t, in: targets)) }
        let apples: Set = ["AVFoundation", "CoreMedia", "CoreVideo", "CoreGraphics", "CoreImage", "CoreText", "ImageIO", "UniformTypeIdentifiers", "AudioToolbox"]
        #expect(inLibrary.isDisjoint(with: apples), "Apple's modules in the shared library: \(inLibrary.intersection(apples))")
        var importers: [String] = []
        for target in inLibrary.sorted() {
            let folder = Self.root.appendingPathComponent("Sources/\(target)")
            guard let files = FileManager.default.subpaths(atPath: folder.path) else { continue }
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                if !Set(Self.imports(in: text)).isDisjoint(with: ["Foundation", "FoundationNetworking", "FoundationXML"]) {
                    importers.append("Sources/\(target)/\(file)")
                }
            }
        }
        #expect(importers.isEmpty, "these bring full Foundation into libGraphKitShared.so: \(importers)")
    }
}
