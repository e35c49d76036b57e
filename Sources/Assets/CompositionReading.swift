import GraphKitCore
import Synchronization

/// One ``AssetReaderTrackOutput``'s way through a composition track: its pieces read one after
/// another, each by a reader of its own file over its source range (audio cut to the sample,
/// video from the frame showing at the range's start), each sample moved to where the piece
/// plays. One piece's reader at a time; the next is made when the one before has ended.
///
/// Times: a piece's samples keep their spacing and are moved by (destination start − source
/// start); a frame that began before its range starts at the range's start, and one that lasts
/// past the range's end stops there, so stamps rise from piece to piece and tile each range.
/// A gap (an empty segment) gives no sample, as AVFoundation's reader gives none: the next
/// piece's stamps simply start later.
final class CompositionPieces: Sendable {
    let pieces: [CompositionTrackSegment]
    let settings: ReaderOutputSettings

    private struct Reading {
        var next = 0
        var current: (reader: AssetReader, output: AssetReaderTrackOutput, piece: CompositionTrackSegment)?
        var cancelled = false
    }

    private let reading = Mutex(Reading())

    init(pieces: [CompositionTrackSegment], settings: ReaderOutputSettings) {
        self.pieces = pieces
        self.settings = settings
    }

    enum Next {
        case sample(SampleBuffer)
        case end
        case failed(GraphError)
    }

    /// The next sample, blocking while it is decoded; `.end` after the last piece or once
    /// cancelled, `.failed` with the error of the piece that failed, naming it.
    @available(*, noasync)
    func next() -> Next {
        while true {
            let current: (reader: AssetReader, output: AssetReaderTrackOutput, piece: CompositionTrackSegment)
            switch open() {
            case .success(let c?): current = c
            case .success(nil): return .end
            case .failure(let error): return .failed(error)
            }
            if let sample = current.output.copyNextSampleBuffer() {
                if let moved = Self.move(sample, of: current.piece) { return .sample(moved) }
                continue
            }
            if current.reader.status == .failed, let error = current.reader.error {
                return .failed(Self.naming(current.piece, error))
            }
            let goesOn = reading.withLock { r in
                r.current = nil
                return !r.cancelled
            }
            if !goesOn { return .end }
        }
    }

    /// The reader of the piece being read, made (and started) when there is none; nil after
    /// the last piece or once cancelled.
    private func open() -> Result<(reader: AssetReader, output: AssetReaderTrackOutput, piece: CompositionTrackSegment)?, GraphError> {
        let step = reading.withLock { r -> (Int, CompositionTrackSegment)? in
            if r.cancelled { return nil }
            if r.current != nil { return (-1, pieces[0]) }
            guard r.next < pieces.count else { return nil }
            defer { r.next += 1 }
            return (r.next, pieces[r.next])
        }
        guard let (n, piece) = step else { return .success(nil) }
        if n < 0 { return .success(reading.withLock { $0.current }) }
        guard let asset = piece.asset, let track = piece.sourceTrack else { return .success(nil) }
        let reader: AssetReader, output: AssetReaderTrackOutput
        do throws(GraphError) {
            reader = try AssetReader(asset: asset)
            output = AssetReaderTrackOutput(track: track, outputSettings: settings)
            try reader.add(output)
            reader.timeRange = piece.sourceRange
            try reader.startReading()
        } catch {
            return .failure(Self.naming(piece, error))
        }
        let kept = reading.withLock { r -> Bool in
            guard !r.cancelled else { return false }
            r.current = (reader, output, piece)
            return true
        }
        guard kept else {
            reader.cancelReading()
            return .success(nil)
        }
        return .success((reader, output, piece))
    }

    /// Stops: the piece being read is cancelled (a pull waiting in it wakes) and no other is opened.
    func cancel() {
        let current = reading.withLock { r in
            r.cancelled = true
            return r.current?.reader
        }
        current?.cancelReading()
    }

    /// `sample` of `piece` moved to where the piece plays, held within its range; nil for a
    /// sample that falls wholly outside it (a frame the source's range only touches).
    static func move(_ sample: SampleBuffer, of piece: CompositionTrackSegment) -> SampleBuffer? {
        guard let pts = sample.presentationTime else { return sample }
        let destination = piece.destinationRange
        var start = pts - piece.sourceRange.start + destination.start
        var end = sample.duration.map { start + $0 }
        if start < destination.start { start = destination.start }
        if let e = end, e > destination.end { end = destination.end }
        if let end, end <= start { return nil }
        guard start < destination.end else { return nil }
        var moved = sample
        moved.presentationTime = start
        moved.decodeTime = nil
        if let end { moved.duration = end - start }
        return moved
    }

    /// The error of a piece's reader, saying which piece.
    static func naming(_ piece: CompositionTrackSegment, _ error: GraphError) -> GraphError {
        GraphError(error.code, at: "composition piece \(piece)", error.description, cause: error.cause)
    }
}
