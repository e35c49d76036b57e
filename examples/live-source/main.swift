// A camera-like live source written with requestMediaDataWhenReady: frames arrive on a timer at
// 30 fps, as a capture callback delivers them, and are appended while the input is ready
// (RosyWriter's shape). A frame that arrives while the encoder is behind is dropped and counted,
// as AVCaptureVideoDataOutput's alwaysDiscardsLateVideoFrames does; a frame the input accepted
// is always written. The block is called when the input can take more; when it returns with
// no frame to append, it is called again after a short pause (half the time since its last
// frame, at most 50 ms), so waiting for the camera costs next to no CPU.
//
//   swift run example-live-source out/live.mov [seconds]
import Assets
import Dispatch
import Glibc
import GraphKit
import Synchronization

let arguments = CommandLine.arguments
let path = arguments.count > 1 ? arguments[1] : "out/live.mov"
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2
let total = Int(seconds * 30)

func record() async throws {
    let writer = try AssetWriter(outputPath: path, fileType: .mov)
    let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 320, height: 240))
    input.expectsMediaDataInRealTime = true
    let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: input)
    try writer.add(input)
    try writer.startWriting()
    writer.startSession(atSourceTime: .zero)

    // The "camera": a frame every 1/30 s, put where the writer's block takes it.
    let latest = Mutex<(frame: PixelBuffer, time: MediaTime)?>(nil)
    let counts = Mutex((captured: 0, written: 0, dropped: 0))
    let done = DispatchSemaphore(value: 0)
    let camera = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "camera"))
    camera.schedule(deadline: .now(), repeating: .nanoseconds(1_000_000_000 / 30))
    camera.setEventHandler {
        let n = counts.withLock { c -> Int in
            c.captured += 1
            return c.captured - 1
        }
        guard n < total, var frame = try? adaptor.pixelBufferPool?.makePixelBuffer() else {
            camera.cancel()
            input.markAsFinished()
            done.signal()
            return
        }
        _ = frame.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: UInt8(n * 4 & 0xFF)) }
        let replaced = latest.withLock { slot -> Bool in
            defer { slot = (frame, MediaTime(value: Int64(n), timescale: 30)) }
            return slot != nil
        }
        if replaced { counts.withLock { $0.dropped += 1 } }  // the writer had not taken the last one
    }
    // The writer's side: whenever the input is ready, take the latest frame.
    input.requestMediaDataWhenReady(on: DispatchQueue(label: "writer")) {
        while input.isReadyForMoreMediaData, let (frame, time) = latest.withLock({ slot in defer { slot = nil }; return slot }) {
            do {
                try adaptor.append(frame, withPresentationTime: time)
                counts.withLock { $0.written += 1 }
            } catch {
                print("error: \(error)")
                return
            }
        }
    }
    camera.resume()
    await withCheckedContinuation { c in DispatchQueue.global().async { done.wait(); c.resume() } }
    // The last frame may still be waiting in the slot: finishing writes what was appended.
    try await writer.finishWriting()
    let c = counts.withLock { $0 }
    print("captured \(min(c.captured, total)) frames, wrote \(c.written), dropped \(c.dropped + (latest.withLock { $0 } == nil ? 0 : 1)) to \(path)")
}

do {
    try await record()
} catch {
    print("error: \(error)")
    exit((error as? GraphError)?.code.exitStatus ?? 70)
}
