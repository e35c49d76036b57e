import GraphKitCore
import GraphKitRuntime

/// How `decode` takes a decoded audio stream to its output, decided when the stream appears
/// (its caps known): through the converter, to what the parameters ask and otherwise as the
/// stream is; straight to the output when nothing needs converting and the converter cannot
/// take the stream; or not at all, saying why.
///
/// GStreamer 1.22's converter (audioconvert) takes at most 63 channels: with 64 it fails an
/// assertion and the process crashes. A stream GraphKit cannot carry (more channels than PCM
/// ports carry, a rate no audio has) is refused by name, never decoded for hours: a 200 KB WAV
/// whose header says 1 Hz claims 100,000 s, and a transcode resampled it to AAC's 7,350 Hz for
/// 18 minutes (ffmpeg accepts any rate above 0, and does the same).
enum DecodedAudio: Equatable {
    /// Through the converter, to these caps: the parameters', and without `channels`, the
    /// stream's own count, so that nothing downstream makes the converter mix what the graph did
    /// not ask to change (a later change of count is mixed to the first, as ffmpeg keeps its
    /// output's layout). Without `sampleRate` there is no resampler, so the rate stays open.
    case convert(caps: String)
    /// Straight to the output, whose caps are these.
    case direct(caps: String)
    case refuse(String)

    /// The most channels GStreamer's converter takes.
    static let converterChannels = 63
    /// The rates decode gives: below 1 kHz is no audio a file holds (telephony's 8 kHz and old
    /// games' 4 kHz are the lowest in use), and above 768 kHz none that PCM ports carry.
    static let rates = 1_000...768_000
    /// The channel counts decode gives: what PCM ports carry.
    static let channels = 1...64

    /// The route for a stream of `shape` (nil: caps not known yet, converted as asked), with
    /// `sampleFormat`, `sampleRate` and `channels` as the node's parameters give them; `input`
    /// names the file in messages.
    static func route(_ shape: Pad.AudioShape?, sampleFormat: Auto<SampleFormat>, sampleRate: Int?, channels: Int?,
                      input: String) -> DecodedAudio {
        let formats = switch sampleFormat {
        case .auto: "{ S16LE, F32LE }"
        case .value(let f): "(string)\(f.gstName)"
        }
        var caps = "audio/x-raw, format=\(formats), layout=(string)interleaved"
        guard let shape else {
            if let sampleRate { caps += ", rate=(int)\(sampleRate)" }
            if let channels { caps += ", channels=(int)\(channels)" }
            return .convert(caps: caps)
        }
        guard rates.contains(shape.sampleRate) else {
            let unit = shape.sampleRate == 1 ? "sample" : "samples"
            return .refuse("\(input) says its audio has \(shape.sampleRate) \(unit) a second (the sample rate its header gives), "
                           + "and decode takes audio of \(rates.lowerBound) to \(rates.upperBound) Hz: "
                           + (shape.sampleRate < rates.lowerBound ? "no sound is that slow; the header is damaged, or the file holds no audio"
                                                                  : "its header is damaged, or GraphKit cannot carry audio that fast"))
        }
        guard Self.channels.contains(shape.channels) else {
            return .refuse("\(input) has \(shape.channels) audio channels, and decode gives \(Self.channels.lowerBound) to \(Self.channels.upperBound)")
        }
        if let sampleRate { caps += ", rate=(int)\(sampleRate)" }
        caps += ", channels=(int)\(channels ?? shape.channels)"
        guard shape.channels > converterChannels else { return .convert(caps: caps) }
        // Past the converter's limit: as it is, or not at all.
        var changes: [String] = []
        if let own = shape.format {
            if case .value(let f) = sampleFormat, f != own { changes.append("from \(own.gstName) to \(f.gstName)") }
        } else {
            changes.append("from \(shape.sampleFormat)\(shape.interleaved ? "" : " (planar)") to interleaved S16LE or F32LE")
        }
        if let sampleRate, sampleRate != shape.sampleRate { changes.append("from \(shape.sampleRate) Hz to \(sampleRate) Hz") }
        if let channels, channels != shape.channels { changes.append("from \(shape.channels) channels to \(channels)") }
        if changes.isEmpty, let own = shape.format {
            return .direct(caps: "audio/x-raw, format=(string)\(own.gstName), layout=(string)interleaved, "
                           + "rate=(int)\(shape.sampleRate), channels=(int)\(shape.channels)")
        }
        return .refuse("\(input) has \(shape.channels) audio channels, and GStreamer's converter takes at most \(converterChannels): "
                       + "decode cannot convert it \(changes.joined(separator: ", "))"
                       + (shape.format == nil ? "" : "; take it as it is (sampleFormat auto, no sampleRate or channels)"))
    }
}
