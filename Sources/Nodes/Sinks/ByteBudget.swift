import GraphKitCore

/// The bytes a file with a length limit may still take: its samples so far, an upper bound on
/// the index entries each adds (32 bytes: stsz, stts, ctts, stss and a chunk offset at most),
/// and the rest of the file's boxes (``MP4SinkNode/boxReserve``).
final class ByteBudget: Sendable {
    let limit: Int64
    /// Bytes counted, and whether a sample was refused (then every input ends: none goes on
    /// with smaller samples past the other's end).
    private let state = Guarded<(used: Int64, full: Bool)>((Int64(MP4SinkNode.boxReserve), false))
    init(limit: Int64) { self.limit = limit }

    /// Whether a sample was refused: the inputs ended there.
    var isFull: Bool { state.withLock { $0.full } }

    /// Whether a sample of `size` bytes fits; if so, it is counted.
    func admit(_ size: Int) -> Bool {
        state.withLock { s in
            let next = s.used + Int64(size) + 32
            guard !s.full, next <= limit else {
                s.full = true
                return false
            }
            s.used = next
            return true
        }
    }
}
