import AVFoundation
import ImageIO
import GraphKitTesting
import TestSupport
import Testing

/// AVAsset, AVAssetTrack, AVAssetReader and its outputs, CMSampleBuffer, CMBlockBuffer and
/// CMFormatDescription against AVFoundation's documented behaviour, on media made here; and the
/// waveform example (AVFoundation code, compiled unchanged).
@Suite(.media, .timeLimit(.minutes(10))) struct AVAssetReaderTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static let pcm16: [String: Any] = [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMBitDepthKey: 16, AVLinearPCMIsFloatKey: false,
                                      AVLinearPCMIsBigEndianKey: false, AVLinearPCMIsNonInterleaved: false]

    /// One second of a stereo 440 Hz sine at 1/8 of full scale (ffmpeg's), in `name`'s format.
    func sine(_ name: String, seconds: Double = 1) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-af", "pan=stereo|c0=c0|c1=c0", "-y", url.path])
        return url
    }

    func movie(frames: Int) throws -> URL {
        let url = folder.appendingPathComponent("movie.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                                         "-f", "lavfi", "-i", "sine=duration=\(Double(frames) / 25)", "-t", "\(Double(frames) / 25)", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                         "-c:a", "aac", "-y", url.path])
        return url
    }

    @Test func assetLoadsItsPropertiesAsAVFoundationDoes() async throws {
        let asset = AVURLAsset(url: try movie(frames: 25))
        let (duration, tracks) = try await asset.load(.duration, .tracks)
        #expect(abs(duration.seconds - 1.0) < 0.05, "\(duration.seconds)")
        #expect(tracks.map(\.mediaType).sorted { $0.rawValue < $1.rawValue } == [.audio, .video])
        #expect(try await asset.load(.isPlayable))
        let video = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let (size, rate, range) = try await video.load(.naturalSize, .nominalFrameRate, .timeRange)
        #expect(size == CGSize(width: 160, height: 120) && rate == 25 && range.start == .zero)
        let descriptions = try await video.load(.formatDescriptions)
        #expect(CMFormatDescriptionGetMediaType(descriptions[0]) == kCMMediaType_Video)
        #expect(CMFormatDescriptionGetMediaSubType(descriptions[0]) == kCMVideoCodecType_H264)
        #expect(CMVideoFormatDescriptionGetDimensions(descriptions[0]) == CMVideoDimensions(width: 160, height: 120))
        let audio = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        let audioDescription = try await audio.load(.formatDescriptions)[0]
        #expect(CMFormatDescriptionGetMediaSubType(audioDescription) == kAudioFormatMPEG4AAC)
        let asbd = try #require(CMAudioFormatDescriptionGetStreamBasicDescription(audioDescription)?.pointee)
        #expect(asbd.mFormatID == kAudioFormatMPEG4AAC && asbd.mSampleRate == 44100 && asbd.mChannelsPerFrame == 1)
        #expect(try await asset.loadTrack(withTrackID: video.trackID) === video)
    }

    /// The facts a track's index states, as ffprobe reads them from the same file: its clock,
    /// the bytes of its samples, its shortest frame, its language (`und` is none); and what
    /// each track's media is for.
    @Test func indexFactsAreTheFilesOwn() async throws {
        let url = folder.appendingPathComponent("lang.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=duration=2",
                                         "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-metadata:s:a:0", "language=fra",
                                         "-y", url.path])
        func probe(_ stream: String, _ entries: String) throws -> [String] {
            try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries", entries, "-of", "csv=p=0", url.path])
                .split(separator: "\n").compactMap { $0.split(separator: ",").first.map(String.init) }  // "258," with side data
        }
        let asset = AVURLAsset(url: url)
        let video = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let audio = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        for (track, stream) in [(video, "v:0"), (audio, "a:0")] {
            let timeBase = try #require(try probe(stream, "stream=time_base").first)   // "1/12800"
            #expect(try await track.load(.naturalTimeScale) == CMTimeScale(timeBase.split(separator: "/")[1])!, "\(stream): \(timeBase)")
            let bytes = try probe(stream, "packet=size").compactMap { Int64($0) }.reduce(0, +)
            #expect(try await track.load(.totalSampleDataLength) == bytes, "\(stream)")
            #expect(try await track.load(.isSelfContained))
        }
        #expect(try await video.load(.minFrameDuration).seconds == 0.04)
        #expect(try await audio.load(.minFrameDuration) == CMTime(value: 1024, timescale: 44_100))
        #expect(try await audio.load(.languageCode) == "fra")
        #expect(try await video.load(.languageCode) == nil)
        #expect(video.hasMediaCharacteristic(.visual) && !video.hasMediaCharacteristic(.audible))
        #expect(audio.hasMediaCharacteristic(.audible) && !audio.hasMediaCharacteristic(.visual))

        // A WAV has no index: the sample rate as its clock, and nothing the index would give.
        let wav = AVURLAsset(url: try sine("tone.wav"))
        let tone = try #require(try await wav.loadTracks(withMediaType: .audio).first)
        #expect(try await tone.load(.naturalTimeScale) == 44_100)
        #expect(try await tone.load(.minFrameDuration) == .invalid)
        #expect(try await tone.load(.languageCode) == nil)
    }

    @available(*, deprecated)
    /// A phone's portrait video (ffmpeg's quarter turn, 160x120 stored): `preferredTransform`
    /// is its display matrix, the turn ffprobe reads, and the sound's is the identity;
    /// `estimatedDataRate` is each track's bits a second as ffprobe counts them (sample bytes
    /// over duration). Before, every transform was the identity and there was no data rate.
    @Test func preferredTransformAndDataRateComeFromTheIndex() async throws {
        let rotated = try RotatedVideo.make(90, in: folder)
        let asset = AVURLAsset(url: URL(fileURLWithPath: rotated))
        let video = try #require(try await asset.loadTracks(withMediaType: .video).first)
        let sound = try #require(try await asset.loadTracks(withMediaType: .audio).first)
        let (turn, videoRate) = try await video.load(.preferredTransform, .estimatedDataRate)
        // ffprobe's rotation is counter-clockwise degrees: the matrix (cos r, -sin r, sin r, cos r).
        let r = Double(try RotatedVideo.geometry(rotated).rotation) * .pi / 180
        #expect(r != 0)
        for (got, expected) in zip([turn.a, turn.b, turn.c, turn.d], [cos(r), -sin(r), sin(r), cos(r)]) {
            #expect(abs(Double(got) - expected) < 1e-4, "\(turn), ffprobe: \(r) radians")
        }
        #expect(try await sound.load(.preferredTransform).isIdentity)
        for (track, rate, index) in [(video, videoRate, "v:0"), (sound, try await sound.load(.estimatedDataRate), "a:0")] {
            let ffprobe = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", index, "-show_entries", "stream=bit_rate",
                                                            "-of", "default=nw=1:nk=1", rotated])
            let expected = try #require(Double(ffprobe.split(whereSeparator: \.isNewline).first ?? ""))
            #expect(abs(Double(rate) - expected) / expected < 0.01, "\(track.mediaType.rawValue): \(rate) against ffprobe's \(expected)")
        }
        // Not an MP4: no index to read, so no figure (AVFoundation's 0 for unknown) and the identity.
        let wav = folder.appendingPathComponent("tone.wav").path
        try TestMedia.writeWAV(wav, seconds: 1, sampleRate: 8_000, channels: 1)
        let wavTrack = try #require(try await AVURLAsset(url: URL(fileURLWithPath: wav)).loadTracks(withMediaType: .audio).first)
        #expect(try await wavTrack.load(.estimatedDataRate) == 0)
    }

    @Test func deprecatedSynchronousProperties() throws {
        let asset = AVAsset(url: try movie(frames: 10))
        #expect(asset.tracks.count == 2 && asset.tracks(withMediaType: .audio).count == 1 && asset.isPlayable)
        #expect(abs(asset.duration.seconds - 0.4) < 0.05)
        let video = asset.tracks(withMediaType: .video)[0]
        #expect(video.naturalSize.width == 160 && video.nominalFrameRate == 25 && video.preferredTransform.isIdentity)
        #expect(video.formatDescriptions.count == 1)
        // An unreadable file: no tracks and a zero duration, as AVFoundation's synchronous properties.
        let missing = AVAsset(url: folder.appendingPathComponent("missing.mp4"))
        #expect(missing.tracks.isEmpty && missing.duration == .zero && !missing.isPlayable)
    }

    @Test func unreadableFilesThrowInAVFoundationsDomain() async throws {
        let missing = AVURLAsset(url: folder.appendingPathComponent("missing.m4a"))
        await #expect(throws: (any Error).self) { try await missing.load(.duration) }
        do {
            _ = try await missing.load(.tracks)
        } catch let error as NSError {
            #expect(error.domain == AVFoundationErrorDomain && error.localizedDescription.contains("missing.m4a"))
        }
        #expect(throws: (any Error).self) { try AVAssetReader(asset: missing) }
    }

    /// PCM read to the end: the sample count is the file's, each buffer's count is its frames,
    /// times are in the sample rate, and copyNextSampleBuffer returns nil at the end.
    @Test func readerGivesEveryPCMFrameThenNil() throws {
        let asset = AVURLAsset(url: try sine("sine.wav"))
        let reader = try AVAssetReader(asset: asset)
        let track = asset.tracks(withMediaType: .audio)[0]
        let output = AVAssetReaderTrackOutput(track: track, outputSettings: Self.pcm16)
        #expect(reader.canAdd(output))
        reader.add(output)
        #expect(reader.status == .unknown && output.copyNextSampleBuffer() == nil, "nil before reading starts")
        #expect(reader.startReading() && reader.status == .reading)
        var frames = 0
        var expectedStart = CMTime.zero
        while let sb = output.copyNextSampleBuffer() {
            #expect(CMSampleBufferIsValid(sb) && CMSampleBufferDataIsReady(sb))
            let n = CMSampleBufferGetNumSamples(sb)
            let pts = CMSampleBufferGetPresentationTimeStamp(sb)
            #expect(pts.timescale == 44100 && pts == expectedStart, "\(pts) vs \(expectedStart)")
            #expect(CMSampleBufferGetDuration(sb) == CMTimeMake(value: Int64(n), timescale: 44100))
            let block = try #require(CMSampleBufferGetDataBuffer(sb))
            #expect(CMBlockBufferGetDataLength(block) == n * 4 && CMSampleBufferGetTotalSampleSize(sb) == n * 4)
            #expect(CMSampleBufferGetImageBuffer(sb) == nil)
            let desc = try #require(CMSampleBufferGetFormatDescription(sb))
            let asbd = try #require(CMAudioFormatDescriptionGetStreamBasicDescription(desc)?.pointee)
            #expect(asbd.mFormatID == kAudioFormatLinearPCM && asbd.mBitsPerChannel == 16 && asbd.mChannelsPerFrame == 2
                    && asbd.mFormatFlags & kAudioFormatFlagIsSignedInteger != 0 && asbd.mBytesPerFrame == 4)
            frames += n
            expectedStart = pts + CMSampleBufferGetDuration(sb)
        }
        #expect(frames == 44100)
        #expect(output.copyNextSampleBuffer() == nil && reader.status == .completed && reader.error == nil)
    }

    @Test func blockBufferFunctions() throws {
        let asset = AVURLAsset(url: try sine("block.wav"))
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: asset.tracks(withMediaType: .audio)[0],
                                              outputSettings: [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMIsFloatKey: true, AVLinearPCMBitDepthKey: 32])
        reader.add(output)
        reader.startReading()
        let sb = try #require(output.copyNextSampleBuffer())
        let block = try #require(CMSampleBufferGetDataBuffer(sb))
        let length = CMBlockBufferGetDataLength(block)
        var copied = [UInt8](repeating: 0, count: length)
        #expect(CMBlockBufferCopyDataBytes(block, atOffset: 0, dataLength: length, destination: &copied) == kCMBlockBufferNoErr)
        var lengthAtOffset = 0, total = 0
        var pointer: UnsafeMutablePointer<CChar>?
        #expect(CMBlockBufferGetDataPointer(block, atOffset: 8, lengthAtOffsetOut: &lengthAtOffset, totalLengthOut: &total, dataPointerOut: &pointer) == kCMBlockBufferNoErr)
        #expect(total == length && lengthAtOffset == length - 8)
        #expect(UnsafeRawPointer(pointer!).load(as: UInt8.self) == copied[8])
        // Out of range: CoreMedia's error codes, nothing copied.
        #expect(CMBlockBufferCopyDataBytes(block, atOffset: length - 2, dataLength: 4, destination: &copied) == kCMBlockBufferBadLengthParameterErr)
        #expect(CMBlockBufferCopyDataBytes(block, atOffset: length + 1, dataLength: 0, destination: &copied) == kCMBlockBufferBadOffsetParameterErr)
        let floats = copied.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        #expect(floats.map(abs).max()! > 0.1 && floats.map(abs).max()! < 0.13, "ffmpeg's sine is at 1/8 of full scale")
        let asbd = CMAudioFormatDescriptionGetStreamBasicDescription(CMSampleBufferGetFormatDescription(sb)!)!.pointee
        #expect(asbd.mFormatFlags & kAudioFormatFlagIsFloat != 0 && asbd.mBitsPerChannel == 32)
        // A copy with new timing shares the data.
        var timing = CMSampleTimingInfo(duration: CMSampleBufferGetDuration(sb), presentationTimeStamp: CMTimeMake(value: 5, timescale: 1), decodeTimeStamp: .invalid)
        var copy: CMSampleBuffer?
        #expect(CMSampleBufferCreateCopyWithNewTiming(allocator: nil, sampleBuffer: sb, sampleTimingEntryCount: 1, sampleTimingArray: &timing, sampleBufferOut: &copy) == OSStatus(noErr))
        #expect(CMSampleBufferGetPresentationTimeStamp(copy!) == CMTimeMake(value: 5, timescale: 1))
        #expect(CMSampleBufferGetNumSamples(copy!) == CMSampleBufferGetNumSamples(sb))
        reader.cancelReading()
        #expect(output.copyNextSampleBuffer() == nil && reader.status == .cancelled)
    }

    /// Video frames as pixel buffers; CMSampleBufferGetNumSamples is 1 for each.
    @Test func videoFramesArePixelBuffers() throws {
        let asset = AVURLAsset(url: try movie(frames: 12))
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: asset.tracks(withMediaType: .video)[0],
                                              outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange])
        reader.add(output)
        reader.startReading()
        var count = 0
        while let sb = output.copyNextSampleBuffer() {
            #expect(CMSampleBufferGetNumSamples(sb) == 1 && CMSampleBufferGetDataBuffer(sb) == nil)
            let image = try #require(CMSampleBufferGetImageBuffer(sb))
            #expect(CVPixelBufferGetWidth(image) == 160 && CVPixelBufferGetPlaneCount(image) == 2)
            #expect(CVPixelBufferGetPixelFormatType(image) == kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange)
            #expect(CMFormatDescriptionGetMediaSubType(CMSampleBufferGetFormatDescription(sb)!) == kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange)
            #expect(abs(CMSampleBufferGetPresentationTimeStamp(sb).seconds - Double(count) / 25) < 0.001)
            count += 1
        }
        #expect(count == 12 && reader.status == .completed)
    }

    @Test func timeRangeAndAudioMixOutput() throws {
        let asset = AVURLAsset(url: try sine("range.wav", seconds: 2))
        let reader = try AVAssetReader(asset: asset)
        reader.timeRange = CMTimeRange(start: CMTimeMake(value: 1, timescale: 2), duration: CMTimeMake(value: 1, timescale: 4))
        let mix = AVAssetReaderAudioMixOutput(audioTracks: asset.tracks(withMediaType: .audio), audioSettings: Self.pcm16)
        #expect(reader.canAdd(mix))
        reader.add(mix)
        reader.startReading()
        var frames = 0
        var first: CMTime?
        while let sb = mix.copyNextSampleBuffer() {
            first = first ?? CMSampleBufferGetPresentationTimeStamp(sb)
            frames += CMSampleBufferGetNumSamples(sb)
        }
        #expect(frames == 11025 && first == CMTimeMake(value: 1, timescale: 2))
        #expect(reader.timeRange.duration == CMTimeMake(value: 1, timescale: 4))
    }

    /// A film's two sound tracks (a 440 Hz tone for a second, a 1 kHz one for half), mixed by
    /// AVAssetReaderAudioMixOutput: each sample of the mix is the sum of the two tracks' as each
    /// reads alone, for as long as the longer; a video track cannot be mixed.
    @Test func anAudioMixOutputSumsTheTracks() throws {
        let url = folder.appendingPathComponent("two-tracks.mov")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
                                         "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=0.5",
                                         "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-c:a", "pcm_s16le", "-y", url.path])
        let asset = AVURLAsset(url: url)
        let tracks = asset.tracks(withMediaType: .audio)
        #expect(tracks.count == 2)
        let settings: [String: Any] = Self.pcm16.merging([AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 1]) { $1 }
        func read(_ output: AVAssetReaderOutput) throws -> [Int16] {
            let reader = try AVAssetReader(asset: asset)
            #expect(reader.canAdd(output))
            reader.add(output)
            #expect(reader.startReading())
            var samples: [Int16] = []
            while let buffer = output.copyNextSampleBuffer(), let block = CMSampleBufferGetDataBuffer(buffer) {
                var chunk = [Int16](repeating: 0, count: CMBlockBufferGetDataLength(block) / 2)
                CMBlockBufferCopyDataBytes(block, atOffset: 0, dataLength: chunk.count * 2, destination: &chunk)
                samples += chunk
            }
            #expect(reader.status == .completed, "\(String(describing: reader.error))")
            return samples
        }
        let a = try read(AVAssetReaderTrackOutput(track: tracks[0], outputSettings: settings))
        let b = try read(AVAssetReaderTrackOutput(track: tracks[1], outputSettings: settings))
        #expect(a.count == 48_000 && b.count == 24_000)
        let mixed = try read(AVAssetReaderAudioMixOutput(audioTracks: tracks, audioSettings: settings))
        #expect(mixed.count == 48_000)
        let wrong = mixed.indices.filter { mixed[$0] != Int16(clamping: Int(a[$0]) + ($0 < b.count ? Int(b[$0]) : 0)) }
        #expect(wrong.isEmpty, "\(wrong.count) samples differ, the first at \(wrong.first ?? -1)")

        let withVideo = AVAssetReaderAudioMixOutput(audioTracks: tracks + asset.tracks(withMediaType: .video), audioSettings: settings)
        #expect(!(try AVAssetReader(asset: asset)).canAdd(withVideo))
    }

    /// What a reader cannot give is refused by canAdd, and adding it anyway fails the reader
    /// (AVFoundation raises): startReading returns false, nothing crashes.
    @Test func refusedOutputsFailTheReader() throws {
        let asset = AVURLAsset(url: try sine("refused.wav"))
        let track = asset.tracks(withMediaType: .audio)[0]
        let reader = try AVAssetReader(asset: asset)
        let bigEndian = AVAssetReaderTrackOutput(track: track, outputSettings: [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMIsBigEndianKey: true])
        let noTrack = AVAssetReaderAudioMixOutput(audioTracks: [], audioSettings: nil)
        #expect(!reader.canAdd(bigEndian) && !reader.canAdd(noTrack))
        reader.add(bigEndian)
        #expect(reader.status == .failed && (reader.error?.localizedDescription ?? "").contains("AVLinearPCMIsBigEndianKey"))
        #expect(!reader.startReading() && bigEndian.copyNextSampleBuffer() == nil)
    }

    // MARK: The example

    @Test func waveformExample() throws {
        let wav = try sine("waveform.wav")
        let png = folder.appendingPathComponent("waveform.png")
        let printed = try TestMedia.runTool(try builtExample("example-avfoundation-waveform"), [wav.path, "10", png.path])
        #expect(printed.contains("read 44100 frames of 2 channels (1.000 s)"), "\(printed)")
        // Drawn with CGContext: 10 bars of peak 0.125, so 12.5 rows about the middle (rows
        // 43.75..<56.25), green, on dark grey.
        let source = try #require(CGImageSourceCreateWithURL(png as CFURL, nil))
        let image = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil))
        #expect(image.width == 40 && image.height == 100)
        let bytes = try #require(CFDataGetBytePtr(image.dataProvider?.data))
        func isBar(_ x: Int, _ row: Int) -> Bool { bytes[row * image.bytesPerRow + x * 4 + 1] > 150 }   // BGRA: green
        #expect((0..<100).filter { isBar(1, $0) } == Array(44..<56), "\((0..<100).filter { isBar(1, $0) })")
        #expect(!isBar(3, 50) && isBar(37, 50))
        let peaks = try #require(printed.split(separator: "\n").first { $0.hasPrefix("peaks ") })
            .split(separator: " ").dropFirst().compactMap { Float($0) }
        #expect(peaks.count == 10 && peaks.allSatisfy { abs($0 - 0.125) < 0.002 }, "\(peaks)")
        // The same on AAC, from an M4A: lossy, so the peaks are near, and the frame count is
        // what ffprobe counts.
        let m4a = try sine("waveform.m4a")
        let aac = try TestMedia.runTool(try builtExample("example-avfoundation-waveform"), [m4a.path, "10"])
        let aacPeaks = try #require(aac.split(separator: "\n").first { $0.hasPrefix("peaks ") })
            .split(separator: " ").dropFirst().compactMap { Float($0) }
        #expect(aacPeaks.dropFirst().dropLast().allSatisfy { abs($0 - 0.125) < 0.01 }, "\(aacPeaks)")
        #expect(aac.contains("of 2 channels"), "\(aac)")
    }
}
