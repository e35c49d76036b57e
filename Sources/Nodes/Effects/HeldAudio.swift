import GraphKitCore

/// Bytes of PCM held first in, first out, in bounded memory: the newest up to `memoryLimit`
/// bytes in memory (plus at most the one append that passes it), everything older in a
/// ``SpillFile`` made when first needed. `effect.trimSilence` holds a quiet stretch here until it
/// knows whether the stretch is sent (sound returns) or dropped (the stream ends): an hour of
/// near-silence goes to the disk, not to memory.
///
/// The file keeps the oldest bytes, from `fileStart` to `fileEnd`; memory keeps the newer ones
/// from `memoryStart`. The file is emptied (its space given back) whenever it has been read to
/// its end, and compacted when what was taken from its front outgrows what it still holds.
struct HeldAudio: Sendable {
    let memoryLimit: Int
    let node: String
    private var file: SpillFile?
    private var fileStart = 0, fileEnd = 0
    private var memory: [UInt8] = []
    private var memoryStart = 0
    /// The most bytes held in memory, and in the file, at any one time.
    private(set) var mostInMemory = 0, mostOnDisk = 0

    init(memoryLimit: Int, node: String) {
        self.memoryLimit = max(1, memoryLimit)
        self.node = node
    }

    /// How many bytes are held.
    var count: Int { fileEnd - fileStart + memory.count - memoryStart }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: UnsafeRawBufferPointer) throws(GraphError) {
        guard !bytes.isEmpty else { return }
        memory.append(contentsOf: bytes)
        mostInMemory = max(mostInMemory, memory.count - memoryStart)
        if memory.count - memoryStart > memoryLimit { try spill() }
    }

    /// Moves what memory holds to the end of the file.
    private mutating func spill() throws(GraphError) {
        let spill: SpillFile
        if let file { spill = file } else {
            spill = try SpillFile(node: node, keeping: "a quiet stretch")
            file = spill
        }
        let at = fileEnd
        try memory[memoryStart...].withUnsafeBytes { bytes in Result { () throws(GraphError) in try spill.write(bytes, at: at) } }.get()
        fileEnd += memory.count - memoryStart
        memory.removeAll(keepingCapacity: true)
        memoryStart = 0
        mostOnDisk = max(mostOnDisk, fileEnd)
    }

    /// Forgets the oldest `count` bytes (all, when more are asked).
    mutating func dropFirst(_ count: Int) throws(GraphError) {
        let fromFile = min(count, fileEnd - fileStart)
        fileStart += fromFile
        memoryStart = min(memory.count, memoryStart + count - fromFile)
        try tidy()
    }

    /// Takes the oldest bytes, at most `most`; none when nothing is held.
    mutating func removeFirst(upTo most: Int) throws(GraphError) -> [UInt8] {
        var out: [UInt8]
        if let file, fileStart < fileEnd {
            out = [UInt8](repeating: 0, count: min(most, fileEnd - fileStart))
            let at = fileStart
            let got = try out.withUnsafeMutableBytes { bytes in Result { () throws(GraphError) in try file.read(into: bytes, at: at) } }.get()
            guard got == out.count else {
                throw GraphError(.runFailed, "the quiet stretch kept in \"\(file.folder)\" came back short (\(got) of \(out.count) bytes)", node: node)
            }
            fileStart += got
        } else {
            let n = min(most, memory.count - memoryStart)
            out = Array(memory[memoryStart..<(memoryStart + n)])
            memoryStart += n
        }
        try tidy()
        return out
    }

    /// Forgets everything held.
    mutating func removeAll() throws(GraphError) { try dropFirst(count) }

    private mutating func tidy() throws(GraphError) {
        if memoryStart == memory.count {
            memory.removeAll(keepingCapacity: true)
            memoryStart = 0
        } else if memoryStart > 65_536 && memoryStart * 2 > memory.count {
            memory.removeFirst(memoryStart)
            memoryStart = 0
        }
        guard let file else { return }
        if fileStart == fileEnd {
            if fileEnd > 0 { file.empty() }
            fileStart = 0
            fileEnd = 0
        } else if fileStart >= memoryLimit && fileStart > fileEnd - fileStart {
            // Only the front is being dropped (a long quiet start, all but its padding): move what
            // is left to the file's start, so that the file stays the size of what it holds.
            var moved = 0
            var chunk = [UInt8](repeating: 0, count: min(1 << 20, fileEnd - fileStart))
            while fileStart + moved < fileEnd {
                let n = min(chunk.count, fileEnd - fileStart - moved)
                let from = fileStart + moved
                let got = try chunk.withUnsafeMutableBytes { bytes in
                    Result { () throws(GraphError) in try file.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<n]), at: from) }
                }.get()
                guard got == n else {
                    throw GraphError(.runFailed, "the quiet stretch kept in \"\(file.folder)\" came back short", node: node)
                }
                let to = moved
                try chunk.withUnsafeBytes { bytes in Result { () throws(GraphError) in try file.write(UnsafeRawBufferPointer(rebasing: bytes[0..<n]), at: to) } }.get()
                moved += n
            }
            fileEnd = moved
            fileStart = 0
            file.truncate(to: moved)
        }
    }
}
