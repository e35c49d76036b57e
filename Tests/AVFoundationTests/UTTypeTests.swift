import AVFoundation
import Foundation
import Testing
import UniformTypeIdentifiers

/// UniformTypeIdentifiers' UTType as media code uses it: Apple's identifiers for the common types,
/// lookups by file name extension and MIME type, and the conformance tree.
@Suite(.timeLimit(.minutes(1))) struct UTTypeTests {
    /// Every static type has Apple's identifier.
    @Test func staticTypesHaveApplesIdentifiers() {
        let expected: [(UTType, String)] = [
            (.jpeg, "public.jpeg"), (.png, "public.png"), (.heic, "public.heic"), (.gif, "com.compuserve.gif"),
            (.tiff, "public.tiff"), (.bmp, "com.microsoft.bmp"), (.image, "public.image"), (.movie, "public.movie"),
            (.video, "public.video"), (.audio, "public.audio"), (.mpeg4Movie, "public.mpeg-4"),
            (.quickTimeMovie, "com.apple.quicktime-movie"), (.mpeg4Audio, "public.mpeg-4-audio"), (.mp3, "public.mp3"),
            (.wav, "com.microsoft.waveform-audio"), (.aiff, "public.aiff-audio"), (.data, "public.data"),
            (.content, "public.content"), (.item, "public.item"), (.audiovisualContent, "public.audiovisual-content"),
        ]
        for (type, identifier) in expected {
            #expect(type.identifier == identifier)
            #expect(type.isDeclared && !type.isDynamic)
            #expect(UTType(identifier) == type)
            #expect(type.description == identifier)
        }
        // CoreServices' older names are the same identifiers, usable where a CFString is taken.
        #expect(kUTTypeJPEG == UTType.jpeg.identifier)
        #expect(kUTTypePNG as CFString == UTType.png.identifier as CFString)
        #expect(kUTTypeGIF == "com.compuserve.gif" && kUTTypeMPEG4 == "public.mpeg-4" && kUTTypeQuickTimeMovie == "com.apple.quicktime-movie")
    }

    /// init?(_:) knows declared identifiers only (whatever their case), as Apple's.
    @Test func identifierLookupIsFailable() {
        #expect(UTType("com.example.not-declared") == nil)
        #expect(UTType("PUBLIC.JPEG") == .jpeg)
        #expect(UTType(AVFileType.mp4.rawValue) == .mpeg4Movie)
        #expect(UTType(AVFileType.mov.rawValue) == .quickTimeMovie)
        #expect(UTType(AVFileType.m4a.rawValue)?.conforms(to: .audio) == true)
        let imported = UTType(importedAs: "com.example.thing")
        #expect(imported.identifier == "com.example.thing" && !imported.isDeclared && !imported.conforms(to: .data))
    }

    /// Extensions and MIME types find the declared type; preferred tags are Apple's.
    @Test func lookupsByExtensionAndMIMEType() throws {
        #expect(UTType(filenameExtension: "jpg") == .jpeg)
        #expect(UTType(filenameExtension: "JPEG") == .jpeg)
        #expect(UTType(filenameExtension: "png") == .png)
        #expect(UTType(filenameExtension: "mp4") == .mpeg4Movie)
        #expect(UTType(filenameExtension: "mov") == .quickTimeMovie)
        #expect(UTType(filenameExtension: "mp3") == .mp3)
        #expect(UTType(filenameExtension: "wav") == .wav)
        #expect(UTType(filenameExtension: "m4a")?.conforms(to: .mpeg4Audio) == true)
        #expect(UTType(filenameExtension: "heic") == .heic)
        #expect(UTType(mimeType: "image/jpeg") == .jpeg)
        #expect(UTType(mimeType: "IMAGE/PNG") == .png)
        #expect(UTType(mimeType: "video/mp4") == .mpeg4Movie)
        #expect(UTType(mimeType: "video/quicktime") == .quickTimeMovie)
        #expect(UTType(mimeType: "audio/mpeg") == .mp3)
        #expect(UTType(mimeType: "audio/mp4") == .mpeg4Audio)
        #expect(UTType.jpeg.preferredFilenameExtension == "jpeg")
        #expect(UTType.jpeg.preferredMIMEType == "image/jpeg")
        #expect(UTType.png.preferredMIMEType == "image/png")
        #expect(UTType.mpeg4Movie.preferredFilenameExtension == "mp4")
        #expect(UTType.quickTimeMovie.preferredFilenameExtension == "mov")
        #expect(UTType.jpeg.tags[.filenameExtension] == ["jpeg", "jpg", "jpe"])
        #expect(UTType.image.preferredFilenameExtension == nil)
        // An extension constrained to a supertype it does not have gives a dynamic type.
        let notAnImage = try #require(UTType(filenameExtension: "mp4", conformingTo: .image))
        #expect(notAnImage.isDynamic && notAnImage != .mpeg4Movie && notAnImage.conforms(to: .image))
    }

    /// An unknown extension gives a dynamic type conforming to data only; malformed tags give nil.
    @Test func unknownTagsGiveDynamicTypes() throws {
        let unknown = try #require(UTType(filenameExtension: "zzq"))
        #expect(unknown.isDynamic && !unknown.isDeclared)
        #expect(unknown.identifier.hasPrefix("dyn."))
        #expect(unknown.conforms(to: .data) && unknown.conforms(to: .item) && !unknown.conforms(to: .image))
        #expect(unknown.preferredFilenameExtension == "zzq")
        #expect(UTType(filenameExtension: "") == nil)
        #expect(UTType(filenameExtension: "tar.gz") == nil)
        #expect(UTType(mimeType: "not a mime type") == nil)
        #expect(UTType(mimeType: "application/x-graphkit-unknown")?.isDynamic == true)
    }

    /// The conformance tree: transitive, reflexive, and only upwards.
    @Test func conformance() {
        #expect(UTType.jpeg.conforms(to: .image))
        #expect(UTType.jpeg.conforms(to: .data) && UTType.jpeg.conforms(to: .item) && UTType.jpeg.conforms(to: .content))
        #expect(UTType.jpeg.conforms(to: .jpeg))
        #expect(!UTType.jpeg.conforms(to: .png) && !UTType.jpeg.conforms(to: .movie))
        #expect(!UTType.image.conforms(to: .jpeg))
        #expect(UTType.heic.conforms(to: .image) && UTType.heic.conforms(to: .heif))
        #expect(UTType.mpeg4Movie.conforms(to: .movie) && UTType.mpeg4Movie.conforms(to: .audiovisualContent))
        #expect(!UTType.mpeg4Movie.conforms(to: .video))  // public.mpeg-4 is a movie, not a video, as Apple declares it
        #expect(UTType.video.conforms(to: .movie))
        #expect(UTType.quickTimeMovie.conforms(to: .movie))
        #expect(UTType.mpeg4Audio.conforms(to: .audio) && UTType.mp3.conforms(to: .audio) && UTType.wav.conforms(to: .audio))
        #expect(UTType.aiff.conforms(to: .audio) && !UTType.aiff.conforms(to: .movie))
        #expect(UTType.image.isSupertype(of: .png) && UTType.png.isSubtype(of: .image) && !UTType.png.isSubtype(of: .png))
        #expect(UTType.jpeg.supertypes == [.image, .data, .item, .content])
    }

    /// The general tag lookup and the descriptive properties.
    @Test func tagsAndDescriptions() {
        #expect(UTType(tag: "png", tagClass: .filenameExtension, conformingTo: nil) == .png)
        #expect(UTType(tag: "image/gif", tagClass: .mimeType, conformingTo: .image) == .gif)
        #expect(UTTagClass.filenameExtension.rawValue == "public.filename-extension" && UTTagClass.mimeType.rawValue == "public.mime-type")
        #expect(UTType.jpeg.isPublic && !UTType.quickTimeMovie.isPublic)
        #expect(UTType.jpeg.localizedDescription == "JPEG image")
        #expect(UTType(exportedAs: "public.png") == .png)
    }

    /// Encoded as its identifier, as Apple's.
    @Test func codableAsItsIdentifier() throws {
        let data = try JSONEncoder().encode([UTType.jpeg, .mpeg4Movie])
        #expect(String(decoding: data, as: UTF8.self) == #"["public.jpeg","public.mpeg-4"]"#)
        #expect(try JSONDecoder().decode([UTType].self, from: data) == [.jpeg, .mpeg4Movie])
    }
}
