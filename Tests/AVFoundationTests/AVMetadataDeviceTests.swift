import AVFoundation
import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// What an upload service reads of a phone's movie with Apple's names: the device's make and
/// model among the common metadata, a Live Photo's content identifier by its identifier, and the
/// creation date; on a MOV that ffmpeg writes with QuickTime's keys, as a phone does.
@Suite(.media) struct AVMetadataDeviceTests {
    @Test func aPhonesMovieGivesItsDeviceLivePhotoIdentifierAndDate() async throws {
        let folder = try TestMedia.temporaryFolder()
        let movie = folder.appendingPathComponent("live.mov")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:d=1", "-c:v", "libx264",
                                         "-movflags", "use_metadata_tags",
                                         "-metadata", "com.apple.quicktime.content.identifier=7C1B2A4E-1111-4C4C-9D9D-0123456789AB",
                                         "-metadata", "com.apple.quicktime.make=Apple", "-metadata", "com.apple.quicktime.model=iPhone 15 Pro",
                                         "-metadata", "creation_time=2024-05-01T10:34:56Z", movie.path])
        let asset = AVURLAsset(url: movie)
        let common = try await asset.load(.commonMetadata)
        #expect(AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierMake).first?.stringValue == "Apple")
        #expect(AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierModel).first?.stringValue == "iPhone 15 Pro")
        let all = try await asset.load(.metadata)
        let identifier = AVMetadataItem.metadataItems(from: all, filteredByIdentifier: .quickTimeMetadataContentIdentifier).first
        #expect(identifier?.stringValue == "7C1B2A4E-1111-4C4C-9D9D-0123456789AB")
        #expect(AVMetadataItem.metadataItems(from: all, filteredByIdentifier: .quickTimeMetadataMake).first?.commonKey == .commonKeyMake)
        let created = try #require(try await asset.load(.creationDate))
        #expect(created.dateValue == (try Date("2024-05-01T10:34:56Z", strategy: .iso8601)))
    }
}
