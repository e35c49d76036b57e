@testable import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// An export keeps its asset's metadata (``AssetExportSession/metadata`` by default): the tags,
/// cover, place, chapters, each track's language and the creation time, on both of its ways (an
/// encode through a graph, a passthrough copy of the index), into MP4, M4A and MOV; ffprobe
/// reads them back.
@Suite(.media, .serialized, .timeLimit(.minutes(10))) struct ExportSourceTagsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func export(_ source: String, _ preset: ExportPreset, to output: String, type: Assets.FileType) async throws -> TaggedMedia.Probe {
        let session = try AssetExportSession(asset: try Asset(path: source), preset: preset)
        session.outputPath = path(output)
        session.outputFileType = type
        try await session.export()
        #expect(session.status == .completed)
        return try TaggedMedia.probe(path(output))
    }

    func expectKept(_ p: TaggedMedia.Probe, video: Bool, _ what: String) {
        #expect(p.tags["title"] == TaggedMedia.title && p.tags["artist"] == TaggedMedia.artist && p.tags["album"] == TaggedMedia.album
                && p.tags["date"] == TaggedMedia.date, "\(what): \(p.tags)")
        #expect(p.tags["creation_time"] == TaggedMedia.creationTime, "\(what): \(p.tags)")
        #expect(p.language(of: "audio") == "fra", "\(what): \(p.streams)")
        if video { #expect(p.language(of: "video") == "deu", "\(what): \(p.streams)") }
        #expect(p.chapters.map(\.title) == TaggedMedia.chapters.map(\.title), "\(what): \(p.chapters)")
    }

    @Test(arguments: [ExportPreset.appleM4A, .passthrough]) func anM4AKeepsItsMetadata(_ preset: ExportPreset) async throws {
        let src = try TaggedMedia.m4a(in: folder)
        let p = try await export(src, preset, to: "out.m4a", type: .m4a)
        expectKept(p, video: false, "\(preset)")
        #expect(p.hasCover, "\(preset): \(p.streams)")
    }

    @Test(arguments: [ExportPreset.sd640x480, .passthrough]) func aMovieKeepsItsMetadataInMP4AndMOV(_ preset: ExportPreset) async throws {
        let src = try TaggedMedia.movie(in: folder)
        for (name, type) in [("out.mp4", Assets.FileType.mp4), ("out.mov", .mov)] {
            let p = try await export(src, preset, to: "\(preset)-\(name)", type: type)
            expectKept(p, video: true, "\(preset) \(name)")
            #expect(p.tags["location"] == TaggedMedia.location, "\(preset) \(name): \(p.tags)")
        }
    }
}
