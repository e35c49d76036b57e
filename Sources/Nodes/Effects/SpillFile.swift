import GraphKitCore
import MediaContainers

/// Where a node keeps audio aside that may outgrow its memory (`effect.normalize`'s two-pass
/// input, `effect.trimSilence`'s quiet stretches): a ``TemporaryFile`` (no name, nothing left
/// behind), its failures told as the node's, closed with the node.
final class SpillFile: Sendable {
    let file: TemporaryFile
    let node: String
    /// The folder it is in, for messages.
    var folder: String { file.folder }
    /// What the file keeps, for messages: "cannot keep \(what) aside in …".
    let what: String

    init(node: String, keeping what: String = "the input for the second pass") throws(GraphError) {
        self.node = node
        self.what = what
        do {
            file = try TemporaryFile()
        } catch {
            throw GraphError(.outputUnwritable, "cannot keep \(what) aside in \"\(TemporaryFile.folder)\": \(error.reason)", node: node)
        }
    }

    /// Appends float samples at the end of what was appended so far.
    func append(_ samples: [Float]) throws(GraphError) {
        try samples.withUnsafeBytes { bytes in Result { () throws(GraphError) in try write(bytes, at: nil) } }.get()
    }

    /// Writes `bytes` at byte `offset`, or at the end of what was appended so far when nil.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int?) throws(GraphError) {
        do {
            try file.write(bytes, at: offset.map { UInt64($0) })
        } catch {
            throw GraphError(.outputUnwritable, "cannot keep \(what) aside in \"\(file.folder)\": \(error.reason)", node: node)
        }
    }

    /// Up to `count` float samples from sample `offset`; none at the end.
    func read(at offset: Int, count: Int) throws(GraphError) -> [Float] {
        var samples = [Float](repeating: 0, count: count)
        let got = try samples.withUnsafeMutableBytes { bytes in Result { () throws(GraphError) in try read(into: bytes, at: offset * 4) } }.get()
        samples.removeLast(count - got / 4)
        return samples
    }

    /// Fills `bytes` from byte `offset` on; returns how many it read (fewer at the end).
    func read(into bytes: UnsafeMutableRawBufferPointer, at offset: Int) throws(GraphError) -> Int {
        do {
            return try file.read(into: bytes, at: UInt64(offset))
        } catch {
            throw GraphError(.runFailed, "cannot read back \(what) kept in \"\(file.folder)\": \(error.reason)", node: node)
        }
    }

    /// Gives back the file's space past `length` bytes; appending goes on from there.
    func truncate(to length: Int) { file.truncate(to: UInt64(length)) }

    /// Gives back all the file's space: it is empty again.
    func empty() { truncate(to: 0) }
}
