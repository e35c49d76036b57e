@testable import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// A camera that cannot be opened: the session says so with `.AVCaptureSessionRuntimeError`
/// (the error under `AVCaptureSessionErrorKey`) and does not run; nothing hangs.
@Suite(.media, .timeLimit(.minutes(1))) struct CaptureRuntimeErrorTests {
    @Test func aCameraThatIsNotThereIsARuntimeError() throws {
        let missing = AVCaptureDevice(uniqueID: "/dev/video-graphkit-missing", name: "Missing", kind: .video,
                                      engineDevice: "/dev/video-graphkit-missing", deviceType: .builtInWideAngleCamera)
        let session = AVCaptureSession()
        session.addInput(try AVCaptureDeviceInput(device: missing))
        let output = AVCaptureVideoDataOutput()
        let collector = FrameCollector()
        output.setSampleBufferDelegate(collector, queue: collector.queue)
        session.addOutput(output)
        let errors = PostedErrors()
        let observer = NotificationCenter.default.addObserver(forName: .AVCaptureSessionRuntimeError, object: session, queue: nil) { note in
            if let e = note.userInfo?[AVCaptureSessionErrorKey] as? NSError { errors.add(e) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let started = ContinuousClock.now
        session.startRunning()
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!session.isRunning)
        let posted = errors.all
        #expect(posted.count == 1 && posted.first?.domain == AVFoundationErrorDomain)
        #expect(posted.first?.localizedDescription.contains("video-graphkit-missing") == true, "\(posted)")
        session.stopRunning()
        #expect(collector.snapshot.frames.isEmpty)
    }
}

final class PostedErrors: @unchecked Sendable {
    // Unchecked: `list` is reached only under `lock`.
    private let lock = NSLock()
    private var list: [NSError] = []
    func add(_ e: NSError) { lock.lock(); list.append(e); lock.unlock() }
    var all: [NSError] { lock.lock(); defer { lock.unlock() }; return list }
}
