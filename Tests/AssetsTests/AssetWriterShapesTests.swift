import Assets
import Dispatch
import Foundation
import GraphKit
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// Shapes of movies users make: one frame (a still), an odd rate, frames of another size
/// than the settings (scaled), I420 frames.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterShapesTests {
    func write(frames: Int, timescale: Int32, attributes: PixelBufferAttributes, settings: VideoSettings) async throws -> MediaProbe {
        try await writeFile(frames: frames, timescale: timescale, attributes: attributes, settings: settings).probe
    }

    func writeFile(frames: Int, timescale: Int32, attributes: PixelBufferAttributes, settings: VideoSettings) async throws -> (probe: MediaProbe, path: String) {
        let out = try TestMedia.temporaryFolder().appendingPathComponent("shape.mp4").path
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let input = AssetWriterInput(mediaType: .video, outputSettings: settings)
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: attributes)
        try writer.add(input)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for n in 0..<frames {
            try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: timescale))
        }
        try await writer.finishWriting()
        return (try MediaProbe(out, countFrames: true), out)
    }

    /// One frame, no rate to go by: it shows for one frame at 30 fps, so the movie has a
    /// length and ffmpeg decodes its one picture (a duration of 0 made an "empty" file).
    @Test func aStillOfOneFrame() async throws {
        let (probe, out) = try await writeFile(frames: 1, timescale: 30, attributes: PixelBufferAttributes(width: 64, height: 48),
                                               settings: VideoSettings(width: 64, height: 48))
        #expect(probe.stream("video")?.frameCount == 1)
        #expect(abs(probe.duration - 1.0 / 30) < 0.002, "duration \(probe.duration)")
        #expect(abs((probe.stream("video")?.frameRate ?? 0) - 30) < 0.01)
        let pictures = try TestMedia.temporaryFolder()
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, pictures.appendingPathComponent("%d.png").path])
        #expect(try FileManager.default.contentsOfDirectory(atPath: pictures.path) == ["1.png"])
    }

    /// Each frame lasts until the next; the last as long as the gap before it.
    @Test func theLastFrameLastsAsLongAsTheGapBeforeIt() async throws {
        let probe = try await write(frames: 2, timescale: 4, attributes: PixelBufferAttributes(width: 64, height: 48),
                                    settings: VideoSettings(width: 64, height: 48))
        #expect(probe.stream("video")?.frameCount == 2)
        #expect(abs(probe.duration - 0.5) < 0.002, "duration \(probe.duration)")
    }

    @Test func sevenFramesASecond() async throws {
        let probe = try await write(frames: 14, timescale: 7, attributes: PixelBufferAttributes(width: 64, height: 48),
                                    settings: VideoSettings(width: 64, height: 48))
        #expect(probe.stream("video")?.frameCount == 14)
        #expect(abs((probe.stream("video")?.frameRate ?? 0) - 7) < 0.01)
        #expect(abs(probe.duration - 2) < 0.01)
    }

    @Test func framesOfAnotherSizeAreScaledToTheSettings() async throws {
        let probe = try await write(frames: 10, timescale: 10, attributes: PixelBufferAttributes(pixelFormat: .i420, width: 320, height: 240),
                                    settings: VideoSettings(width: 160, height: 90))
        #expect(probe.stream("video")?.width == 160 && probe.stream("video")?.height == 90)
        #expect(probe.stream("video")?.frameCount == 10)
    }
}

/// Appending all of one track, then the other, from one loop: the muxer interleaves by time,
/// so the first track's append waits for the other, which this loop appends only later. The
/// writer says so (after 10 s, ``StallWatch``) instead of waiting for ever; two producers of
/// their own never trip it, however slow one of them is. On virtual time (``VirtualClock``): the
/// graph, its backpressure and the waits are real; the seconds pass when the test says, and
/// only once the writer has set an alarm. None of these tests sleeps.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterStallTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func avWriter(_ name: String, clock: VirtualClock) throws -> (AssetWriter, AssetWriterInput, AssetWriterInputPixelBufferAdaptor, AssetWriterInput, String) {
        let out = folder.appendingPathComponent(name).path
        let (writer, video, adaptor, audio) = try writingAV(to: out, clock: clock)
        return (writer, video, adaptor, audio, out)
    }

    @Test func allTheVideoThenTheAudioFailsInsteadOfHanging() async throws {
        let clock = VirtualClock()
        let (writer, _, adaptor, audio, out) = try avWriter("sequential.mp4", clock: clock)
        let pool = try #require(adaptor.pixelBufferPool)
        let appended = Atomic<Int>(0)
        let producer = Task { () -> (any Error)? in
            defer { clock.stop() }
            do {
                for n in 0..<(30 * 30) {
                    try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                    appended.add(1, ordering: .relaxed)
                }
                return nil
            } catch {
                return error
            }
        }
        // Time passes only while the writer has an alarm set: while a video append waits, 5 s or
        // more ahead of the audio, which has nothing. Each alarm rings on advance(to:), and then
        // the writer has acted on it.
        while writer.status == .writing, let due = await clock.nextAlarm() { clock.advance(to: due) }
        guard let failure = await producer.value else {
            Issue.record("30 s of video went in with no audio; the muxer should have held it at about 10 s")
            return
        }
        let error = try #require(failure as? GraphError, "\(failure)")
        // The partial file went with the run before the append threw: a program that stops on
        // the error leaves nothing (it left a .partial file, the run still ending).
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(left.isEmpty, "\(left)")
        // The rule holds the video to be 5 s or more ahead of the audio (at 0) when it fails.
        #expect(appended.load(ordering: .relaxed) >= 5 * 30, "failed after \(appended.load(ordering: .relaxed)) frames: \(error)")
        #expect(clock.alarms.rung >= 1)
        #expect(error.code == .usage)
        for fragment in ["video input", "waited 10 s", "audio input has no samples", "Interleave the appends",
                         "requestMediaDataWhenReady", "markAsFinished() on the audio input"] {
            #expect(error.description.contains(fragment), "\(error)")
        }
        #expect(writer.status == .failed)
        #expect(writer.error?.message == error.message)
        await #expect(throws: GraphError.self) { try await audio.append(TestMedia.sine(sampleRate: 8_000, seconds: 0.1)[0]) }
        await #expect(throws: GraphError.self) { try await writer.finishWriting() }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// Video from one task runs 10 s ahead and waits; audio from this one comes slowly (0.1 s
    /// of it every 2 s, for 14 s), then catches up. The video waits through all of that (the
    /// writer's alarm rings while it does), but never for an input that gets nothing: the file
    /// is written.
    @Test func aSlowProducerOnItsOwnTaskIsNotAStall() async throws {
        let clock = VirtualClock()
        let (writer, video, adaptor, audio, out) = try avWriter("slow.mp4", clock: clock)
        let pool = try #require(adaptor.pixelBufferPool)
        let seconds = 16
        let videoTask = Task {
            for n in 0..<(seconds * 30) {
                try await adaptor.append(try pool.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
            }
            video.markAsFinished()
        }
        // The video is 5 s or more ahead of the audio, and an append of it waits: the writer
        // has set an alarm, 10 s from now.
        let due = try #require(await clock.nextAlarm())
        #expect(due == clock.now + .seconds(10))
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: Double(seconds), framesPerBuffer: 800)
        for (k, buffer) in tone.enumerated() {
            if k < 7 { clock.advance(by: .seconds(2)) }  // 14 s of a slow producer
            try await audio.append(buffer)
        }
        audio.markAsFinished()
        try await videoTask.value
        #expect(clock.alarms.rung >= 1, "the writer looked for a stall while the audio trickled in")
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.frameCount == seconds * 30)
        #expect(abs((probe.stream("audio")?.duration ?? 0) - Double(seconds)) < 0.1)
    }
}

/// A writer of 64×48 video (through an adaptor) and 8 kHz mono sound to `out`, writing, its
/// session started at 0; its rules on `clock` when one is given (else the machine's).
func writingAV(to out: String, clock: VirtualClock? = nil) throws -> (AssetWriter, AssetWriterInput, AssetWriterInputPixelBufferAdaptor, AssetWriterInput) {
    let writer = try clock.map { try AssetWriter(outputPath: out, fileType: .mp4, clock: $0) } ?? AssetWriter(outputPath: out, fileType: .mp4)
    let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 64, height: 48))
    let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
    let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
    try writer.add(video)
    try writer.add(audio)
    try writer.startWriting()
    writer.startSession(atSourceTime: .zero)
    return (writer, video, adaptor, audio)
}
