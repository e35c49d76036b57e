import Foundation

/// An HLS package's files as a test compares them: a package's files are in a generation folder
/// beside its top playlist (`playlist.3f9a0c61d2e4/segment0.m4s`, issue 47), which these helpers
/// see through, so a test states the names a package holds whatever its generation is called.
public enum HLSPackageFiles {
    /// Whether `name` is a generation folder's: a stem, a dot and twelve hex digits.
    public static func isGeneration(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let suffix = name[name.index(after: dot)...]
        return suffix.count == 12 && suffix.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    /// The names in `folder`, sorted, each generation folder replaced by what it holds.
    public static func list(_ folder: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.flatMap { name in
            isGeneration(name) ? ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + name)) ?? []) : [name]
        }.sorted()
    }

    /// The generation folders in `folder`, sorted.
    public static func generations(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter(isGeneration).sorted()
    }

    /// `uri` without its generation folder: `playlist.3f9a0c61d2e4/segment0.m4s` → `segment0.m4s`.
    public static func withoutGeneration(_ uri: String) -> String {
        guard let slash = uri.firstIndex(of: "/"), isGeneration(String(uri[..<slash])) else { return uri }
        return String(uri[uri.index(after: slash)...])
    }
}
