@_spi(Engine) import Assets
@_spi(Engine) import GraphKitCore
import Synchronization

// An asset's chapters, as AVFoundation gives them: timed metadata groups, one a chapter, each
// with its time range and an item whose common key is the title; and the locales of the titles.

/// Metadata items that belong together, as AVFoundation's.
open class AVMetadataGroup: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (AVTimedMetadataGroup extends it), and the compiler
    // checks only final classes; it holds lets.
    public let items: [AVMetadataItem]
    public var classifyingLabel: String? { nil }
    public var uniqueID: String? { nil }

    public init(items: [AVMetadataItem]) { self.items = items }
}

/// Metadata items that hold for a time range, as AVFoundation's: a chapter of an asset.
open class AVTimedMetadataGroup: AVMetadataGroup, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; it adds one let.
    public let timeRange: CMTimeRange

    public init(items: [AVMetadataItem], timeRange: CMTimeRange) {
        self.timeRange = timeRange
        super.init(items: items)
    }
}

extension AVPartialAsyncProperty where Root: AVAsset {
    /// The locales of the chapter titles (see ``AVAsset/availableChapterLocales``).
    public static var availableChapterLocales: AVAsyncProperty<Root, [Locale]> {
        AVAsyncProperty("availableChapterLocales") { try $0.chapterLocales() }
    }
}

extension AVAsset {
    /// The locales of the chapter titles: one, the language the file states for them (a
    /// QuickTime chapter track's), or `und` (undetermined) when it states none, as an MP3's ID3
    /// chapters, a Nero chapter list or Vorbis comments do; none for a file without chapters.
    @available(*, deprecated, message: "Use load(.availableChapterLocales) instead")
    public var availableChapterLocales: [Locale] { (try? chapterLocales()) ?? [] }

    /// The chapters whose titles are in `locale`, each a group of one title item
    /// (`commonKeyTitle`, in the common key space) over the chapter's time range. Titles in an
    /// undetermined language are every locale's. GraphKit reads no chapter pictures, so
    /// `commonKeys` (which can only ask for `commonKeyArtwork`) adds nothing.
    @available(*, deprecated, message: "Use loadChapterMetadataGroups(withTitleLocale:containingItemsWithCommonKeys:) instead")
    public func chapterMetadataGroups(withTitleLocale locale: Locale, containingItemsWithCommonKeys commonKeys: [AVMetadataKey]?) -> [AVTimedMetadataGroup] {
        (try? chapterGroups(matching: [locale.identifier])) ?? []
    }

    /// The chapters whose titles are in the first of `preferredLanguages` (BCP 47: `en`,
    /// `fr-CA`) they are in; titles in an undetermined language are every language's. Empty
    /// when they are in none of them.
    @available(*, deprecated, message: "Use loadChapterMetadataGroups(bestMatchingPreferredLanguages:) instead")
    public func chapterMetadataGroups(bestMatchingPreferredLanguages preferredLanguages: [String]) -> [AVTimedMetadataGroup] {
        (try? chapterGroups(matching: preferredLanguages)) ?? []
    }

    /// ``chapterMetadataGroups(withTitleLocale:containingItemsWithCommonKeys:)``, loading the
    /// file if it is not yet: throws when it cannot be read.
    public func loadChapterMetadataGroups(withTitleLocale locale: Locale, containingItemsWithCommonKeys commonKeys: [AVMetadataKey] = []) async throws -> [AVTimedMetadataGroup] {
        try chapterGroups(matching: [locale.identifier])
    }

    /// ``chapterMetadataGroups(bestMatchingPreferredLanguages:)``, loading the file if it is not
    /// yet: throws when it cannot be read.
    public func loadChapterMetadataGroups(bestMatchingPreferredLanguages preferredLanguages: [String]) async throws -> [AVTimedMetadataGroup] {
        try chapterGroups(matching: preferredLanguages)
    }

    /// The same, with a completion handler.
    public func loadChapterMetadataGroups(bestMatchingPreferredLanguages preferredLanguages: [String],
                                          completionHandler: @escaping @Sendable ([AVTimedMetadataGroup]?, (any Error)?) -> Void) {
        do {
            completionHandler(try chapterGroups(matching: preferredLanguages), nil)
        } catch {
            completionHandler(nil, error)
        }
    }

    // MARK: Underneath

    func chapterLocales() throws -> [Locale] {
        let asset = try loaded()
        guard !asset.chapters.isEmpty else { return [] }
        return [Locale(identifier: asset.chapterLanguage.map(Self.languageCode) ?? "und")]
    }

    /// The chapter groups, when their titles' language is one of `languages` or undetermined.
    func chapterGroups(matching languages: [String]) throws -> [AVTimedMetadataGroup] {
        let asset = try loaded()
        if let stated = asset.chapterLanguage.map(Self.languageCode),
           !languages.contains(where: { Self.languageCode(Locale(identifier: $0).language.languageCode?.identifier ?? $0) == stated }) {
            return []
        }
        let tag = asset.chapterLanguage.map(Self.languageCode) ?? "und"
        return asset.chapters.map { chapter in
            let range = CMTimeRange(chapter.timeRange)
            let title = AVMetadataItem(AVMetadataItem.Fields(
                key: AVMetadataKey.commonKeyTitle.rawValue, keySpace: .common, value: .text(chapter.title),
                dataType: "com.apple.metadata.datatype.UTF-8", extendedLanguageTag: tag, time: range.start, duration: range.duration))
            return AVTimedMetadataGroup(items: [title], timeRange: range)
        }
    }

    /// A language as a BCP 47 code: ISO 639-2's three letters (`eng`, as files state it) as
    /// their two-letter form where there is one (`en`).
    static func languageCode(_ code: String) -> String {
        Locale.LanguageCode(code).identifier(.alpha2) ?? code.lowercased()
    }
}
