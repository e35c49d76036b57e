import Glibc
import GraphKitCore

/// One generation of an HLS package: the folder, beside the playlist, that holds everything the
/// playlist lists (initialization and media segments, and a ladder's media playlists), named
/// after the playlist and a random number: `playlist.m3u8` → `playlist.3f9a0c61d2e4/`.
///
/// A package is replaced as a whole: a new packaging never writes over a file an earlier one
/// lists. It writes its generation in a folder no one has used, then renames its playlist over the
/// earlier one in one step (``OutputFile/commitReplacing(limit:)``), and only then removes the
/// generations that the replaced playlist named (``retire(replaced:sparing:)``). A player sees
/// the old package or the new one, whole; a failed or cancelled packaging removes its own
/// generation and leaves the earlier package as it was; two packagings at once each switch in a
/// complete package, the last one staying. A generation left by a killed run is removed by the
/// next run that replaces a playlist naming it, or stays as an unlisted folder.
package struct HLSGeneration: Sendable {
    /// The package's folder, as given.
    package let folder: String
    /// The generation's folder name in it.
    package let name: String
    /// The playlist's name without its extension: the generations' common prefix.
    let stem: String

    /// A generation for the playlist `playlist` in `folder`, at a name nothing holds yet (the
    /// folder itself is made with its first file, by the outputs' rule).
    package init(folder: String, playlist: String) {
        self.folder = folder
        stem = Self.stem(of: playlist)
        var name: String
        repeat {
            let n = UInt64.random(in: 0..<(1 << 48))
            let hex = String(n, radix: 16)
            name = stem + "." + String(repeating: "0", count: 12 - hex.count) + hex
        } while FileIdentity(path: WrittenFile.path(name, in: folder)) != nil
        self.name = name
    }

    /// `path` of a file in the generation: `folder/playlist.3f9a0c61d2e4/init.mp4`.
    package func path(_ file: String) -> String { WrittenFile.path(name + "/" + file, in: folder) }

    /// The name a playlist beside the generation lists `file` by: `playlist.3f9a0c61d2e4/init.mp4`.
    package func uri(_ file: String) -> String { name + "/" + file }

    /// Removes the generations the replaced playlist `replaced` named (its URIs' first folder, when
    /// it is a generation of this playlist and not this one): their files, and them. A file whose
    /// identity is in `sparing` (what the run reads) is left, and so its folder.
    package func retire(replaced: [UInt8]?, sparing: Set<FileIdentity> = []) {
        guard let replaced else { return }
        for old in Self.generations(named: String(decoding: replaced, as: UTF8.self), stem: stem) where old != name {
            Self.removeTree(WrittenFile.path(old, in: folder), depth: 2, sparing: sparing)
        }
    }

    /// Removes this generation (a failed or cancelled packaging's), whatever it holds of ours.
    package func discard(sparing: Set<FileIdentity> = []) {
        Self.removeTree(path(""), depth: 2, sparing: sparing)
    }

    // MARK: Helpers

    static func stem(of playlist: String) -> String {
        guard let dot = playlist.lastIndex(of: "."), dot != playlist.startIndex else { return playlist }
        return String(playlist[..<dot])
    }

    /// The generations of `stem` that a playlist's text names, each once: the first folder of
    /// each URI line and `URI="…"` attribute, when it is `stem.` and twelve hex digits.
    static func generations(named text: String, stem: String) -> [String] {
        var uris: [Substring] = []
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            if !line.hasPrefix("#") {
                uris.append(line)
            } else {
                // Each `URI="…"` attribute's value.
                var rest = Substring(line)
                while let u = rest.firstIndex(of: "U") {
                    rest = rest[u...]
                    if rest.hasPrefix("URI=\"") {
                        let value = rest.dropFirst(5).prefix { $0 != "\"" }
                        uris.append(value)
                        rest = rest.dropFirst(5 + value.count)
                    } else {
                        rest = rest.dropFirst()
                    }
                }
            }
        }
        var found: [String] = []
        for uri in uris {
            guard let slash = uri.firstIndex(of: "/") else { continue }
            let first = String(uri[..<slash])
            guard first.hasPrefix(stem + "."), isGeneration(first.dropFirst(stem.count + 1)), !found.contains(first) else { continue }
            found.append(first)
        }
        return found
    }

    static func isGeneration(_ suffix: Substring) -> Bool {
        suffix.utf8.count == 12 && suffix.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Removes the folder at `path` and what it holds, `depth` levels of folders down, without
    /// following a link (a link is removed, not where it leads). What it cannot remove, or
    /// spares, stays, and so does its folder.
    static func removeTree(_ path: String, depth: Int, sparing: Set<FileIdentity>) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        removeContents(of: fd, depth: depth, sparing: sparing)
        close(fd)
        rmdir(path)
    }

    private static func removeContents(of folder: Int32, depth: Int, sparing: Set<FileIdentity>) {
        let copy = dup(folder)
        guard copy >= 0, let dir = fdopendir(copy) else { return }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != ".", name != ".." { names.append(name) }
        }
        for name in names {
            var info = stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                guard depth > 0 else { continue }
                let sub = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard sub >= 0 else { continue }
                removeContents(of: sub, depth: depth - 1, sparing: sparing)
                close(sub)
                unlinkat(folder, name, AT_REMOVEDIR)
            } else if !sparing.contains(FileIdentity(info)) {
                unlinkat(folder, name, 0)
            }
        }
    }
}
