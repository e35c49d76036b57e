import AVFoundation
import GraphKitTesting
import Testing

/// AVMutableComposition as AVFoundation code builds and reads one (trim and join, issue 31),
/// on media made here.
@Suite(.timeLimit(.minutes(10))) struct AVCompositionTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// `seconds` of a 44.1 kHz mono sine, as WAV.
    func sine(_ name: String, seconds: Double) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-c:a", "pcm_s16le", "-y", url.path])
        return url
    }

    static let pcm16: [String: Any] = [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMBitDepthKey: 16, AVLinearPCMIsFloatKey: false,
                                      AVLinearPCMIsBigEndianKey: false, AVLinearPCMIsNonInterleaved: false]

    @Test func aCompositionIsBuiltAndReadAsAVFoundationDoes() async throws {
        let a = AVURLAsset(url: try sine("a.wav", seconds: 1)), b = AVURLAsset(url: try sine("b.wav", seconds: 1))
        let composition = AVMutableComposition()
        let track = try #require(composition.addMutableTrack(withMediaType: .audio, preferredTrackID: kCMPersistentTrackID_Invalid))
        let aTrack = try #require(try await a.loadTracks(withMediaType: .audio).first)
        let bTrack = try #require(try await b.loadTracks(withMediaType: .audio).first)
        let half = CMTime(value: 1, timescale: 2), quarter = CMTime(value: 1, timescale: 4)
        try track.insertTimeRange(CMTimeRange(start: .zero, duration: half), of: aTrack, at: .zero)
        try track.insertTimeRange(CMTimeRange(start: quarter, duration: half), of: bTrack, at: half)
        #expect(track.segments.count == 2)
        #expect(track.segments[1].sourceURL?.path == b.url.path)
        #expect(track.segments[1].timeMapping.source.start == quarter)
        #expect(track.segments[1].timeMapping.target.start == half)
        #expect(try await composition.load(.duration) == CMTime(value: 1, timescale: 1))
        #expect(try await composition.load(.tracks).count == 1)

        // Past the source's end: thrown, naming the file.
        #expect {
            try track.insertTimeRange(CMTimeRange(start: half, duration: CMTime(value: 1, timescale: 1)), of: aTrack, at: .zero)
        } throws: { ($0 as NSError).localizedDescription.contains("a.wav") && ($0 as NSError).localizedDescription.contains("past the track's end") }
        #expect(track.segments.count == 2)

        let reader = try AVAssetReader(asset: composition)
        let stored = AVAssetReaderTrackOutput(track: track, outputSettings: nil)
        #expect(!reader.canAdd(stored))  // WAV pieces: no MP4 sample description says they can be joined as stored
        let output = AVAssetReaderTrackOutput(track: track, outputSettings: Self.pcm16)
        #expect(reader.canAdd(output))
        reader.add(output)
        #expect(reader.startReading())
        var frames = 0, last = CMTime.negativeInfinity
        while let sample = output.copyNextSampleBuffer() {
            frames += CMSampleBufferGetNumSamples(sample)
            let pts = CMSampleBufferGetPresentationTimeStamp(sample)
            #expect(pts > last)
            last = pts
        }
        #expect(reader.status == .completed, "\(String(describing: reader.error))")
        #expect(frames == 44_100)
    }
}
