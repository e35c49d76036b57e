import CGraphKitPlugin
import Glibc

/// What a plugin's ELF note says (`GRAPHKIT_PLUGIN_NOTE` in graphkit_plugin.h), read from the
/// file with `pread` before the file is loaded: nothing of the plugin runs to produce it.
public struct PluginNote: Sendable, Equatable {
    public var abiVersion: UInt32
    public var graphKitVersion: String
    /// The compiler that compiled the note (`__VERSION__`): the toolchain's clang.
    public var toolchain: String
    public var name: String
    public var version: String

    public init(abiVersion: UInt32, graphKitVersion: String, toolchain: String, name: String, version: String) {
        self.abiVersion = abiVersion
        self.graphKitVersion = graphKitVersion
        self.toolchain = toolchain
        self.name = name
        self.version = version
    }

    /// Why a file carries no usable note: said after "not a GraphKit plugin: ".
    public enum Problem: Error, Equatable {
        case notELF, notSharedObject, unsupportedELF(String), damaged(String), noNote
        public var description: String {
            switch self {
            case .notELF: "not an ELF shared object"
            case .notSharedObject: "an ELF file, but not a shared object"
            case .unsupportedELF(let what): "an ELF file of another kind (\(what))"
            case .damaged(let what): "a damaged ELF file (\(what))"
            case .noNote: "it carries no GraphKit note (GRAPHKIT_PLUGIN_NOTE, docs/PLUGINS.md)"
            }
        }
    }

    /// Reads the note from a file through its descriptor, never by name. The file is read with
    /// positioned reads only (the descriptor's offset is left alone), each bounded by its size.
    public static func read(from fd: Int32) -> Result<PluginNote, Problem> {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(.damaged("cannot stat it")) }
        let size = Int(st.st_size)
        func bytes(_ offset: Int, _ count: Int) -> [UInt8]? {
            guard offset >= 0, count >= 0, offset <= size, count <= size - offset else { return nil }
            var buffer = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return nil }
                done += n
            }
            return buffer
        }
        return parse(size: size, read: bytes)
    }

    /// The note in an ELF image of `size` bytes, which `read(offset, count)` gives piecewise
    /// (nil past the end). Only 64-bit little-endian shared objects are read: the machines
    /// GraphKit runs on.
    static func parse(size: Int, read: (Int, Int) -> [UInt8]?) -> Result<PluginNote, Problem> {
        guard let header = read(0, 64), Array(header[0..<4]) == [0x7f, 0x45, 0x4c, 0x46] else { return .failure(.notELF) }
        guard header[4] == 2 else { return .failure(.unsupportedELF("32-bit")) }
        guard header[5] == 1 else { return .failure(.unsupportedELF("big-endian")) }
        guard le16(header, 16) == 3 else { return .failure(.notSharedObject) }  // ET_DYN
        // A damaged offset may be any 64-bit number: clamped, it is past the end like any other.
        let phoff = Int(clamping: le64(header, 32)), phentsize = Int(le16(header, 54)), phnum = Int(le16(header, 56))
        guard phentsize >= 56, phnum > 0, phnum < 4096 else { return .failure(.damaged("no program headers")) }
        guard let table = read(phoff, phentsize * phnum) else { return .failure(.damaged("program headers past the end")) }
        for i in 0..<phnum {
            let entry = i * phentsize
            guard le32(table, entry) == 4 else { continue }  // PT_NOTE
            let offset = Int(clamping: le64(table, entry + 8)), filesz = Int(clamping: le64(table, entry + 32))
            let align = le64(table, entry + 48) == 8 ? 8 : 4
            // Notes are small; a huge note segment is not read whole.
            guard filesz <= 1 << 20, let notes = read(offset, filesz) else { return .failure(.damaged("a note segment past the end")) }
            var at = 0
            while at + 12 <= notes.count {
                let nameSize = Int(le32(notes, at)), descSize = Int(le32(notes, at + 4)), type = le32(notes, at + 8)
                let nameAt = at + 12, descAt = nameAt + round(nameSize, align)
                let next = descAt + round(descSize, align)
                guard descAt + descSize <= notes.count else {
                    return .failure(.damaged("a note runs past its segment"))
                }
                let owner = notes[nameAt..<nameAt + nameSize]
                if type == GRAPHKIT_PLUGIN_NOTE_TYPE, Array(owner) == Array(GRAPHKIT_PLUGIN_NOTE_OWNER.utf8) + [0] {
                    return decode(Array(notes[descAt..<descAt + descSize]))
                }
                at = next
            }
        }
        return .failure(.noNote)
    }

    /// The note's contents, laid out as `GraphKitPluginNote`.
    static func decode(_ d: [UInt8]) -> Result<PluginNote, Problem> {
        guard d.count >= MemoryLayout<GraphKitPluginNote>.size else { return .failure(.damaged("a GraphKit note too short")) }
        var at = 4
        func text(_ size: Int) -> String {
            defer { at += size }
            let field = d[at..<at + size]
            return String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
        }
        return .success(PluginNote(abiVersion: le32(d, 0), graphKitVersion: text(32), toolchain: text(160), name: text(64), version: text(32)))
    }

    private static func round(_ n: Int, _ align: Int) -> Int { (n + align - 1) / align * align }
    private static func le16(_ b: [UInt8], _ at: Int) -> UInt16 { UInt16(b[at]) | UInt16(b[at + 1]) << 8 }
    private static func le32(_ b: [UInt8], _ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * $1) } }
    private static func le64(_ b: [UInt8], _ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * $1) } }
}
