import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// AVFAudio's file and buffers, as waveform and analysis code uses them: a file read into float
/// buffers from any position, its format and length; PCM written to a WAV that ffmpeg reads back
/// with the same samples, under its name only once closed.
@Suite(.media, .timeLimit(.minutes(5))) struct AVAudioFileTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A second of a 1 kHz sine at 48 kHz in stereo, left at half the right's level, as 16-bit WAV.
    func sine() throws -> URL {
        let url = folder.appendingPathComponent("sine.wav")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=1",
                                         "-af", "pan=stereo|c0=0.5*c0|c1=c0", "-c:a", "pcm_s16le", url.path])
        return url
    }

    @Test func readsIntoFloatBuffersFromAnyPosition() throws {
        let file = try AVAudioFile(forReading: try sine())
        #expect(file.length == 48_000)
        #expect(file.processingFormat.isStandard && file.processingFormat.sampleRate == 48_000 && file.processingFormat.channelCount == 2)
        #expect(file.fileFormat.sampleRate == 48_000)
        let buffer = try #require(AVAudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 4800))
        var total = 0, peaks: (Float, Float) = (0, 0)
        while true {
            try file.read(into: buffer)
            if buffer.frameLength == 0 { break }
            let data = try #require(buffer.floatChannelData)
            for f in 0..<Int(buffer.frameLength) { peaks = (max(peaks.0, abs(data[0][f])), max(peaks.1, abs(data[1][f]))) }
            total += Int(buffer.frameLength)
        }
        #expect(total == 48_000 && file.framePosition == 48_000)
        // ffmpeg's sine is at 1/8 of full scale; the left channel at half of that.
        #expect(abs(peaks.1 - 0.125) < 0.01 && abs(peaks.0 - 0.0625) < 0.01, "\(peaks)")
        // From frame 24,000: the rest, 24,000 frames, the first equal to what a read from the start gives there.
        file.framePosition = 24_000
        let rest = try #require(AVAudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 48_000))
        try file.read(into: rest)
        #expect(rest.frameLength == 24_000)
        file.framePosition = 0
        let whole = try #require(AVAudioPCMBuffer(pcmFormat: file.processingFormat, frameCapacity: 48_000))
        try file.read(into: whole)
        #expect(whole.frameLength == 48_000)
        #expect(abs(rest.floatChannelData![1][0] - whole.floatChannelData![1][24_000]) < 1e-6)
    }

    /// Float buffers written to a 16-bit WAV: ffmpeg reads the same samples back; nothing is
    /// under the name before close(); a write in another format is refused naming both.
    @Test func writesAWAVThatIsThereOnlyOnceClosed() throws {
        let url = folder.appendingPathComponent("out.wav")
        let format = try #require(AVAudioFormat(standardFormatWithSampleRate: 44_100, channels: 1))
        var file: AVAudioFile? = try AVAudioFile(forWriting: url, settings: [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: 44_100,
                                                                            AVNumberOfChannelsKey: 1, AVLinearPCMBitDepthKey: 16, AVLinearPCMIsFloatKey: false])
        let buffer = try #require(AVAudioPCMBuffer(pcmFormat: format, frameCapacity: 441))
        buffer.frameLength = 441
        for f in 0..<441 { buffer.floatChannelData![0][f] = Float(f % 100) / 200 - 0.25 }
        for _ in 0..<100 { try file?.write(from: buffer) }
        #expect(file?.length == 44_100)
        #expect(!FileManager.default.fileExists(atPath: url.path), "the file is under its name before it is complete")
        let stereoFormat = try #require(AVAudioFormat(standardFormatWithSampleRate: 44_100, channels: 2))
        let stereo = try #require(AVAudioPCMBuffer(pcmFormat: stereoFormat, frameCapacity: 10))
        #expect(throws: (any Error).self) { try file?.write(from: stereo) }
        file?.close()
        file = nil
        let probe = try MediaProbe(url.path)
        #expect(probe.stream("audio")?.codecName == "pcm_s16le" && probe.stream("audio")?.sampleRate == 44_100)
        let raw = folder.appendingPathComponent("back.raw").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", url.path, "-f", "s16le", raw])
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(samples.count == 44_100)
        #expect(samples[0] == Int16((-0.25 * 32768).rounded()) && samples[150] == Int16(((50.0 / 200 - 0.25) * 32768).rounded()))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.hasSuffix(".partial") })
    }

    @Test func refusals() throws {
        #expect(throws: (any Error).self) { try AVAudioFile(forReading: folder.appendingPathComponent("none.wav")) }
        let text = folder.appendingPathComponent("text.wav")
        try "not a sound".write(to: text, atomically: true, encoding: .utf8)
        #expect(throws: (any Error).self) { try AVAudioFile(forReading: text) }
        #expect(throws: (any Error).self) {
            try AVAudioFile(forWriting: folder.appendingPathComponent("x.caf"), settings: [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: 44_100, AVNumberOfChannelsKey: 1])
        }
        #expect(throws: (any Error).self) {
            try AVAudioFile(forWriting: folder.appendingPathComponent("missing/x.wav"), settings: [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: 44_100, AVNumberOfChannelsKey: 1])
        }
        #expect(AVAudioFormat(commonFormat: .pcmFormatFloat64, sampleRate: 44_100, channels: 2, interleaved: false) == nil)
        #expect(AVAudioFormat(standardFormatWithSampleRate: .nan, channels: 2) == nil)
        let mono = try #require(AVAudioFormat(standardFormatWithSampleRate: 8000, channels: 1))
        #expect(AVAudioPCMBuffer(pcmFormat: mono, frameCapacity: 0) == nil)
    }
}
