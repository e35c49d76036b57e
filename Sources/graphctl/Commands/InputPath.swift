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

    /// The name as Swift gave it (a stray byte as U+FFFD).
    let given: String

    convenience init(argument: String) {
        self.init(bytes: Self.bytes(of: argument), given: argument)
    }

    /// The file named by `bytes`, which Swift gave as `given`.
    init(bytes: [UInt8], given: String) {
        self.bytes = bytes
        self.given = given
        shown = TerminalText.escaped(InputList.escaped(bytes))
        guard String(validating: bytes, as: UTF8.self) == nil else {
            path = given
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

    /// `error` with the name that leads to the open file, and the name as Swift gave it,
    /// replaced by ``shown``.
    func named(_ error: GraphError) -> GraphError {
        var e = error
        e.problems = e.problems.map { problem in
            var p = problem
            for name in Set([path, given].compactMap { $0 }) where name != shown {
                p.message = p.message.replacing(name, with: shown)
                p.location = p.location?.replacing(name, with: shown)
            }
            return p
        }
        return e
    }

    /// The bytes `argument` came from: the `argv` entry that decodes to it, when it holds a
    /// replacement character; else its UTF-8.
    /// An option's value given as `--option=VALUE` is found too (`prefix` "--set=").
    static func bytes(of argument: String, prefix: String? = nil) -> [UInt8] {
        guard argument.unicodeScalars.contains("\u{FFFD}") else { return Array(argument.utf8) }
        for i in 0..<Int(CommandLine.argc) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            let raw = Array(UnsafeRawBufferPointer(start: p, count: strlen(p)))
            let text = String(decoding: raw, as: UTF8.self)
            if text == argument { return raw }
            if let prefix, text == prefix + argument { return Array(raw.dropFirst(prefix.utf8.count)) }
        }
        return Array(argument.utf8)
    }

    /// Refuses (64, at `option`) an output named on the command line by bytes that are not
    /// UTF-8: it would be written under the name Swift made of it (U+FFFD for the byte), which
    /// is another file.
    static func checkOutput(_ argument: String, option: String) throws(GraphError) {
        try checkOutput(bytes: bytes(of: argument), option: option)
    }

    static func checkOutput(bytes raw: [UInt8], option: String) throws(GraphError) {
        guard String(validating: raw, as: UTF8.self) == nil else { return }
        throw GraphError(.usage, at: option,
                         "\"\(TerminalText.escaped(InputList.escaped(raw)))\" is not UTF-8: graphctl reads inputs so named, and does not write outputs so named")
    }

    /// The files `overrides` (parsed from `texts`, the `--set` arguments as given) name for
    /// `graph` to read, whose names are not UTF-8: each opened by its bytes, and its override
    /// given the name that leads to it. An output so named is refused (64): it would be
    /// written under the name Swift made of it (U+FFFD for the byte), another file.
    static func reopenReads(_ overrides: [GraphLoader.Override], texts: [String], graph: Graph) throws(GraphError)
        -> (overrides: [GraphLoader.Override], reopened: [InputPath]) {
        var result = overrides, reopened: [InputPath] = []
        for (i, o) in overrides.enumerated() where i < texts.count && o.value.unicodeScalars.contains("\u{FFFD}") {
            guard let file = graph.fileParameters.first(where: { $0.node == o.node && $0.parameter == o.parameter }) else { continue }
            let raw = bytes(of: texts[i], prefix: "--set=")
            guard let eq = raw.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let value = Array(raw[(eq + 1)...])
            guard String(validating: value, as: UTF8.self) == nil else { continue }
            if file.writes { try checkOutput(bytes: value, option: "--set \(o.node).\(o.parameter)") }
            let input = InputPath(bytes: value, given: o.value)
            reopened.append(input)
            if let path = input.path { result[i].value = path }
        }
        return (result, reopened)
    }
}
