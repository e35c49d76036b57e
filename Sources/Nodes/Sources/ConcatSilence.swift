import GraphKitCore
import MediaContainers

/// Where a `source.concat` piece has less sound than pictures (an audio track with no samples,
/// sound that starts late or ends early): silent AAC frames (``AACSilence``) up to where its
/// pictures are, so that the sound of the pieces after it stays with their pictures. Without
/// them the sound, counted in samples, ran on from where it stopped: after a piece of 10 s
/// with an empty sound track, the next piece's sound played 10 s early.
///
/// A gap of less than half a frame is left (the join keeps the sound within half a frame of
/// the pictures); one of a tenth of a second or more is said, naming the piece. A stream whose
/// AAC is not plain LC (HE-AAC's SBR cannot be left out unheard) is refused where a gap needs
/// filling, as is silence past ``ConcatPlan/mostSilence`` in all.
struct ConcatSilence {
    /// The silent frame, when the stream's configuration has one.
    let frame: (bytes: [UInt8], samples: Int, rate: Int)?
    /// The sound's clock (the first piece's track: every piece's rate is the same, checked).
    let timescale: Double
    /// A frame's length in that clock.
    let ticks: Int64
    /// The silence given so far, in seconds.
    private var filled = 0.0

    /// For the sound of `track` (the first piece's); nil when the audio output is not connected.
    init(_ track: (plan: HLSSegmentPlan.Track, description: SampleDescription)?) {
        guard let track, track.plan.timescale > 0 else {
            (frame, timescale, ticks) = (nil, 1, 1)
            return
        }
        frame = AACSilence.frame(for: MP4StoredTrack.audioSpecificConfig(track.description).config)
        timescale = Double(track.plan.timescale)
        let samples = frame.map { Double($0.samples) / Double($0.rate) } ?? 1024.0 / timescale
        ticks = max(1, Int64((samples * timescale).rounded()))
    }

    /// Silence from where the sound given so far (`sound`, in the sound's clock) ends to `joined`
    /// (seconds on the joined stream), appended to `audio` stamped `lead` later as the sound is,
    /// when that gap is half a frame or more. `piece` names the piece without that sound, `at`
    /// its path's place in the graph, for the warning and the error.
    mutating func fill(to joined: Double, after sound: inout Int64, lead: Double, into audio: inout [ConcatPlan.Sample],
                       warnings: inout [String], piece: String, at: String, node: String) throws(GraphError) {
        let frameSeconds = Double(ticks) / timescale
        let begins = Double(sound) / timescale, gap = joined - begins
        guard gap >= frameSeconds / 2 else { return }
        guard let frame else {
            throw GraphError(.invalidGraph, at: at,
                             "\(piece) has \(ConcatPlan.seconds(gap)) s less sound than pictures, and the sound after it would play that much early: "
                             + "its AAC is not plain AAC LC (HE-AAC, or another profile), which source.concat cannot fill with silence as stored. "
                             + "Leave the audio output unconnected, or export the pieces as a Composition with a preset that re-encodes", node: node)
        }
        let count = Int64((gap / frameSeconds).rounded())
        guard filled + Double(count) * frameSeconds <= ConcatPlan.mostSilence else {
            throw GraphError(.invalidGraph, at: at,
                             "\(piece) has \(ConcatPlan.seconds(gap)) s less sound than pictures: filled with silence, the join would hold more than "
                             + "\(Int(ConcatPlan.mostSilence)) s of it. Leave the audio output unconnected, or give pieces with their sound", node: node)
        }
        let duration = UInt64(ticks) * 1_000_000_000 / UInt64(timescale)
        for _ in 0..<count {
            let pts = ConcatPlan.nanoseconds(Double(sound) / timescale + lead)
            audio.append(ConcatPlan.Sample(file: ConcatPlan.silenceFile, offset: 0, size: frame.bytes.count, pts: pts, dts: pts,
                                           duration: duration, keyframe: true))
            sound += ticks
        }
        filled += Double(count) * frameSeconds
        if gap >= 0.1 {
            warnings.append("\(piece) has no sound for \(ConcatPlan.seconds(gap)) s (from \(ConcatPlan.seconds(begins)) s of the joined stream): "
                            + "silence fills it, so the sound after it stays with the pictures")
        }
    }
}
