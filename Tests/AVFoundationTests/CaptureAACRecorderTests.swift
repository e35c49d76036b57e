import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// The seeds' capture → AudioConverter → M4A recorder (AppleCorpus/CaptureAACRecorder.swift,
/// written as on a Mac) with the test microphone: the file is AAC at the microphone's rate, as
/// long as the capture, and holds its 440 Hz tone.
@Suite(.media, .timeLimit(.minutes(3))) struct CaptureAACRecorderTests {
    @Test func recordsTheMicrophoneToAnM4A() async throws {
        let folder = try TestMedia.temporaryFolder()
        let url = folder.appendingPathComponent("voice.m4a")
        let recorder = CaptureAACRecorder()
        let began = ContinuousClock.now
        try recorder.start(with: try #require(AVCaptureDevice(uniqueID: AVCaptureDevice.testMicrophoneID)))
        try await Task.sleep(nanoseconds: 3_000_000_000)
        recorder.stop()
        // A loaded machine wakes the sleep late: the capture lasted what the clock says.
        let elapsed = Double((ContinuousClock.now - began).components.seconds) + Double((ContinuousClock.now - began).components.attoseconds) / 1e18
        #expect(recorder.packets.count >= 50, "\(recorder.packets.count) packets for 3 s at 48 kHz")
        // The writer finishes on Swift's concurrency pool: wait for it without holding a thread of it.
        let failure: Error? = await withCheckedContinuation { done in recorder.writeM4A(to: url) { error in done.resume(returning: error) } }
        #expect(failure == nil, "\(String(describing: failure))")

        let probe = try MediaProbe(url.path)
        let audio = try #require(probe.stream("audio"))
        #expect(audio.codecName == "aac" && audio.sampleRate == 48_000 && audio.channels == 1)
        #expect(probe.duration > 1 && probe.duration < elapsed + 0.2, "\(probe.duration) s for \(elapsed) s of capture")
        let raw = folder.appendingPathComponent("voice.f32").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", url.path, "-f", "f32le", raw])
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let middle = samples[samples.count / 4 ..< samples.count * 3 / 4]
        var crossings: [Int] = []
        for i in middle.indices.dropFirst() where middle[i - 1] < 0 && middle[i] >= 0 { crossings.append(i) }
        let frequency = Double(crossings.count - 1) * 48_000 / Double(crossings.last! - crossings.first!)
        #expect(abs(frequency - 440) < 2, "\(frequency) Hz")
    }
}
