import GraphKitCore
import GraphKitRuntime

/// What the audio encoders past AAC share on their input side: GStreamer's converter and
/// resampler, the rate and channel count the node's parameters ask for, and a run that fails,
/// naming the node and saying how to mix down, when the input has more channels than the
/// encoder takes (audioconvert would otherwise mix down without a word, or fail its link
/// blaming the element upstream).
enum AudioEncoderInput {
    /// GStreamer 1.22's audioconvert takes at most 63 channels (64 fails an assertion).
    static let converterChannels = 63

    /// Builds `in ! audioconvert ! audioresample ! capsfilter(format, rate, channels)` and
    /// returns its two ends: link `output` to the encoder, expose `input` as the node's input.
    /// `encoder` is the GStreamer encoder's name as the error gives it; `most` the channels
    /// it takes; `channels` the count the node mixes to when its parameter is set.
    static func build(in bin: BinBuilder, encoder: String, channels most: Int, mixTo channels: Int?,
                      sampleRate: Int?, sampleFormat: String? = nil) throws(GraphError) -> (input: Element, output: Element) {
        let input = try bin.makeCapsFilter("audio/x-raw, channels=(int)[ 1, \(converterChannels) ]")
        let mixesDown = (channels ?? Int.max) <= most
        input.onInputFormat { [input] format in
            guard case .pcm(let pcm) = format, pcm.channels > most, !mixesDown || pcm.channels > converterChannels else { return }
            input.postError(problem(channels: pcm.channels, encoder: encoder, most: most))
        }
        let output = try bin.makeCapsFilter(caps(sampleFormat: sampleFormat, sampleRate: sampleRate, channels: channels))
        try bin.link(input, try bin.make("audioconvert"), try bin.make("audioresample"), output)
        return (input, output)
    }

    /// Raw audio caps with what is given of the three.
    static func caps(sampleFormat: String?, sampleRate: Int?, channels: Int?) -> String {
        var caps = "audio/x-raw"
        if let sampleFormat { caps += ", format=(string)\(sampleFormat)" }
        if let sampleRate { caps += ", rate=(int)\(sampleRate)" }
        if let channels { caps += ", channels=(int)\(channels)" }
        return caps
    }

    /// Why `channels` of audio cannot reach an encoder that takes 1 to `most`.
    static func problem(channels: Int, encoder: String, most: Int) -> String {
        if channels > converterChannels {
            return "\(channels)-channel audio cannot be encoded: \(encoder) takes 1 to \(most) channels, and audio of "
                + "more than \(converterChannels) channels cannot be mixed down (GStreamer's converter takes at most \(converterChannels))"
        }
        let example = most == 1 ? "1" : most == 2 ? "2" : "2 or \(most)"
        return "\(channels)-channel audio cannot be encoded: \(encoder) takes 1 to \(most) channels; "
            + "mix it down first (the node's \"channels\" parameter or decode's, for example \(example))"
    }
}
