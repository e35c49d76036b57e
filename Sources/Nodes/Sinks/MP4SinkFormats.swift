import GraphKitCore
import GraphKitRuntime
import MediaContainers

extension MP4TrackFormat {
    /// A track's format from its encoder's caps (as ``Element/onEncodedSamples(pad:_:)`` gives
    /// them): the codec's configuration, size or rate, and a video's colour; nil when the caps do
    /// not say what its sample entry needs. `flac` when the stream is FLAC under gkmp4flac's
    /// stand-in caps (its rate and channels are the stream's).
    package init?(_ format: MediaFormat?, codecData: [UInt8], details: Element.EncodedFormatDetails, flac: Bool = false) {
        let codec: Codec
        switch format {
        case .h264(let w?, let h?)? where !codecData.isEmpty:
            codec = .h264(avcC: codecData, width: w, height: h)
        case .video(.hevc, let w?, let h?)? where !codecData.isEmpty:
            codec = .hevc(hvcC: codecData, width: w, height: h)
        case .video(.av1, let w?, let h?)?:
            // Without a configuration from the encoder: marker and version, profile and level
            // unknown (0), no OBUs: decoders read the sequence header in the stream.
            codec = .av1(av1C: codecData.isEmpty ? [0x81, 0, 0, 0] : codecData, width: w, height: h)
        case .video(.vp9, let w?, let h?)?:
            codec = .vp9(vpcC: [], width: w, height: h)
        case .aac(let rate?, let channels?)? where !codecData.isEmpty:
            codec = .aac(audioSpecificConfig: codecData, sampleRate: rate, channels: channels)
        case .audio(.opus, let rate?, let channels?)? where flac:
            codec = .flac(sampleRate: rate, channels: channels)
        case .audio(.opus, _, let channels?)?:
            // The OpusHead in the caps' streamheader (opusenc's); else what the caps say, no
            // pre-skip known.
            let head = details.streamHeaders.first { $0.starts(with: Array("OpusHead".utf8)) }
            guard let dOps = head.flatMap(Self.dOps(opusHead:)) ?? (channels <= 2 ? [0, UInt8(channels), 0, 0, 0, 0, 0xBB, 0x80, 0, 0, 0] : nil) else { return nil }
            codec = .opus(dOps: dOps, channels: channels)
        case .audio(.alac, let rate?, let channels?)? where !codecData.isEmpty:
            codec = .alac(cookie: codecData, sampleRate: rate, channels: channels)
        default:
            return nil
        }
        self.init(trackID: 1, codec: codec)
        if isVideo, let p = details.primaries, let t = details.transfer, let m = details.matrix {
            colour = Colour(primaries: UInt16(clamping: p), transfer: UInt16(clamping: t), matrix: UInt16(clamping: m), fullRange: details.fullRange,
                            masteringDisplay: details.masteringDisplay, contentLightLevel: details.contentLightLevel)
        }
        if case .vp9(_, let w, let h) = codec {
            self.codec = .vp9(vpcC: Self.vpcC(profile: 0, bitDepth: 8, colour: colour), width: w, height: h)
        }
    }
}
