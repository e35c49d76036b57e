import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// AssetReader as an AVFoundation user drives it, on files GStreamer and ffmpeg make here.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetReaderTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A WAV of 2 s at 8 kHz mono whose sample n is n mod 4096 − 2048: every sample is known.
    func rampWAV(named name: String = "ramp.wav") throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "aevalsrc=(mod(n\\,4096)-2048)/32768:s=8000:d=2",
                                         "-c:a", "pcm_s16le", "-y", p])
        return p
    }

    static func samples(_ b: SampleBuffer) -> [Int16] { b.withAudioSamples(as: Int16.self) { Array($0) } }

    /// The AVAssetReader sample loop, prefixes dropped: every sample, in order, exact.
    @Test func theSampleLoopReadsEverySampleExactly() throws {
        let asset = try Asset(path: try rampWAV())
        #expect(abs(asset.duration.seconds - 2) < 0.001)
        let track = try asset.track(withMediaType: .audio)
        #expect(track.format == .pcm(.init(sampleRate: 8_000, channels: 1, sampleFormat: .s16le)))
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: track, outputSettings: .linearPCM(sampleFormat: .s16le))
        #expect(reader.canAdd(output))
        try reader.add(output)
        try reader.startReading()
        #expect(reader.status == .reading)
        var all: [Int16] = []
        while let sample = output.copyNextSampleBuffer() { all += Self.samples(sample) }
        #expect(reader.status == .completed)
        #expect(reader.error == nil)
        #expect(all.count == 16_000)
        #expect(all.enumerated().allSatisfy { $0.element == Int16($0.offset % 4096 - 2048) })
        #expect(output.copyNextSampleBuffer() == nil)  // stays at the end
    }

    /// timeRange reads part of the file, cut to the sample.
    /// An output mixing tracks: the same track twice is the track doubled, sample for sample,
    /// in the format the settings give (mono, the track's rate when none is given); and what a
    /// mix cannot take is refused by name before reading.
    @Test func aMixingOutputSumsItsTracks() throws {
        let asset = try Asset(path: try rampWAV())
        let track = try asset.track(withMediaType: .audio)
        let reader = try AssetReader(asset: asset)
        let mix = AssetReaderTrackOutput(mixing: [track, track], outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(mix)
        try reader.startReading()
        var all: [Int16] = []
        var formats: Set<MediaFormat> = []
        while let sample = mix.copyNextSampleBuffer() {
            all += Self.samples(sample)
            if let f = sample.format { formats.insert(f) }
        }
        #expect(reader.status == .completed)
        #expect(formats == [.pcm(.init(sampleRate: 8_000, channels: 1, sampleFormat: .s16le))])
        #expect(all.count == 16_000)
        #expect(all.indices.allSatisfy { all[$0] == Int16(2 * (($0 % 4096) - 2048)) })

        let other = try AssetReader(asset: asset)
        #expect(throws: GraphError.self) { try other.add(AssetReaderTrackOutput(mixing: Array(repeating: track, count: 9), outputSettings: nil)) }
        #expect(throws: GraphError.self) { try other.add(AssetReaderTrackOutput(mixing: [track, track], outputSettings: .stored(.audio))) }
        let elsewhere = try Asset(path: try rampWAV(named: "other.wav"))
        #expect(throws: GraphError.self) {
            try other.add(AssetReaderTrackOutput(mixing: [track, try elsewhere.track(withMediaType: .audio)], outputSettings: nil))
        }
        #expect(other.canAdd(AssetReaderTrackOutput(mixing: [track], outputSettings: nil)))
    }

    @Test func aTimeRangeIsCutToTheSample() throws {
        let asset = try Asset(path: try rampWAV())
        let reader = try AssetReader(asset: asset)
        reader.timeRange = MediaTimeRange(start: MediaTime(value: 3_001, timescale: 8_000), duration: MediaTime(value: 5_003, timescale: 8_000))
        let output = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(output)
        try reader.startReading()
        var all: [Int16] = []
        var first: MediaTime?
        while let sample = output.copyNextSampleBuffer() {
            if first == nil { first = sample.presentationTime }
            all += Self.samples(sample)
        }
        #expect(all.count == 5_003)
        #expect(all.first == Int16(3_001 % 4096 - 2048))
        #expect(all.last == Int16((3_001 + 5_002) % 4096 - 2048))
        #expect(first == MediaTime(value: 3_001, timescale: 8_000))
        #expect(reader.status == .completed)
    }

    /// A range from a time to the end, as AVFoundation writes it: a duration of
    /// `.positiveInfinity` (it trapped in MediaTime(seconds: .infinity)).
    @Test func aRangeToTheEndReadsTheRest() throws {
        let asset = try Asset(path: try rampWAV())
        let reader = try AssetReader(asset: asset)
        reader.timeRange = MediaTimeRange(start: MediaTime(value: 3_001, timescale: 8_000), duration: MediaTime(seconds: .infinity))
        let output = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(output)
        try reader.startReading()
        var count = 0
        while let sample = output.copyNextSampleBuffer() { count += sample.frameCount }
        #expect(count == 16_000 - 3_001)
        #expect(reader.status == .completed)
    }

    /// AAC in M4A, read as float, resampled and mixed down as the settings ask; the async
    /// sequence gives the same samples as the loop.
    @Test func outputSettingsConvertAndTheAsyncSequenceReads() async throws {
        let m4a = path("tone.m4a")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=440:r=44100:d=1.5", "-ac", "2", "-c:a", "aac", "-y", m4a])
        let asset = try Asset(path: m4a)
        let track = try asset.track(withMediaType: .audio)
        #expect(track.codec.contains("AAC"))
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: track, outputSettings: .linearPCM(sampleFormat: .f32le, sampleRate: 22_050, channels: 1))
        try reader.add(output)
        try reader.startReading()
        var frames = 0, peak: Float = 0
        for try await sample in output.samples {
            #expect(sample.format == .pcm(.init(sampleRate: 22_050, channels: 1, sampleFormat: .f32le)))
            frames += sample.frameCount
            sample.withAudioSamples(as: Float.self) { for s in $0 { peak = max(peak, abs(s)) } }
        }
        #expect(abs(frames - 33_075) <= 2, "\(frames) frames")  // 1.5 s, gapless (issue 18)
        // ffmpeg's sine is at 1/8 of full scale, and the mix to mono keeps the power: 1/8 × √½.
        #expect(abs(peak - 0.0884) < 0.01, "peak \(peak)")
        #expect(reader.status == .completed)
    }

    /// Video and audio of one file: the video read to its end before any audio is pulled
    /// (outputs read their file apart, so neither holds the other back).
    @Test func videoReadToTheEndBeforeAudioDoesNotStall() throws {
        let mp4 = path("av.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=4", "-f", "lavfi", "-i", "sine=r=48000:d=4",
                                         "-c:v", "libx264", "-c:a", "aac", "-shortest", "-y", mp4])
        let asset = try Asset(path: mp4)
        #expect(asset.tracks.map(\.mediaType) == [.video, .audio])
        let videoTrack = try asset.track(withMediaType: .video)
        #expect(videoTrack.format == .rawVideo(.init(pixelFormat: .bgra, width: 160, height: 120, frameRate: FrameRate(25))))
        let reader = try AssetReader(asset: asset)
        let video = AssetReaderTrackOutput(track: videoTrack, outputSettings: .pixels(.rgba))
        let audio = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio), outputSettings: nil)
        try reader.add(video)
        try reader.add(audio)
        try reader.startReading()
        var frames = 0
        while let f = video.copyNextSampleBuffer() {
            #expect(f.pixelFormat == .rgba && f.width == 160 && f.height == 120)
            frames += 1
        }
        #expect(frames == 100)
        #expect(reader.status == .reading)  // the audio is still to read
        var audioFrames = 0
        var sampleFormats: Set<SampleFormat> = []
        while let a = audio.copyNextSampleBuffer() {
            audioFrames += a.frameCount
            if case .pcm(let f)? = a.format { sampleFormats.insert(f.sampleFormat) }
        }
        #expect(abs(audioFrames - 192_000) <= 1024)
        // No settings: the decoder's own format, float for AAC (not AssetTrack.format's 16-bit).
        #expect(sampleFormats == [.f32le])
        #expect(reader.status == .completed)
    }

    /// Each frame is stamped with where it shows, as AVAssetReader stamps it: x264's B-frames
    /// give an MP4 an edit list that skips their composition offset, which GStreamer's demuxer
    /// leaves in the stamps (the first frame came out at 0.08 s, two frames late against the
    /// sound). Sound and picture start together at 0, frame n at n/25 s.
    @Test(arguments: ["mp4", "mov"])
    func samplesAreStampedWithWhereTheyShow(container: String) throws {
        let file = path("bframes.\(container)")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=2", "-f", "lavfi", "-i", "sine=r=48000:d=2",
                                         "-c:v", "libx264", "-bf", "2", "-c:a", "aac", "-shortest", "-y", file])
        let asset = try Asset(path: file)
        let reader = try AssetReader(asset: asset)
        let video = AssetReaderTrackOutput(track: try asset.track(withMediaType: .video), outputSettings: nil)
        let audio = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio), outputSettings: nil)
        try reader.add(video)
        try reader.add(audio)
        try reader.startReading()
        var times: [Double] = []
        while let f = video.copyNextSampleBuffer() { times.append(f.presentationTime?.seconds ?? -1) }
        #expect(times.count == 50)
        for (n, t) in times.enumerated() where abs(t - Double(n) / 25) > 0.001 {
            Issue.record("\(container): frame \(n) at \(t) s, not \(Double(n) / 25) s")
            break
        }
        let firstSound = audio.copyNextSampleBuffer()?.presentationTime?.seconds ?? -1
        #expect(abs(firstSound) < 0.001, "\(container): the sound starts at \(firstSound) s")
        while audio.copyNextSampleBuffer() != nil {}
        #expect(reader.status == .completed)
    }

    /// A reader of a 30 s WAV, started: far more than a test reads before it cancels.
    func readingALongWAV() throws -> (AssetReader, AssetReaderTrackOutput) {
        let wav = path("long.wav")
        try TestMedia.writeWAV(wav, seconds: 30, sampleRate: 48_000)
        let asset = try Asset(path: wav)
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .f32le))
        try reader.add(output)
        try reader.startReading()
        return (reader, output)
    }

    /// A pull waiting on another thread wakes with nil when reading is cancelled; later pulls
    /// return nil at once, and the status says why.
    @Test func cancelReadingWakesAPull() async throws {
        let (reader, output) = try readingALongWAV()
        let started = TestEvent()
        let puller = TestThread("puller") { () -> Int in
            var n = 0
            while output.copyNextSampleBuffer() != nil {
                n += 1
                if n == 5 { started.signal() }
                usleep(2_000)  // a slow consumer: the graph waits for it
            }
            return n
        }
        #expect(started.wait(guardSeconds: 60))
        reader.cancelReading()
        let pulled = await puller.join()
        #expect(pulled < 1_000)
        #expect(reader.status == .cancelled)
        #expect(await TestThread("after") { output.copyNextSampleBuffer() == nil }.join())
        await #expect(throws: GraphError.self) { for try await _ in output.samples {} }
    }

    /// A task cancelled while its loop's body runs, between two samples, ends the loop with
    /// `cancelled` at the next step and cancels the reader: a cancelled loop never ends as a
    /// track read to its end does (whoever wrote what it read would finish a short file).
    @Test func aLoopCancelledBetweenSamplesThrowsCancelled() async throws {
        let (reader, output) = try readingALongWAV()
        let loop = Task { () -> (samples: Int, error: (any Error)?) in
            var n = 0
            do {
                for try await _ in output.samples {
                    n += 1
                    if n == 3 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return (n, nil)
            } catch {
                return (n, error)
            }
        }
        let (samples, error) = await loop.value
        #expect(samples == 3)
        #expect((error as? GraphError)?.code == .cancelled, "the loop ended with \(String(describing: error))")
        #expect(reader.status == .cancelled)
    }

    // MARK: Mistakes

    @Test func unreadableFilesThrowWhenTheAssetIsMade() throws {
        #expect(throws: GraphError.self) { try Asset(path: path("missing.wav")) }
        do {
            _ = try Asset(path: path("missing.wav"))
        } catch {
            #expect(error.code == .inputUnreadable && error.message.contains("no such file"))
        }
        let junk = path("junk.mp4")
        #expect(FileManager.default.createFile(atPath: junk, contents: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) })))
        do {
            _ = try Asset(path: junk)
            Issue.record("a file of noise was read")
        } catch {
            #expect(error.code == .inputUnreadable || error.code == .missingPlugin, "\(error)")
            #expect(error.message.contains(junk))
        }
    }

    @Test func tracksAndSettingsThatDoNotMatchAreRefused() throws {
        let asset = try Asset(path: try rampWAV())
        #expect(asset.tracks(withMediaType: .video).isEmpty)
        do {
            _ = try asset.track(withMediaType: .video)
            Issue.record("a WAV gave a video track")
        } catch {
            #expect(error.message.contains("has no video track"), "\(error)")
        }
        let reader = try AssetReader(asset: asset)
        let asPixels = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .pixels(.bgra))
        #expect(!reader.canAdd(asPixels))
        #expect { try reader.add(asPixels) } throws: { ($0 as? GraphError)?.message.contains("cannot be read as video") == true }
        let other = try Asset(path: try rampWAV())
        let otherReader = try AssetReader(asset: try Asset(path: try { let p = path("b.wav"); try TestMedia.writeWAV(p, seconds: 0.5); return p }()))
        #expect(!otherReader.canAdd(AssetReaderTrackOutput(track: other.tracks[0], outputSettings: nil)))
        let ok = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(ok)
        #expect { try reader.add(ok) } throws: { ($0 as? GraphError)?.message.contains("belongs to a reader already") == true }
        try reader.startReading()
        #expect { try reader.startReading() } throws: { ($0 as? GraphError)?.message.contains("called already") == true }
        #expect(!reader.canAdd(AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: nil)))
        reader.cancelReading()
    }

    /// Settings past what decode declares it converts to are refused when the output is added,
    /// quoting decode's own ranges (`graphctl inspect decode`).
    @Test func settingsOutsideDecodesRangesAreRefused() throws {
        let asset = try Asset(path: try rampWAV())
        let reader = try AssetReader(asset: asset)
        guard case .integer(let rates) = DecodeNode.sampleRate.descriptor.kind,
              case .integer(let channels) = DecodeNode.channels.descriptor.kind else {
            Issue.record("decode's sampleRate and channels are not integer ranges")
            return
        }
        let fast = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .s16le, sampleRate: rates.upperBound + 1))
        #expect { try reader.add(fast) } throws: {
            ($0 as? GraphError)?.message.contains("choose \(rates.lowerBound) to \(rates.upperBound) Hz") == true
        }
        let wide = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .s16le, channels: channels.upperBound + 1))
        #expect(!reader.canAdd(wide))
        #expect(reader.canAdd(AssetReaderTrackOutput(track: asset.tracks[0],
                                                     outputSettings: .linearPCM(sampleFormat: .s16le, sampleRate: rates.upperBound, channels: channels.upperBound))))
    }

    /// A file removed after the asset was read: startReading fails, naming it.
    @Test func aFileGoneBeforeReadingFailsStartReading() throws {
        let wav = try rampWAV()
        let asset = try Asset(path: wav)
        let reader = try AssetReader(asset: asset)
        try reader.add(AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: nil))
        try FileManager.default.removeItem(atPath: wav)
        #expect { try reader.startReading() } throws: { ($0 as? GraphError)?.code == .inputUnreadable }
        #expect(reader.status == .failed)
    }

    /// An index-first file cut in half after its asset was read: GStreamer decodes it to the cut
    /// (issue 15's note), so the loop ends with what is there, some but not all of it, and never
    /// hangs.
    @Test func aFileCutInHalfReadsToTheCut() throws {
        let m4a = path("cut.m4a")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=d=3", "-c:a", "aac", "-movflags", "+faststart", "-y", m4a])
        let asset = try Asset(path: m4a)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: m4a))
        bytes = bytes.prefix(bytes.count / 2)
        try bytes.write(to: URL(fileURLWithPath: m4a))
        let reader = try AssetReader(asset: asset)
        let output = AssetReaderTrackOutput(track: asset.tracks[0], outputSettings: .linearPCM(sampleFormat: .s16le))
        try reader.add(output)
        try reader.startReading()
        var frames = 0
        while let s = output.copyNextSampleBuffer() { frames += s.frameCount }
        #expect(frames > 0 && frames < 3 * 44_100, "\(frames) frames")
        #expect(reader.status == .completed || reader.status == .failed)
    }
}
