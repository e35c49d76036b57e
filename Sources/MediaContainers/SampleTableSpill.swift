/// A sample table's entries as the file stores them (big-endian), appended one at a time: held
/// in memory up to a bound, and past it moved to a ``TemporaryFile`` in pieces of that bound, so
/// a recording of hours holds at most a piece a table (issue 71: a 10-hour camera's sizes alone
/// are 4.3 MB). Append-only: a box made of its first bytes (``MP4Box/Content/spilled``) stays
/// right while more come. When the temporary file cannot be made or written (no room, no
/// permission), the entries stay in memory, as with no bound: nothing is lost.
///
/// One writer appends; a box reads it after (the writer's thread, at the end of the file).
package final class SampleTableSpill: @unchecked Sendable {
    /// The bytes after those in the file.
    private var memory: [UInt8] = []
    private var file: TemporaryFile?
    /// How many bytes the file holds (0 before the first piece).
    private(set) var fileBytes: UInt64 = 0
    /// Past this many bytes in memory, they go to the file (never, at `.max`).
    let bound: Int
    /// Set once moving them failed: everything stays in memory from then on.
    private var stayInMemory = false

    /// Where the temporary file is made (nil: ``TemporaryFile/folder``).
    let folder: String?

    /// `bound`: the bytes held in memory before they move to a temporary file (nil: never).
    package init(bound: Int?, folder: String? = nil) {
        self.bound = bound ?? .max
        self.folder = folder
    }

    /// All the bytes appended.
    package var count: UInt64 { fileBytes + UInt64(memory.count) }

    /// What it holds in memory (its room to grow included).
    package var memoryBytes: Int { memory.capacity }

    package func append(_ v: UInt32) {
        if memory.capacity == 0, bound < .max { memory.reserveCapacity(bound + 8) }  // never more than the bound
        memory.appendU32(v)
        if memory.count >= bound, !stayInMemory { moveToFile() }
    }

    package func append(_ a: UInt32, _ b: UInt32) {
        if memory.capacity == 0, bound < .max { memory.reserveCapacity(bound + 8) }
        memory.appendU32(a)
        memory.appendU32(b)
        if memory.count >= bound, !stayInMemory { moveToFile() }
    }

    private func moveToFile() {
        do {
            let file = try file ?? TemporaryFile(in: folder)
            self.file = file
            try memory.withUnsafeBytes { raw in Result { () throws(ContainerError) in try file.write(raw, at: fileBytes) } }.get()
            fileBytes += UInt64(memory.count)
            memory.removeAll(keepingCapacity: true)
        } catch {
            stayInMemory = true
        }
    }

    /// Hands the first `length` bytes to `emit` in pieces of at most `pieceBytes`, in order.
    /// Throws when the temporary file cannot be read back (errno's words).
    package func read(_ length: UInt64, inPiecesOf pieceBytes: Int, emit: (UnsafeRawBufferPointer) throws(ContainerError) -> Void) throws(ContainerError) {
        precondition(length <= count, "a spilled table is read past what it holds")
        var at: UInt64 = 0
        if fileBytes > 0, let file {
            let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, pieceBytes), alignment: 16)
            defer { piece.deallocate() }
            while at < min(length, fileBytes) {
                let n = Int(min(UInt64(piece.count), min(length, fileBytes) - at))
                let got: Int
                do {
                    got = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: piece[0..<n]), at: at)
                } catch {
                    throw ContainerError("cannot read back the index kept in \"\(file.folder)\": \(error.reason)")
                }
                guard got == n else { throw ContainerError("the index kept in \"\(file.folder)\" ends at byte \(at + UInt64(got)) of \(fileBytes)") }
                try emit(UnsafeRawBufferPointer(rebasing: piece[0..<n]))
                at += UInt64(n)
            }
        }
        guard at < length else { return }
        let rest = Int(length - at)
        try memory.withUnsafeBytes { raw in
            Result { () throws(ContainerError) in
                var i = 0
                while i < rest {
                    let n = min(max(1, pieceBytes), rest - i)
                    try emit(UnsafeRawBufferPointer(rebasing: raw[i..<(i + n)]))
                    i += n
                }
            }
        }.get()
    }
}

/// The first `length` bytes of a ``SampleTableSpill`` between bytes before and after them: a
/// sample table's box body (its version, flags and count; its entries; the run still open).
package struct SpilledBody: Sendable, Equatable {
    package let leading: [UInt8]
    package let table: SampleTableSpill
    package let length: UInt64
    package let trailing: [UInt8]

    package var count: UInt64 { UInt64(leading.count) + length + UInt64(trailing.count) }

    package static func == (a: Self, b: Self) -> Bool {
        a.leading == b.leading && a.table === b.table && a.length == b.length && a.trailing == b.trailing
    }

    /// The body in pieces (``SampleTableSpill/read(_:inPiecesOf:emit:)``).
    package func write(inPiecesOf pieceBytes: Int, emit: (UnsafeRawBufferPointer) throws(ContainerError) -> Void) throws(ContainerError) {
        try leading.withUnsafeBytes { raw in Result { () throws(ContainerError) in try emit(raw) } }.get()
        try table.read(length, inPiecesOf: pieceBytes, emit: emit)
        try trailing.withUnsafeBytes { raw in Result { () throws(ContainerError) in try emit(raw) } }.get()
    }

    /// The body whole, read back; nil when the temporary file cannot be read.
    package var bytes: [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(Int(clamping: count))
        do {
            try write(inPiecesOf: 1 << 20) { raw in out.append(contentsOf: raw) }
        } catch {
            return nil
        }
        return out
    }
}
