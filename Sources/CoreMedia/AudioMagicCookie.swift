// AAC's magic cookie, as Apple's AAC encoder gives it (`kAudioConverterCompressionMagicCookie`)
// and CMAudioFormatDescriptionCreate takes it: an MPEG-4 ES_Descriptor (ISO/IEC 14496-1 8.3.3,
// the body of an `esds` box) around the AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1), its sizes
// in the four-byte form Apple writes (0x80 0x80 0x80 n). A bare AudioSpecificConfig is taken too;
// what one says is read by MediaContainers' AudioSpecificConfig.

/// The ES_Descriptor Apple's encoder returns as its cookie, around `config`.
package func aacMagicCookie(audioSpecificConfig config: [UInt8], averageBitRate: UInt32, maximumBitRate: UInt32, bufferSize: UInt32) -> [UInt8] {
    func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] { [tag, 0x80, 0x80, 0x80, UInt8(body.count)] + body }
    func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    let decoderSpecific = descriptor(0x05, config)
    // objectTypeIndication 0x40 (MPEG-4 audio); streamType 5 (audio) << 2, reserved bit 1.
    let decoderConfig = descriptor(0x04, [0x40, 0x15] + Array(be32(bufferSize).suffix(3)) + be32(maximumBitRate) + be32(averageBitRate) + decoderSpecific)
    let slConfig = descriptor(0x06, [0x02])
    return descriptor(0x03, [0x00, 0x00, 0x00] + decoderConfig + slConfig)
}

/// The AudioSpecificConfig in a cookie: the DecoderSpecificInfo of an ES_Descriptor (with or
/// without the `esds` box's version and flags before it), or the bytes themselves when they are
/// no descriptor. Nil for a descriptor that does not hold one.
package func audioSpecificConfig(fromMagicCookie cookie: [UInt8]) -> [UInt8]? {
    var bytes = ArraySlice(cookie)
    // An esds box body: four bytes of version and flags, then the descriptor.
    if bytes.count > 4, bytes.prefix(4).allSatisfy({ $0 == 0 }), bytes[bytes.startIndex + 4] == 0x03 { bytes = bytes.dropFirst(4) }
    guard bytes.first == 0x03 else { return cookie.isEmpty || cookie.count > 64 ? nil : cookie }
    /// Reads a descriptor's tag and size; the slice is left at its body.
    func header(_ s: inout ArraySlice<UInt8>) -> (tag: UInt8, size: Int)? {
        guard let tag = s.popFirst() else { return nil }
        var size = 0
        for _ in 0..<4 {
            guard let b = s.popFirst() else { return nil }
            size = size << 7 | Int(b & 0x7F)
            if b & 0x80 == 0 { return s.count >= size ? (tag, size) : nil }
        }
        return nil
    }
    guard let es = header(&bytes), es.tag == 0x03, bytes.count >= 3 else { return nil }
    let flags = bytes[bytes.startIndex + 2]
    bytes = bytes.dropFirst(3)
    if flags & 0x80 != 0 { bytes = bytes.dropFirst(2) }  // streamDependenceFlag: dependsOn_ES_ID
    if flags & 0x40 != 0 {  // URL_Flag: a length, then the URL
        guard let n = bytes.first else { return nil }
        bytes = bytes.dropFirst(1 + Int(n))
    }
    if flags & 0x20 != 0 { bytes = bytes.dropFirst(2) }  // OCRstreamFlag
    guard let dc = header(&bytes), dc.tag == 0x04, dc.size >= 13 else { return nil }
    bytes = bytes.dropFirst(13)
    guard let dsi = header(&bytes), dsi.tag == 0x05, dsi.size > 0 else { return nil }
    return Array(bytes.prefix(dsi.size))
}

/// GStreamer's caps for raw AAC with this configuration (mp4mux writes it as the track's esds).
package func aacCapsDetail(audioSpecificConfig config: [UInt8], sampleRate: Int, channels: Int) -> String {
    let hex = config.map { b in let s = String(b, radix: 16); return b < 16 ? "0" + s : s }.joined()
    return "audio/mpeg, mpegversion=(int)4, stream-format=(string)raw, rate=(int)\(sampleRate), channels=(int)\(channels), codec_data=(buffer)\(hex)"
}
