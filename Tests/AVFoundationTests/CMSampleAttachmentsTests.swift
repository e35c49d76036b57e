import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Per-sample attachments (`kCMSampleAttachmentKey_NotSync` and the Swift overlay's
/// `sampleAttachments`), CMTime's descriptions and the host clock, against CoreMedia's documented
/// behaviour, on media made here.
@Suite(.media, .timeLimit(.minutes(10))) struct CMSampleAttachmentsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 2 s of 25 fps H.264 with B-frames, a keyframe every 10 frames and one more where the
    /// scene cuts (x264 decides: the test reads the flags ffprobe sees, not a pattern).
    func movie() throws -> URL {
        let url = folder.appendingPathComponent("gop.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2",
                                         "-c:v", "libx264", "-g", "10", "-bf", "2", "-pix_fmt", "yuv420p", url.path])
        return url
    }

    /// Whether each packet is a keyframe, in decode order, as ffprobe reads the file.
    func keyFlags(_ path: String) throws -> [Bool] {
        let text = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags",
                                                     "-of", "csv=p=0", path])
        return text.split(whereSeparator: \.isNewline).map { $0.hasPrefix("K") }
    }

    /// A passthrough reader's samples say which are sync samples, exactly where the file's
    /// index does, through the C function and the Swift overlay alike.
    @Test func storedVideoSamplesSayWhichAreSyncSamples() async throws {
        let url = try movie()
        let expected = try keyFlags(url.path)
        #expect(expected.filter { $0 }.count >= 5 && expected.contains(false))
        let asset = AVURLAsset(url: url)
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: try #require(try await asset.loadTracks(withMediaType: .video).first), outputSettings: nil)
        reader.add(output)
        #expect(reader.startReading())
        var sync: [Bool] = [], overlay: [Bool] = []
        while let sample = output.copyNextSampleBuffer() {
            let array = try #require(CMSampleBufferGetSampleAttachmentsArray(sample, createIfNecessary: false) as? [[CFString: Any]])
            #expect(array.count == 1)
            let notSync = array[0][kCMSampleAttachmentKey_NotSync] as? Bool ?? false
            #expect(array[0][kCMSampleAttachmentKey_DependsOnOthers] as? Bool == notSync)
            sync.append(!notSync)
            overlay.append(!(sample.sampleAttachments.first?[.notSync] as? Bool ?? false))
        }
        #expect(sync == expected)
        #expect(overlay == expected)
    }

    /// Raw audio has no attachments unless asked to make them (one empty dictionary per frame);
    /// what app code sets is kept, and NotSync set on compressed video is the sample's sync flag.
    @Test func attachmentsAreMadeWhenAskedAndKeepWhatIsSet() async throws {
        let wav = folder.appendingPathComponent("tone.wav")
        try TestMedia.writeWAV(wav.path, seconds: 0.5, sampleRate: 8_000, channels: 1)
        let asset = AVURLAsset(url: wav)
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: try #require(try await asset.loadTracks(withMediaType: .audio).first),
                                              outputSettings: [AVFormatIDKey: kAudioFormatLinearPCM])
        reader.add(output)
        #expect(reader.startReading())
        let pcm = try #require(output.copyNextSampleBuffer())
        #expect(CMSampleBufferGetSampleAttachmentsArray(pcm, createIfNecessary: false) == nil)
        let made = try #require(CMSampleBufferGetSampleAttachmentsArray(pcm, createIfNecessary: true))
        #expect(made.count == CMSampleBufferGetNumSamples(pcm) && made.allSatisfy { ($0 as? [CFString: Any])?.isEmpty == true })
        pcm.sampleAttachments[0][.doNotDisplay] = true
        #expect(pcm.sampleAttachments[0][.doNotDisplay] as? Bool == true)
        #expect(pcm.sampleAttachments[1][.doNotDisplay] == nil)
        #expect(CMSampleBufferGetSampleAttachmentsArray(pcm, createIfNecessary: false) != nil)

        let video = AVURLAsset(url: try movie())
        let stored = try AVAssetReader(asset: video)
        let frames = AVAssetReaderTrackOutput(track: try #require(try await video.loadTracks(withMediaType: .video).first), outputSettings: nil)
        stored.add(frames)
        #expect(stored.startReading())
        let first = try #require(frames.copyNextSampleBuffer())
        #expect(first.sampleAttachments[0][.notSync] == nil)
        first.sampleAttachments[0][.notSync] = true
        #expect(first.sampleAttachments[0][.notSync] as? Bool == true)
        #expect(first.sampleAttachments[0][.dependsOnOthers] as? Bool == true)
        first.sampleAttachments[0][.notSync] = nil
        #expect(first.sampleAttachments[0][.notSync] == nil)
        #expect(Array(first.sampleAttachments[0]).map(\.key) == [.dependsOnOthers])
    }

    @Test func timesInWordsAsCoreMediaWritesThem() {
        #expect(CMTimeCopyDescription(allocator: nil, time: CMTime(value: 1001, timescale: 30_000)) == "{1001/30000 = 0.033}")
        #expect(CMTimeCopyDescription(allocator: nil, time: .invalid) == "{INVALID}")
        #expect(CMTimeCopyDescription(allocator: nil, time: .positiveInfinity) == "{+INFINITY}")
        #expect(CMTimeCopyDescription(allocator: nil, time: .indefinite) == "{INDEFINITE}")
        let rounded = CMTimeConvertScale(CMTime(value: 1, timescale: 3), timescale: 10, method: .default)
        #expect(CMTimeCopyDescription(allocator: nil, time: rounded) == "{3/10 = 0.300, rounded}")
        let range = CMTimeRange(start: .zero, duration: CMTime(value: 3, timescale: 2))
        #expect(CMTimeRangeCopyDescription(allocator: nil, range: range) == "{{0/1 = 0.000}, {3/2 = 1.500}}")
        #expect(CMTimeClampToRange(CMTime(value: -1, timescale: 1), range: range) == .zero)
        #expect(CMTimeClampToRange(CMTime(value: 2, timescale: 1), range: range) == CMTime(value: 3, timescale: 2))
        #expect(CMTimeClampToRange(CMTime(value: 1, timescale: 1), range: range) == CMTime(value: 1, timescale: 1))
        #expect(!CMTimeClampToRange(.invalid, range: range).isValid)
    }

    /// The host clock is the system's monotonic clock, in nanoseconds.
    @Test func theHostClockIsMonotonic() {
        var before = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        let a = CMClockGetTime(CMClockGetHostTimeClock())
        let b = CMSyncGetTime(CMClockGetHostTimeClock())
        #expect(a.timescale == 1_000_000_000 && CMTimeCompare(b, a) >= 0)
        #expect(a.value >= Int64(before.tv_sec) * 1_000_000_000 + Int64(before.tv_nsec))
        #expect(CMClockConvertHostTimeToSystemUnits(CMClockMakeHostTimeFromSystemUnits(123_456_789)) == 123_456_789)
    }
}
