import Glibc
import GraphKit

/// `graphctl probe`'s Live Photo pairing. An iPhone's Live Photo is two files side by side:
/// `IMG_1234.HEIC` (whose EXIF maker note holds a content identifier) and `IMG_1234.MOV` (whose
/// `com.apple.quicktime.content.identifier` repeats it, with the still's time in a timed-metadata
/// track). A probe of either names the other when it lies beside it with the same stem and the
/// same identifier; an identifier that differs is said, not paired.
extension Probe {
    /// What a Live Photo's half says, for `--json` (`livePhoto`) and the text line.
    struct LivePhoto {
        let contentIdentifier: String
        /// The other half, when found beside it with the same stem: its name and whether its
        /// identifier is the same.
        var other: (name: [UInt8], paired: Bool)?
        var stillImageTime: Double?

        var json: JSONValue {
            var members: [(key: String, value: JSONValue)] = [("contentIdentifier", .string(contentIdentifier))]
            if let other {
                members += [("pairedWith", .string(InputList.escaped(other.name))), ("paired", .bool(other.paired))]
            }
            if let t = stillImageTime { members.append(("stillImageTime", .number((t * 1_000_000).rounded() / 1_000_000))) }
            return .object(members)
        }

        var text: String {
            var s = "Live Photo \(TerminalText.escaped(contentIdentifier))"
            if let t = stillImageTime { s += ", the still at \(fixed(t, 3)) s" }
            if let other {
                let name = TerminalText.escaped(String(decoding: other.name, as: UTF8.self))
                s += other.paired ? ", paired with \(name)" : "; \(name) beside it has another identifier: not paired"
            }
            return s
        }
    }

    /// The still's half: its identifier, and the movie beside it (`.MOV` or `.mov`).
    static func livePhoto(still path: [UInt8], identifier: String) -> LivePhoto {
        var found = LivePhoto(contentIdentifier: identifier)
        for name in sibling(of: path, extensions: ["MOV", "mov"]) {
            guard let movie = readRegularFile(name, LivePhotoMovie.read) else { continue }
            found.other = (name, movie.contentIdentifier == identifier)
            found.stillImageTime = movie.stillImageTime
            break
        }
        return found
    }

    /// The movie's half: its identifier and still's time, and the HEIC beside it.
    static func livePhoto(movie path: [UInt8], _ movie: LivePhotoMovie) -> LivePhoto {
        var found = LivePhoto(contentIdentifier: movie.contentIdentifier, stillImageTime: movie.stillImageTime)
        for name in sibling(of: path, extensions: ["HEIC", "heic"]) {
            let id: String?? = readRegularFile(name) { bytes in (try? HEIFFile.read(bytes)).map { contentIdentifier(of: $0, bytes: bytes) } }
            guard let id else { continue }
            found.other = (name, id == movie.contentIdentifier)
            break
        }
        return found
    }

    /// The content identifier in the EXIF of a HEIF file's primary image.
    static func contentIdentifier(of file: HEIFFile, bytes: some ByteSource) -> String? {
        guard let primary = file.primary else { return nil }
        return file.items(referring: "cdsc", to: primary.id).first { $0.type == "Exif" }
            .flatMap { try? file.data(of: $0, in: bytes) }.flatMap(EXIFTags.init(heifExifItem:))?.contentIdentifier
    }

    /// The names beside `path` with its stem and each of `extensions`.
    static func sibling(of path: [UInt8], extensions: [String]) -> [[UInt8]] {
        let slash = path.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0
        guard let dot = path[slash...].lastIndex(of: UInt8(ascii: ".")), dot > slash else { return [] }
        return extensions.map { Array(path[..<dot]) + [UInt8(ascii: ".")] + Array($0.utf8) }.filter { $0 != path }
    }

    /// `read` of the regular file named `name` (opened without blocking: a FIFO or a device there
    /// is passed over, as is a name that is not there).
    static func readRegularFile<T>(_ name: [UInt8], _ read: (FileBytes) -> T?) -> T? {
        let fd = InputList.withCString(name) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        return read(FileBytes(descriptor: fd))
    }
}
