import Assets
import Dispatch
import Foundation
import GraphKit
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// However writing ends (cancelled, let go, refused, finished early, blocked or suspended when
/// cancelled), no half-written file, and no call left waiting.
extension AssetWriterTests {
    @Test func cancelWritingLeavesNoFile() async throws {
        let out = path("cancelled.mp4")
        let (writer, _, adaptor) = try videoWriter(out, width: 64, height: 48)
        for n in 0..<10 {
            try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 10))
        }
        writer.cancelWriting()
        #expect(writer.status == .cancelled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        await #expect(throws: GraphError.self) {
            try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: 11, timescale: 10))
        }
        await expectUsage("writing was cancelled") { try await writer.finishWriting() }
    }

    @Test func aWriterLetGoWhileWritingLeavesNoFile() async throws {
        let out = path("dropped.m4a")
        do {
            let writer = try AssetWriter(outputPath: out, fileType: .m4a)
            let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
            try writer.add(audio)
            try writer.startWriting()
            writer.startSession(atSourceTime: .zero)
            for b in TestMedia.sine(sampleRate: 8_000, seconds: 0.5) { try await audio.append(b) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func anOutputThatCannotBeWrittenFailsStartWriting() throws {
        let blocker = path("file")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data([1])))
        let writer = try AssetWriter(outputPath: blocker + "/movie.mp4", fileType: .mp4)  // a folder that is a file
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        #expect {
            try writer.startWriting()
        } throws: { error in
            (error as? GraphError)?.code == .outputUnwritable
        }
        #expect(writer.status == .failed)
        #expect(writer.error?.code == .outputUnwritable)
    }

    /// Nothing appended: the run fails at the sink ("nothing to write"), and nothing is left.
    @Test func finishingWithNoSampleFailsAndLeavesNoFile() async throws {
        let out = path("empty.m4a")
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        await #expect(throws: GraphError.self) { try await writer.finishWriting() }
        #expect(writer.status == .failed)
        #expect(writer.error?.message.contains("nothing to write") == true)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    // MARK: No call can hang

    /// A producer blocked in append (the encoder is held back: the writer is busy on a huge
    /// frame backlog) wakes and throws when writing is cancelled from elsewhere.
    @Test func aBlockedAppendWakesWhenWritingIsCancelled() async throws {
        let (writer, video, adaptor) = try videoWriter(path("blocked.mp4"), width: 1920, height: 1080)
        let waited = Atomic<Bool>(false)
        let producer = TestThread("producer") { () -> GraphError? in
            do {
                for n in 0..<100_000 {
                    if !video.isReadyForMoreMediaData { waited.store(true, ordering: .relaxed) }
                    try adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        while !waited.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        let error = await producer.join()
        #expect(error?.code == .cancelled, "\(String(describing: error))")
    }

    /// The same with the async append, suspended.
    @Test func aSuspendedAppendWakesWhenWritingIsCancelled() async throws {
        let (writer, video, adaptor) = try videoWriter(path("suspended.mp4"), width: 1920, height: 1080)
        let waited = Atomic<Bool>(false)
        let producer = Task { () -> GraphError? in
            do {
                for n in 0..<100_000 {
                    if !video.isReadyForMoreMediaData { waited.store(true, ordering: .relaxed) }
                    try await adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        while !waited.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        let error = await producer.value
        #expect(error?.code == .cancelled, "\(String(describing: error))")
    }

    /// finishWriting() finishes the inputs nobody finished: it returns, with a complete file.
    @Test func finishWritingFinishesUnfinishedInputs() async throws {
        let out = path("unfinished.m4a")
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for b in TestMedia.sine(sampleRate: 8_000, seconds: 1) { try await audio.append(b) }
        try await writer.finishWriting()
        #expect(abs(try MediaProbe(out).duration - 1) < 0.0002)
    }

    /// A requestMediaDataWhenReady loop stops being called when writing is cancelled, and the
    /// append inside it throws.
    @Test func aRequestLoopEndsWhenWritingIsCancelled() async throws {
        let writer = try AssetWriter(outputPath: path("loop.mp4"), fileType: .mp4)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 1280, height: 720))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
        try writer.add(video)
        let next = Atomic<Int>(0)
        let outcome = Guarded<String?>(nil)
        let ended = TestEvent()
        let queue = DispatchQueue(label: "loop")
        video.requestMediaDataWhenReady(on: queue) {  // before writing starts: begins when it does
            while video.isReadyForMoreMediaData {
                let n = next.add(1, ordering: .relaxed).oldValue
                do {
                    try adaptor.append(try adaptor.pixelBufferPool!.makePixelBuffer(), withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
                } catch {
                    outcome.withLock { $0 = "\(error)" }
                    ended.signal()
                    return
                }
            }
        }
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        while next.load(ordering: .relaxed) < 20 { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        let calls = next.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(300))
        queue.sync {}
        #expect(!video.isReadyForMoreMediaData)
        // Either the block was inside an append (which threw), or it had returned and is not called again.
        #expect(ended.wait(guardSeconds: 1) || next.load(ordering: .relaxed) <= calls + 1)
    }

    /// Once cancelWriting() is called, the input is ready no more and its request block is
    /// not called again (it was called over and over, each append failing, while the run ended).
    @Test func cancelWritingStopsTheRequestBlockAtOnce() async throws {
        let writer = try AssetWriter(outputPath: path("feed.m4a"), fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: 60, framesPerBuffer: 80)
        let cancelling = Atomic<Bool>(false)
        let next = Atomic<Int>(0)
        let callsAfterCancel = Atomic<Int>(0)
        let failedAppends = Atomic<Int>(0)
        let queue = DispatchQueue(label: "feed")
        audio.requestMediaDataWhenReady(on: queue) {
            if cancelling.load(ordering: .relaxed) { callsAfterCancel.add(1, ordering: .relaxed) }
            while audio.isReadyForMoreMediaData {
                let n = next.add(1, ordering: .relaxed).oldValue
                guard n < tone.count else { return }
                do { try audio.append(tone[n]) } catch {
                    failedAppends.add(1, ordering: .relaxed)
                    return
                }
                usleep(2_000)
            }
        }
        try writer.startWriting()
        // The block is not called between these two (its appends would fail: on a loaded
        // machine it was, hundreds of times, before the session started).
        usleep(100_000)
        #expect(next.load(ordering: .relaxed) == 0)
        writer.startSession(atSourceTime: .zero)
        while next.load(ordering: .relaxed) < 50 { try await Task.sleep(for: .milliseconds(5)) }
        writer.cancelWriting()
        // Counted from when cancelWriting() has returned: a call queued as it began has run by
        // the time the queue is drained, and none may come after.
        queue.sync {}
        cancelling.store(true, ordering: .relaxed)
        #expect(!audio.isReadyForMoreMediaData)
        try await Task.sleep(for: .milliseconds(300))
        queue.sync {}
        #expect(callsAfterCancel.load(ordering: .relaxed) == 0)
        // The append under way as cancel began may fail; none other (it was 440 of them).
        #expect(failedAppends.load(ordering: .relaxed) <= 1)
        #expect(writer.status == .cancelled)
    }
}
