@testable import MediaContainers
import Testing

/// MPEGTSWriter fed what a hostile file or peer can claim (issue 73, fuzz-mpegts): its times are
/// turned to 90 kHz without trapping, and its segments stay whole packets.
@Suite struct MPEGTSWriterTests {
    let avcC: [UInt8] = [1, 0x64, 0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x64, 0, 0x1F, 1, 0, 2, 0x68, 0xEE]

    /// The PES timestamps of `segment`'s packets that start a PES, by PID: (PTS, DTS or nil).
    func times(_ segment: [UInt8]) -> [(pid: UInt16, pts: UInt64, dts: UInt64?)] {
        func stamp(_ b: ArraySlice<UInt8>) -> UInt64 {
            let b = Array(b)
            return UInt64(b[0] >> 1 & 7) << 30 | UInt64(b[1]) << 22 | UInt64(b[2] >> 1) << 15 | UInt64(b[3]) << 7 | UInt64(b[4] >> 1)
        }
        var found: [(UInt16, UInt64, UInt64?)] = []
        for start in stride(from: 0, to: segment.count, by: 188) {
            let p = Array(segment[start..<start + 188])
            let pid = UInt16(p[1] & 0x1F) << 8 | UInt16(p[2])
            guard p[1] & 0x40 != 0, pid >= 0x100, pid < 0x1000 else { continue }
            var at = 4
            if p[3] & 0x20 != 0 { at += 1 + Int(p[4]) }
            guard p[at..<at + 3] == [0, 0, 1] else { continue }
            let flags = p[at + 7]
            found.append((pid, stamp(p[(at + 9)...]), flags & 0x40 != 0 ? stamp(p[(at + 14)...]) : nil))
        }
        return found
    }

    @Test func timesAreTurnedTo90kHzExactlyFromOneSecond() {
        var writer = MPEGTSWriter(tracks: [MP4TrackFormat(trackID: 1, codec: .h264(avcC: avcC, width: 320, height: 240)),
                                           MP4TrackFormat(trackID: 2, codec: .aac(audioSpecificConfig: [0x11, 0x90], sampleRate: 48_000, channels: 2))])
        let frame: [UInt8] = [0, 0, 0, 5, 0x65, 1, 2, 3, 4]
        let segment = writer.segment([
            FragmentRun(trackID: 1, timescale: 90_000, baseDecodeTime: 0, samples: [
                MP4Sample(offset: 0, size: 9, decodeTime: 3_600, duration: 3_600, compositionOffset: 7_200, isSync: true),
            ], data: frame),
            FragmentRun(trackID: 2, timescale: 48_000, baseDecodeTime: 0, samples: [
                MP4Sample(offset: 0, size: 6, decodeTime: 48_000, duration: 1_024, compositionOffset: 0, isSync: true),
            ], data: [UInt8](repeating: 0, count: 6)),
        ])
        #expect(segment.count % 188 == 0 && segment.count == 4 * 188)
        let stamps = times(segment)
        #expect(stamps.count == 2)
        #expect(stamps.first { $0.pid == 0x100 }.map { ($0.pts, $0.dts) } ?? (0, nil) == (90_000 + 10_800, 90_000 + 3_600))
        #expect(stamps.first { $0.pid == 0x101 }.map { ($0.pts, $0.dts) } ?? (0, 0) == (90_000 + 90_000, nil))
    }

    @Test func claimedTimesPastWhatTheClockHoldsDoNotTrap() {
        var writer = MPEGTSWriter(tracks: [MP4TrackFormat(trackID: 1, codec: .h264(avcC: avcC, width: 320, height: 240)),
                                           MP4TrackFormat(trackID: 2, codec: .aac(audioSpecificConfig: [], sampleRate: 1, channels: 2))])
        let runs = [
            FragmentRun(trackID: 1, timescale: 90_000, baseDecodeTime: 0, samples: [
                MP4Sample(offset: 0, size: 9, decodeTime: .max, duration: 0, compositionOffset: .max, isSync: true),
                MP4Sample(offset: 0, size: 9, decodeTime: 0, duration: 0, compositionOffset: .min, isSync: false),
                MP4Sample(offset: 0, size: 9, decodeTime: UInt64(Int64.max) / 90_000 + 1, duration: 0, compositionOffset: 0, isSync: false),
                // More bytes claimed than the run holds: left out.
                MP4Sample(offset: 0, size: 1_000, decodeTime: 1, duration: 0, compositionOffset: 0, isSync: false),
            ], data: [UInt8](repeating: 0, count: 27)),
            // A clock of 1 tick a second (a sample rate of 1).
            FragmentRun(trackID: 2, timescale: 1, baseDecodeTime: 0, samples: [
                MP4Sample(offset: 0, size: 2, decodeTime: UInt64(Int64.max), duration: 0, compositionOffset: -1, isSync: true),
            ], data: [1, 2]),
        ]
        let segment = writer.segment(runs)
        #expect(segment.count % 188 == 0)
        #expect(stride(from: 0, to: segment.count, by: 188).allSatisfy { segment[$0] == 0x47 })
        #expect(times(segment).count == 4)
    }

    @Test func anAACFrameADTSCannotHoldIsLeftOutAndAnyConfigIsFramed() throws {
        // Object type 31 (an escape), 15 channels, rate index 15: each field kept to its width.
        var writer = MPEGTSWriter(tracks: [MP4TrackFormat(trackID: 1, codec: .aac(audioSpecificConfig: [0xFF, 0xFF], sampleRate: 48_000, channels: 2))])
        let segment = writer.segment([FragmentRun(trackID: 1, timescale: 48_000, baseDecodeTime: 0, samples: [
            MP4Sample(offset: 0, size: 9_000, decodeTime: 0, duration: 1_024, compositionOffset: 0, isSync: true),
            MP4Sample(offset: 0, size: 10, decodeTime: 1_024, duration: 1_024, compositionOffset: 0, isSync: true),
        ], data: [UInt8](repeating: 7, count: 9_010))])
        let stamps = times(segment)
        #expect(stamps.count == 1 && stamps.first?.pts == 90_000 + 1_920)
        let adts = try #require(MPEGTSWriter.adts([1, 2, 3][...], config: [0xFF, 0xFF]))
        #expect(adts.count == 10 && adts[0] == 0xFF && adts[1] == 0xF1 && adts[2] == (1 << 6 | 15 << 2 | 1))
        #expect(MPEGTSWriter.adts(ArraySlice(repeating: 0, count: 0x1FFF - 7), config: [0x11, 0x90]) != nil)
        #expect(MPEGTSWriter.adts(ArraySlice(repeating: 0, count: 0x1FFF - 6), config: [0x11, 0x90]) == nil)
    }

    @Test func addingSaturatedStopsAtTheEnds() {
        #expect(Int64.max.addingSaturated(1) == .max && Int64.min.addingSaturated(-1) == .min && Int64(2).addingSaturated(-3) == -1)
    }
}
