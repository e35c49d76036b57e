import Glibc
import GraphKit

/// A file named on the command line, by its bytes. Swift gives a command its arguments as
/// `String`s, a byte that is not UTF-8 replaced by U+FFFD, so a file named `caf\xE9.mp4` was
/// opened as `caf�.mp4` and reported missing (66). Here the argument's own bytes are found again
/// in `argv`, the file is opened by them, and what reads it by name is given a name that leads
/// to that open file (`/proc/self/fd/N`, as `graphctl batch`'s workers do); messages show the
/// name with its stray bytes and control characters escaped (``shown``). A name that is UTF-8 is
/// used as it is, and nothing is opened here.
final class InputPath {
    /// The name's bytes, as the file system has them.
    let bytes: [UInt8]
    /// The name as messages show it: UTF-8 as it is, a stray byte as `\xE9`, a control character
    /// escaped (``TerminalText``).
    let shown: String
    /// What to open it by: the argument itself, or `/proc/self/fd/N` of the file opened by its
    /// bytes; nil when that file cannot be opened (`openError` says why).
    private(set) var path: String?
    private(set) var openError: Int32 = 0
    private var descriptor: Int32 = -1

    init(argument: String) {
        bytes = Self.bytes(of: argument)
        shown = TerminalText.escaped(InputList.escaped(bytes))
        guard String(validating: bytes, as: UTF8.self) == nil else {
            path = argument
            return
        }
        let fd = InputList.withCString(bytes) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY) }
        if fd >= 0 {
            descriptor = fd
            path = "/proc/self/fd/\(fd)"
        } else {
            openError = errno
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Whether the name is not UTF-8 (read through `/proc/self/fd`).
    var isReopened: Bool { descriptor >= 0 }

    /// `error` with the name that leads to the open file replaced by ``shown`` (and a name the
    /// user gave as it is, with its control characters escaped).
    func named(_ error: GraphError) -> GraphError {
        var e = error
        e.problems = e.problems.map { problem in
            var p = problem
            if let path, path != shown {
                p.message = p.message.replacing(path, with: shown)
                p.location = p.location?.replacing(path, with: shown)
            }
            return p
        }
        return e
    }

    /// The bytes `argument` came from: the `argv` entry that decodes to it, when it holds a
    /// replacement character; else its UTF-8.
    static func bytes(of argument: String) -> [UInt8] {
        guard argument.unicodeScalars.contains("\u{FFFD}") else { return Array(argument.utf8) }
        for i in 0..<Int(CommandLine.argc) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            let raw = Array(UnsafeRawBufferPointer(start: p, count: strlen(p)))
            if String(decoding: raw, as: UTF8.self) == argument { return raw }
        }
        return Array(argument.utf8)
    }
}
