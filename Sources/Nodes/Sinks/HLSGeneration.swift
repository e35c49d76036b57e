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
/// complete package, the last one staying.
///
/// A packaging holds a lock (`flock`) on its generation folder from its first file until it
/// ends, so a folder of this playlist's that nobody holds is a killed run's: the next packaging
/// that switches its playlist in removes such folders too, those the replaced playlist named and
/// those nobody names (a run killed before its switch), but never one a running packaging holds
/// (a live one's, whose playlist another switched out) nor one made after it started.
package struct HLSGeneration: Sendable {
    /// The package's folder, as given.
    package let folder: String
    /// The generation's folder name in it.
    package let name: String
    /// The playlist's name without its extension: the generations' common prefix.
    let stem: String
    /// The lock on the folder, held from ``hold()`` until the packaging is dropped.
    private let lock = Lock()

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

    /// Takes the lock on the generation's folder, once it is made (with its first file): from now
    /// until this packaging ends, no other one removes it. Later calls do nothing.
    package func hold() { lock.hold(path("")) }

    /// Removes, once this packaging's playlist is in place, the generations nobody needs: those
    /// the replaced playlist `replaced` named (its URIs' first folder, when it is a generation of
    /// this playlist and not this one), and, the first time, those of this playlist that no
    /// playlist names, left by a killed run. A generation a running packaging holds stays; so does
    /// one not made by this user or changed since this one was held. A file whose identity is in
    /// `sparing` (what the run reads) is left, and so its folder.
    package func retire(replaced: [UInt8]?, sparing: Set<FileIdentity> = []) {
        guard let fd = openFolder() else { return }
        defer { close(fd) }
        let named = replaced.map { Self.generations(named: String(decoding: $0, as: UTF8.self), stem: stem) } ?? []
        for old in named where old != name {
            RunFolder.removeIfAbandoned(old, in: fd, depth: 2, sparing: sparing, changedBefore: nil)
        }
        guard let since = lock.sweepOnce() else { return }
        for old in RunFolder.names(in: fd) where old != name && !named.contains(old)
            && old.hasPrefix(stem + ".") && Self.isGeneration(old.dropFirst(stem.count + 1)) {
            RunFolder.removeIfAbandoned(old, in: fd, depth: 2, sparing: sparing, changedBefore: since)
        }
    }

    /// Lets go of the lock on the folder: the packaging is over.
    package func release() { lock.release() }

    /// Removes this generation (a failed or cancelled packaging's), whatever it holds of ours,
    /// and lets go of its lock.
    package func discard(sparing: Set<FileIdentity> = []) {
        if let fd = openFolder() {
            RunFolder.removeTree(name, in: fd, depth: 2, sparing: sparing)
            close(fd)
        }
        lock.release()
    }

    /// The lock a packaging holds on its generation folder: the folder's descriptor, locked, and
    /// when it was taken. Closed (and so let go) when the packaging ends or is dropped; a killed
    /// run's goes with its process.
    private final class Lock: Sendable {
        private struct Held { var descriptor: Int32 = -1; var since: timespec?; var swept = false }
        private let held = Guarded(Held())

        func hold(_ path: String) {
            held.withLock { h in
                guard h.descriptor < 0, h.since == nil else { return }
                let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard fd >= 0 else { return }
                guard let since = RunFolder.lock(fd) else {
                    close(fd)
                    return
                }
                h.descriptor = fd
                h.since = since
            }
        }

        /// When the lock was taken, the first time it is asked (the one sweep of a packaging);
        /// nil after, or when it was never taken.
        func sweepOnce() -> timespec? {
            held.withLock { h in
                guard !h.swept, let since = h.since else { return nil }
                h.swept = true
                return since
            }
        }

        func release() {
            held.withLock { h in
                if h.descriptor >= 0 { close(h.descriptor) }
                h.descriptor = -1
            }
        }

        deinit { release() }
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

    /// Opens the package's folder for the sweeps, or nil.
    private func openFolder() -> Int32? {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        return fd >= 0 ? fd : nil
    }

    static func isGeneration(_ suffix: Substring) -> Bool {
        suffix.utf8.count == 12 && suffix.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
