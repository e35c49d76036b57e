import Glibc
import GraphKitCore

/// The names of a series of numbered files, from a path with one number in its file name, as
/// GStreamer's `splitmuxsink` and ffmpeg's segment muxer name theirs: `out/cam/rec-%05d.mp4`
/// gives `out/cam/rec-00000.mp4`, `out/cam/rec-00001.mp4` … (`%d` for no padding; a number
/// wider than its padding is written whole).
struct SegmentNames: Sendable, Equatable {
    /// The folder (`.` for the current one), and the file name's parts around the number.
    let folder: String
    let prefix: String
    let suffix: String
    let width: Int

    /// The pattern's parts; nil and why, for a path with no number, more than one, the number
    /// in a folder's name, or a `%` that is not one (`%s`, a bare `%`).
    static func parse(_ pattern: String) -> (names: SegmentNames?, problem: String?) {
        let (folder, name) = OutputFile.split(pattern)
        let why = "write one number in the file's name, %d or %05d (five digits), as in \"out/cam/rec-%05d.mp4\""
        if folder.contains("%") { return (nil, "\"\(pattern)\" has a % in its folder: the number goes in the file's name; \(why)") }
        let bytes = Array(name.utf8)
        guard let at = bytes.firstIndex(of: UInt8(ascii: "%")) else {
            return (nil, "\"\(pattern)\" names one file, and a series needs a number in its name: \(why)")
        }
        var i = at + 1
        var width = 1
        if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "0"), (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[i + 1]) {
            width = Int(bytes[i + 1] - UInt8(ascii: "0"))
            i += 2
        }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "d") else {
            return (nil, "\"\(pattern)\" has a % that is not a number: \(why)")
        }
        let suffix = String(decoding: bytes[(i + 1)...], as: UTF8.self)
        if suffix.contains("%") { return (nil, "\"\(pattern)\" has more than one %: \(why)") }
        let prefix = String(decoding: bytes[..<at], as: UTF8.self)
        if prefix.isEmpty, suffix.isEmpty { return (nil, "\"\(pattern)\" is a number alone: give the files an extension, as in \"rec-%05d.mp4\"") }
        if prefix.hasPrefix(".") { return (nil, "\"\(pattern)\" names hidden files: start the name with something other than a dot") }
        return (SegmentNames(folder: folder, prefix: prefix, suffix: suffix, width: width), nil)
    }

    /// File `n`'s name, and its path.
    func name(_ n: Int) -> String {
        let digits = String(n)
        return prefix + String(repeating: "0", count: max(0, width - digits.count)) + digits + suffix
    }

    func path(_ n: Int) -> String { folder == "." ? name(n) : WrittenFile.path(name(n), in: folder) }

    /// The number in `name` when it is one of the series' (up to 9 digits, padded or not).
    func number(ofName name: String) -> Int? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.utf8.count > prefix.utf8.count + suffix.utf8.count else { return nil }
        let middle = name.utf8.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        guard middle.count <= 9, middle.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int(String(decoding: middle, as: UTF8.self))
    }

    /// The first number after every file of the series already in the folder (0 when there is
    /// none, or no folder yet): a recorder started again goes on after its last file. The
    /// folder is listed once, each entry looked at by name only.
    func next() -> Int {
        guard let dir = opendir(folder) else { return 0 }
        defer { closedir(dir) }
        var highest = -1
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let n = number(ofName: name) { highest = max(highest, n) }
        }
        return highest + 1
    }

    /// Whether anything is at file `n`'s name or its temporary name (a link, a file, a pipe: not
    /// followed): such a number is skipped, so a series never replaces a file.
    func isTaken(_ n: Int) -> Bool {
        var s = stat()
        let file = path(n)
        let temporary = folder == "." ? OutputFile.temporaryName(for: name(n)) : WrittenFile.path(OutputFile.temporaryName(for: name(n)), in: folder)
        return lstat(file, &s) == 0 || lstat(temporary, &s) == 0
    }
}
