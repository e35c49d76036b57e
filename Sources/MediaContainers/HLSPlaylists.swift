// HLS playlists (RFC 8216): a media playlist, a multivariant playlist, and the bit rates a
// variant states.

/// A media playlist (RFC 8216 4.3.3): fMP4 segments after their initialization segment.
package struct HLSMediaPlaylist: Sendable, Equatable {
    package enum Kind: String, Sendable { case vod = "VOD", event = "EVENT", live }
    package var kind: Kind = .vod
    /// fMP4's initialization segment; nil for MPEG-TS segments.
    package var initializationSegment: String?
    package var segments: [(uri: String, duration: Double)] = []
    package var mediaSequence = 0
    package var ended = true
    /// The target duration an event or live playlist keeps for its whole life (RFC 8216 6.2.1:
    /// it must not change); nil: the longest segment's, rounded (a VOD playlist, written once).
    package var declaredTargetDuration: Int?

    package init(initializationSegment: String?, segments: [(uri: String, duration: Double)] = [], kind: Kind = .vod) {
        self.initializationSegment = initializationSegment
        self.segments = segments
        self.kind = kind
        ended = kind == .vod
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.initializationSegment == b.initializationSegment && a.mediaSequence == b.mediaSequence
            && a.ended == b.ended && a.declaredTargetDuration == b.declaredTargetDuration && a.segments.map(\.uri) == b.segments.map(\.uri) && a.segments.map(\.duration) == b.segments.map(\.duration)
    }

    /// The target duration: every segment's duration, rounded to the nearest integer, is at most
    /// it (RFC 8216 4.3.3.1); at least 1. The declared one when there is one (the writer keeps
    /// its segments within it).
    package var targetDuration: Int { declaredTargetDuration ?? Self.targetDuration(of: segments.map(\.duration)) }

    /// The smallest target duration that `durations` keep: the longest, rounded; at least 1.
    package static func targetDuration(of durations: [Double]) -> Int { max(1, durations.map { Int($0.rounded()) }.max() ?? 1) }

    /// The target duration of a playlist whose segments aim at `seconds`: rounded up, so a
    /// segment may run up to half a second past it and still round within (RFC 8216 4.3.3.1).
    package static func targetDuration(aimingAt seconds: Double) -> Int { max(1, Int(seconds.rounded(.up))) }

    package var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)"]
        if kind != .live { lines.append("#EXT-X-PLAYLIST-TYPE:\(kind.rawValue)") }
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        if let initializationSegment { lines.append("#EXT-X-MAP:URI=\"\(initializationSegment)\"") }
        for s in segments {
            lines.append("#EXTINF:\(Self.decimal(s.duration)),")
            lines.append(s.uri)
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Six decimals, as ffmpeg writes them; no exponent.
    static func decimal(_ seconds: Double) -> String {
        let micro = Int64((max(0, seconds) * 1_000_000).rounded())
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// A multivariant playlist (RFC 8216 4.3.4.2): each variant stream's media playlist, its peak
/// and average bit rates, codecs and picture size.
package struct HLSMultivariantPlaylist: Sendable {
    package struct Variant: Sendable {
        package var uri: String
        package var bandwidth: Int
        package var averageBandwidth: Int?
        package var codecs: [String]
        package var resolution: (width: Int, height: Int)?

        /// The audio rendition group the variant plays its sound from (`AUDIO=`), when the sound
        /// is not in its own segments.
        package var audioGroup: String?

        package init(uri: String, bandwidth: Int, averageBandwidth: Int?, codecs: [String], resolution: (Int, Int)?, audioGroup: String? = nil) {
            self.uri = uri
            self.bandwidth = bandwidth
            self.averageBandwidth = averageBandwidth
            self.codecs = codecs
            self.resolution = resolution.map { (width: $0.0, height: $0.1) }
            self.audioGroup = audioGroup
        }
    }

    /// An alternative rendition (RFC 8216 4.3.4.1, `EXT-X-MEDIA`): a sound in its own media
    /// playlist, which the variants of its group play beside their video.
    package struct AudioRendition: Sendable {
        package var group: String
        package var name: String
        package var uri: String
        package var channels: Int?
        package var isDefault = true

        package init(group: String, name: String, uri: String, channels: Int?) {
            self.group = group
            self.name = name
            self.uri = uri
            self.channels = channels
        }
    }

    package var variants: [Variant]
    package var audio: [AudioRendition]
    package init(variants: [Variant], audio: [AudioRendition] = []) {
        self.variants = variants
        self.audio = audio
    }

    package var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for a in audio {
            var attributes = ["TYPE=AUDIO", "GROUP-ID=\"\(a.group)\"", "NAME=\"\(a.name)\"", "DEFAULT=\(a.isDefault ? "YES" : "NO")", "AUTOSELECT=YES"]
            if let c = a.channels { attributes.append("CHANNELS=\"\(c)\"") }
            attributes.append("URI=\"\(a.uri)\"")
            lines.append("#EXT-X-MEDIA:" + attributes.joined(separator: ","))
        }
        // Highest bit rate first: the order players try first when they have no estimate.
        for v in variants.sorted(by: { $0.bandwidth > $1.bandwidth }) {
            var attributes = ["BANDWIDTH=\(max(1, v.bandwidth))"]
            if let a = v.averageBandwidth { attributes.append("AVERAGE-BANDWIDTH=\(max(1, a))") }
            attributes.append("CODECS=\"\(v.codecs.joined(separator: ","))\"")
            if let r = v.resolution { attributes.append("RESOLUTION=\(r.width)x\(r.height)") }
            if let g = v.audioGroup { attributes.append("AUDIO=\"\(g)\"") }
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(v.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A media playlist's bit rates as its segments come (RFC 8216 4.1): the peak segment bit rate,
/// the largest bit rate of any run of consecutive segments lasting 0.5 to 1.5 times the target
/// duration (a run's bit rate: its bytes over its duration); and the average, every segment's
/// bytes over their duration. Kept as the segments come, in constant memory: only the runs
/// ending at the newest segment are new.
package struct HLSBitRates: Sendable {
    package let targetDuration: Double
    /// The segments a run ending at the next one may still start at: (bits, seconds).
    private var recent: [(bits: Double, seconds: Double)] = []
    private var runPeak: Double?
    private var segmentPeak = 0.0
    private var bits = 0.0, seconds = 0.0

    package init(targetDuration: Int) { self.targetDuration = Double(targetDuration) }

    package mutating func add(bytes: Int, duration exact: Double) {
        // The duration a player reads (EXTINF, to the microsecond): a rate from the exact one
        // could fall a bit per second below what a player measures from the playlist.
        let duration = (max(0, exact) * 1_000_000).rounded() / 1_000_000
        let b = Double(bytes) * 8
        bits += b
        seconds += duration
        if duration > 0 { segmentPeak = max(segmentPeak, b / duration) }
        recent.append((b, duration))
        var runBits = 0.0, runSeconds = 0.0
        for s in recent.reversed() {
            runBits += s.bits
            runSeconds += s.seconds
            if runSeconds > 1.5 * targetDuration + 1e-9 { break }
            if runSeconds >= 0.5 * targetDuration - 1e-9 { runPeak = max(runPeak ?? 0, runBits / runSeconds) }
        }
        // What no later run can start at any more: runs longer than 1.5 times the target.
        var kept = 0.0, keep = 0
        for s in recent.reversed() {
            keep += 1
            kept += s.seconds
            if kept > 1.5 * targetDuration { break }
        }
        recent.removeFirst(recent.count - keep)
    }

    /// The peak segment bit rate (bits per second, rounded up); with no run long enough yet
    /// (a stream shorter than half the target), the busiest segment's.
    package var peak: Int { Int((runPeak ?? segmentPeak).rounded(.up)) }
    /// The average segment bit rate; nil before any time has passed.
    package var average: Int? { seconds > 0 ? Int((bits / seconds).rounded()) : nil }
}
