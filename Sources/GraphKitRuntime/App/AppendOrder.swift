import GraphKitCore
import MediaContainers

/// Whether an appended sample may come after the one before, and what the app is told when it
/// may not: the one place GraphKit checks the time order of what code appends. A value with no
/// clock and no lock. ``AppInput`` keeps one per input and applies it to every checked append,
/// on the times the app gave (a writer input of Assets asks its input to, through
/// ``AppInput/admit(_:format:rule:at:node:)``, before it holds or trims anything).
///
/// What reaches a muxer is checked again there, on the encoded stream's decode times, by the
/// muxer's own guard: that one catches sources that are files (joined or damaged media), this
/// one the app's mistake, at the call, with the app's own times.
package struct AppendOrder: Sendable {
    /// How strict the order is.
    package enum Rule: Sendable {
        /// A graph input (`source.app`), which carries any format: a sample's time (its decode
        /// time when it has one) is not earlier than the previous sample's.
        case notEarlier
        /// A file's track (`AssetWriterInput`), on presentation times: not earlier, and besides a
        /// video frame later than the previous frame (two frames at one time make a file whose
        /// decode times go backwards), and audio that starts where the previous buffer ended or
        /// later, give or take half a sample (times computed from seconds round).
        case track
    }

    /// Where an admitted sample is: its start (its end too, for PCM on a track), and the spacing
    /// from the frame before (video on a track).
    package struct Stamp: Sendable, Equatable {
        package var start: MediaTime
        package var end: MediaTime?
        package var spacing: MediaTime?
        /// How far appends have got with this sample: the end of audio, a frame's time.
        package var reached: MediaTime { end ?? start }

        package init(start: MediaTime, end: MediaTime? = nil, spacing: MediaTime? = nil) {
            self.start = start
            self.end = end
            self.spacing = spacing
        }
    }

    /// The last sample admitted; nil before the first.
    package private(set) var last: Stamp?

    package init() {}

    /// Where `buffer` would be after the previous sample, or an error at `location` saying why it
    /// cannot come now; nil for a sample with no time (its checks are elsewhere). Records
    /// nothing: see ``record(_:)``. Times are said `shownEarlierBy` earlier than the buffer's
    /// stamps (a writer whose clock runs that much later than the app's times).
    package func check(_ buffer: SampleBuffer, _ format: MediaFormat, rule: Rule, at location: String, node: String? = nil,
                       shownEarlierBy offset: MediaTime = .zero) throws(GraphError) -> Stamp? {
        let given = rule == .track ? buffer.presentationTime : buffer.decodeTime ?? buffer.presentationTime
        guard let time = given else { return nil }
        func shown(_ t: MediaTime) -> Double { (t - offset).seconds }
        if let last, time < last.start {
            throw GraphError(.usage, at: location,
                             "the sample's time \(shown(time)) s is earlier than the previous sample's \(shown(last.start)) s: append samples in time order",
                             node: node)
        }
        guard rule == .track else { return Stamp(start: time) }
        switch format {
        case .pcm(let f):
            let end = time + MediaTime(value: Int64(buffer.frameCount), timescale: Int32(clamping: f.sampleRate))
            if let last, let lastEnd = last.end {
                let overlap = (lastEnd - time).seconds * Double(f.sampleRate)
                guard overlap < 0.5 else {
                    throw GraphError(.usage, at: location,
                                     "the samples at \(shown(time)) s overlap the previous buffer, which started at \(shown(last.start)) s and ends at \(shown(lastEnd)) s (\(Int(overlap.rounded())) samples in both): start each buffer where the previous one ends, or later",
                                     node: node)
                }
            }
            return Stamp(start: time, end: end)
        case .rawVideo:
            if let last, time == last.start {
                throw GraphError(.usage, at: location,
                                 "the frame's time \(shown(time)) s is the previous frame's time (\(shown(last.start)) s): each frame needs a later presentation time than the one before",
                                 node: node)
            }
            return Stamp(start: time, spacing: last.map { time - $0.start })
        default:
            return Stamp(start: time)
        }
    }

    /// The sample checked as `stamp` was taken: the next is checked against it.
    package mutating func record(_ stamp: Stamp) {
        last = stamp
    }
}
