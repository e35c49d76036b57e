import ContainersUnderFuzz
import Glibc

/// One input: the samples of an HLS transport-stream segment, as `sink.hls` hands them to
/// GraphKit's MPEG-TS writer (``MPEGTSWriter``): what a hostile file or peer decides. Its
/// H.264 samples are rewritten from length-prefixed NAL units to Annex B (lengths claimed by the
/// file), its configuration's SPS and PPS read from an `avcC` of any bytes, its AAC frames given
/// ADTS headers from an AudioSpecificConfig of any bytes, and its times (decode times up to
/// 2^64 - 1 ticks, composition offsets of either sign, clocks of 1 tick a second) turned to
/// 90 kHz.
///
/// The input, read in order (what runs out is 0): a byte of flags (bit 0: a video track, bit 1:
/// an audio track, bits 2-7: the samples, up to 63), the avcC's length (a byte) and bytes, the
/// AudioSpecificConfig's length (a byte) and bytes, the audio's sample rate (u32); then for
/// each sample 16 bytes (its track, sync flag, size u16, decode time u64, composition offset
/// i32) and, after all of them, the samples' bytes, shared out in order (a size past what is
/// left takes what is left).
///
/// A finding is a crash or a trap (media-time arithmetic must not trap, whatever a sample
/// claims), and a broken promise: a segment that is not whole 188-byte packets, each starting
/// with the sync byte, whose first two are the PAT and the PMT, and whose continuity counters
/// do not go on by one a packet of each stream, from one segment into the next.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMPEGTS(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = Array(UnsafeBufferPointer(start: data, count: size))[...]
    func byte() -> UInt8 { input.popFirst() ?? 0 }
    func bytes(_ n: Int) -> [UInt8] { let taken = Array(input.prefix(n)); input = input.dropFirst(n); return taken }
    func uint(_ n: Int) -> UInt64 { (0..<n).reduce(0) { value, _ in value << 8 | UInt64(byte()) } }

    let flags = byte()
    let avcC = bytes(Int(byte())), config = bytes(Int(byte()))
    let rate = Int(truncatingIfNeeded: uint(4))
    var tracks: [MP4TrackFormat] = []
    if flags & 1 != 0 { tracks.append(MP4TrackFormat(trackID: 1, codec: .h264(avcC: avcC, width: 320, height: 240))) }
    if flags & 2 != 0 { tracks.append(MP4TrackFormat(trackID: 2, codec: .aac(audioSpecificConfig: config, sampleRate: rate, channels: 2))) }
    guard !tracks.isEmpty else { return 0 }

    struct Claim { var track: Int; var sync: Bool; var size: Int; var decodeTime: UInt64; var offset: Int32 }
    let claims = (0..<Int(flags >> 2)).map { _ in
        let which = byte()
        return Claim(track: Int(which & 1) % tracks.count, sync: which & 2 != 0, size: Int(uint(2)), decodeTime: uint(8),
                     offset: Int32(truncatingIfNeeded: uint(4)))
    }
    var runs = tracks.map { FragmentRun(trackID: $0.trackID, timescale: $0.timescale, baseDecodeTime: 0, samples: [], data: []) }
    for c in claims {
        let payload = bytes(c.size)
        runs[c.track].samples.append(MP4Sample(offset: 0, size: UInt32(payload.count), decodeTime: c.decodeTime, duration: 0,
                                               compositionOffset: c.offset, isSync: c.sync))
        runs[c.track].data += payload
    }

    var writer = MPEGTSWriter(tracks: tracks)
    var continuity: [UInt16: UInt8] = [:]
    for round in 0..<2 {
        let segment = writer.segment(runs)
        guard segment.count % 188 == 0, segment.count >= 2 * 188 else { fail("a segment of \(segment.count) bytes (round \(round))") }
        for (n, start) in stride(from: 0, to: segment.count, by: 188).enumerated() {
            let packet = segment[start..<(start + 188)]
            guard packet[start] == 0x47 else { fail("packet \(n) starts with \(packet[start])") }
            let pid = UInt16(packet[start + 1] & 0x1F) << 8 | UInt16(packet[start + 2])
            if n == 0, pid != 0 { fail("the first packet is PID \(pid), not the PAT") }
            if n == 1, pid != 0x1000 { fail("the second packet is PID \(pid), not the PMT") }
            let counter = packet[start + 3] & 0x0F
            if let last = continuity[pid], counter != (last + 1) & 0x0F { fail("PID \(pid): continuity \(counter) after \(last)") }
            continuity[pid] = counter
        }
    }
    return 0
}

func fail(_ message: String) -> Never { fatalError("fuzz-mpegts: \(message)") }
