// RosyWriter's recorder, in Swift: video and audio sample buffers arrive from capture callbacks
// in real time; the recorder starts its session at the first buffer's time and appends each
// buffer on its writing queue when the input is ready, dropping (and counting) what arrives
// while it is not, as RosyWriter's MovieRecorder does. The recorder is AVFoundation code compiled
// unchanged on Linux. Two sources:
//
//   swift run example-avfoundation-rosywriter out/rosy.mov [seconds]
//       a simulated camera and microphone (frames from a pixel-buffer pool at 30 fps, 1024-frame
//       PCM buffers at 44.1 kHz, on a real-time clock);
//   swift run example-avfoundation-rosywriter out/rosy.mov seconds capture [vga|720p] [camera uniqueID]
//       RosyWriter itself: AVCaptureSession with the default camera and microphone (the test
//       devices where there is no hardware), each frame through its CoreImage renderer (a colour
//       matrix without green), late frames dropped by capture and counted by the delegate.
import AVFoundation
import CoreImage

final class MovieRecorder {
    private let writer: AVAssetWriter
    private let videoInput: AVAssetWriterInput
    private let audioInput: AVAssetWriterInput
    private let writingQueue = DispatchQueue(label: "movierecorder.writing")
    private var haveStartedSession = false
    private var sessionStart = CMTime.zero
    /// Video frames appended with a time before the session's start: as on Apple's platforms,
    /// the movie shows only the last of them (from the start), so the others are not in it.
    private(set) var appendedBeforeStart = 0
    private(set) var appended: [AVMediaType: Int] = [.video: 0, .audio: 0]
    private(set) var dropped: [AVMediaType: Int] = [.video: 0, .audio: 0]
    private(set) var failure: Error?

    init(url: URL, width: Int, height: Int, audioFormat: CMAudioFormatDescription) throws {
        writer = try AVAssetWriter(outputURL: url, fileType: .mov)
        let bitsPerPixel: Float = width * height < 640 * 480 ? 4.05 : 10.1
        let videoSettings: [String: Any] = [
            AVVideoCodecKey: AVVideoCodecType.h264,
            AVVideoWidthKey: width,
            AVVideoHeightKey: height,
            AVVideoCompressionPropertiesKey: [
                AVVideoAverageBitRateKey: Int(Float(width * height) * bitsPerPixel),
                AVVideoExpectedSourceFrameRateKey: 30,
                AVVideoMaxKeyFrameIntervalKey: 30,
            ],
        ]
        videoInput = AVAssetWriterInput(mediaType: .video, outputSettings: videoSettings)
        videoInput.expectsMediaDataInRealTime = true
        let asbd = CMAudioFormatDescriptionGetStreamBasicDescription(audioFormat)!.pointee
        let audioSettings: [String: Any] = [
            AVFormatIDKey: kAudioFormatMPEG4AAC,
            AVSampleRateKey: asbd.mSampleRate,
            AVNumberOfChannelsKey: asbd.mChannelsPerFrame,
            AVEncoderBitRatePerChannelKey: 64_000,
        ]
        audioInput = AVAssetWriterInput(mediaType: .audio, outputSettings: audioSettings, sourceFormatHint: audioFormat)
        audioInput.expectsMediaDataInRealTime = true
        guard writer.canAdd(videoInput), writer.canAdd(audioInput) else {
            throw NSError(domain: "MovieRecorder", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot add the inputs"])
        }
        writer.add(videoInput)
        writer.add(audioInput)
        guard writer.startWriting() else {
            throw writer.error ?? NSError(domain: "MovieRecorder", code: 2, userInfo: nil)
        }
    }

    func appendVideoSampleBuffer(_ sampleBuffer: CMSampleBuffer) { append(sampleBuffer, ofMediaType: .video) }
    func appendAudioSampleBuffer(_ sampleBuffer: CMSampleBuffer) { append(sampleBuffer, ofMediaType: .audio) }

    private func append(_ sampleBuffer: CMSampleBuffer, ofMediaType mediaType: AVMediaType) {
        writingQueue.async {
            guard self.failure == nil else { return }
            if !self.haveStartedSession {
                self.sessionStart = CMSampleBufferGetPresentationTimeStamp(sampleBuffer)
                self.writer.startSession(atSourceTime: self.sessionStart)
                self.haveStartedSession = true
            }
            let input = mediaType == .video ? self.videoInput : self.audioInput
            if input.isReadyForMoreMediaData {
                if input.append(sampleBuffer) {
                    self.appended[mediaType, default: 0] += 1
                    if mediaType == .video, CMSampleBufferGetPresentationTimeStamp(sampleBuffer) < self.sessionStart { self.appendedBeforeStart += 1 }
                } else {
                    self.failure = self.writer.error
                }
            } else {
                self.dropped[mediaType, default: 0] += 1
            }
        }
    }

    func finishRecording(completion: @escaping (Error?) -> Void) {
        writingQueue.async {
            self.videoInput.markAsFinished()
            self.audioInput.markAsFinished()
            self.writer.finishWriting {
                completion(self.writer.status == .completed ? nil : (self.writer.error ?? self.failure))
            }
        }
    }
}

// MARK: RosyWriter's capture pipeline and CoreImage renderer

/// RosyWriterCIFilterRenderer: each camera frame through a colour matrix that drops green,
/// rendered into a buffer of its own pool.
final class RosyWriterCIFilterRenderer {
    private let ciContext = CIContext()
    private let rosyFilter = CIFilter.colorMatrix()
    private var bufferPool: CVPixelBufferPool?
    private var poolSize = (width: 0, height: 0)

    init() {
        rosyFilter.gVector = CIVector(x: 0, y: 0, z: 0, w: 0)
    }

    func copyRenderedPixelBuffer(_ pixelBuffer: CVPixelBuffer) -> CVPixelBuffer? {
        let width = CVPixelBufferGetWidth(pixelBuffer), height = CVPixelBufferGetHeight(pixelBuffer)
        if bufferPool == nil || poolSize != (width, height) {
            var pool: CVPixelBufferPool?
            CVPixelBufferPoolCreate(kCFAllocatorDefault, nil, [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
                                                               kCVPixelBufferWidthKey as String: width,
                                                               kCVPixelBufferHeightKey as String: height] as CFDictionary, &pool)
            bufferPool = pool
            poolSize = (width, height)
        }
        rosyFilter.inputImage = CIImage(cvPixelBuffer: pixelBuffer)
        var rendered: CVPixelBuffer?
        guard let bufferPool, let outputImage = rosyFilter.outputImage,
              CVPixelBufferPoolCreatePixelBuffer(kCFAllocatorDefault, bufferPool, &rendered) == kCVReturnSuccess, let rendered else { return nil }
        ciContext.render(outputImage, to: rendered)
        return rendered
    }
}

/// RosyWriterCapturePipeline: the session, its two data outputs and their queues; each video
/// frame rendered, then handed to the recorder with its timing, each audio buffer as it comes.
/// The recorder is made once both formats are known (the first audio buffer's, the first
/// frame's size).
final class RosyWriterCapturePipeline: NSObject, AVCaptureVideoDataOutputSampleBufferDelegate, AVCaptureAudioDataOutputSampleBufferDelegate {
    private let session = AVCaptureSession()
    private let videoOutput = AVCaptureVideoDataOutput()
    private let audioOutput = AVCaptureAudioDataOutput()
    private let videoDataOutputQueue = DispatchQueue(label: "com.apple.sample.capturepipeline.video")
    private let audioDataOutputQueue = DispatchQueue(label: "com.apple.sample.capturepipeline.audio")
    private let renderer = RosyWriterCIFilterRenderer()
    private let stateQueue = DispatchQueue(label: "com.apple.sample.capturepipeline.state")
    private let url: URL
    private let recorderQueue = DispatchQueue(label: "com.apple.sample.capturepipeline.recorder")
    private var recorder: MovieRecorder?
    private var preparingRecorder = false
    private var audioFormat: CMAudioFormatDescription?
    private(set) var framesCaptured = 0
    private(set) var framesLate = 0
    private var observers: [any NSObjectProtocol] = []

    init(url: URL, preset: AVCaptureSession.Preset, cameraID: String? = nil) throws {
        self.url = url
        super.init()
        guard let camera = cameraID.map({ AVCaptureDevice(uniqueID: $0) }) ?? AVCaptureDevice.default(for: .video),
              let microphone = AVCaptureDevice.default(for: .audio) else {
            throw NSError(domain: "RosyWriter", code: 1, userInfo: [NSLocalizedDescriptionKey: "no camera or microphone"])
        }
        session.beginConfiguration()
        session.sessionPreset = preset
        let videoIn = try AVCaptureDeviceInput(device: camera), audioIn = try AVCaptureDeviceInput(device: microphone)
        guard session.canAddInput(videoIn), session.canAddInput(audioIn) else {
            throw NSError(domain: "RosyWriter", code: 2, userInfo: [NSLocalizedDescriptionKey: "cannot add the inputs"])
        }
        session.addInput(videoIn)
        session.addInput(audioIn)
        videoOutput.videoSettings = [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA]
        videoOutput.alwaysDiscardsLateVideoFrames = true
        videoOutput.setSampleBufferDelegate(self, queue: videoDataOutputQueue)
        audioOutput.setSampleBufferDelegate(self, queue: audioDataOutputQueue)
        guard session.canAddOutput(videoOutput), session.canAddOutput(audioOutput) else {
            throw NSError(domain: "RosyWriter", code: 3, userInfo: [NSLocalizedDescriptionKey: "cannot add the outputs"])
        }
        session.addOutput(videoOutput)
        session.addOutput(audioOutput)
        session.commitConfiguration()
        // As RosyWriter's pipeline: told when the camera is taken and given back, and of errors.
        let center = NotificationCenter.default
        observers.append(center.addObserver(forName: AVCaptureSession.wasInterruptedNotification, object: session, queue: nil) { note in
            let reason = (note.userInfo?[AVCaptureSessionInterruptionReasonKey] as? Int).flatMap(AVCaptureSession.InterruptionReason.init(rawValue:))
            print("session was interrupted: \(reason.map { "\($0)" } ?? "no reason")")
        })
        observers.append(center.addObserver(forName: AVCaptureSession.interruptionEndedNotification, object: session, queue: nil) { _ in
            print("session interruption ended")
        })
        observers.append(center.addObserver(forName: AVCaptureSession.runtimeErrorNotification, object: session, queue: nil) { note in
            print("session runtime error: \((note.userInfo?[AVCaptureSessionErrorKey] as? NSError)?.localizedDescription ?? "?")")
        })
    }

    func startRunning() { session.startRunning() }

    func stopRunning(completion: @escaping (MovieRecorder?, Error?) -> Void) {
        session.stopRunning()
        recorderQueue.sync {}  // a recorder being made is made
        stateQueue.async {
            guard let recorder = self.recorder else { return completion(nil, nil) }
            recorder.finishRecording { error in completion(recorder, error) }
        }
    }

    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {
        if output == videoOutput {
            renderVideoSampleBuffer(sampleBuffer)
        } else if let format = CMSampleBufferGetFormatDescription(sampleBuffer) {
            stateQueue.sync {
                if audioFormat == nil { audioFormat = format }
                recorder?.appendAudioSampleBuffer(sampleBuffer)
            }
        }
    }

    func captureOutput(_ output: AVCaptureOutput, didDrop sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {
        stateQueue.sync { framesLate += 1 }
    }

    private func renderVideoSampleBuffer(_ sampleBuffer: CMSampleBuffer) {
        guard let sourcePixelBuffer = CMSampleBufferGetImageBuffer(sampleBuffer),
              let renderedPixelBuffer = renderer.copyRenderedPixelBuffer(sourcePixelBuffer) else { return }
        var timing = CMSampleTimingInfo(duration: CMSampleBufferGetDuration(sampleBuffer),
                                        presentationTimeStamp: CMSampleBufferGetPresentationTimeStamp(sampleBuffer),
                                        decodeTimeStamp: .invalid)
        var description: CMVideoFormatDescription?
        CMVideoFormatDescriptionCreateForImageBuffer(allocator: kCFAllocatorDefault, imageBuffer: renderedPixelBuffer, formatDescriptionOut: &description)
        var rendered: CMSampleBuffer?
        guard let description,
              CMSampleBufferCreateReadyWithImageBuffer(allocator: kCFAllocatorDefault, imageBuffer: renderedPixelBuffer, formatDescription: description,
                                                       sampleTiming: &timing, sampleBufferOut: &rendered) == noErr, let rendered else { return }
        stateQueue.sync {
            framesCaptured += 1
            if recorder == nil, !preparingRecorder, let audioFormat {
                // Made on a queue of its own, as RosyWriter's prepareToRecord: the capture
                // queues never wait for the writer to start (frames until then are not recorded).
                preparingRecorder = true
                let width = CVPixelBufferGetWidth(renderedPixelBuffer), height = CVPixelBufferGetHeight(renderedPixelBuffer)
                recorderQueue.async {
                    try? FileManager.default.removeItem(at: self.url)
                    let made = try? MovieRecorder(url: self.url, width: width, height: height, audioFormat: audioFormat)
                    self.stateQueue.async { self.recorder = made }
                }
            }
            recorder?.appendVideoSampleBuffer(rendered)
        }
    }
}

let arguments = CommandLine.arguments
let outputURL = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "out/rosy.mov")
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2

if arguments.count > 3, arguments[3] == "capture" {
    let preset: AVCaptureSession.Preset = arguments.count > 4 && arguments[4] == "720p" ? .hd1280x720 : .vga640x480
    let pipeline: RosyWriterCapturePipeline
    do {
        pipeline = try RosyWriterCapturePipeline(url: outputURL, preset: preset, cameraID: arguments.count > 5 ? arguments[5] : nil)
    } catch {
        print("cannot capture: \(error.localizedDescription)")
        exit(1)
    }
    pipeline.startRunning()
    usleep(useconds_t(seconds * 1e6))
    let stopped = DispatchSemaphore(value: 0)
    var result: (MovieRecorder?, Error?) = (nil, nil)
    pipeline.stopRunning { recorder, error in
        result = (recorder, error)
        stopped.signal()
    }
    stopped.wait()
    guard let recorder = result.0, result.1 == nil else {
        print("recording failed: \(result.1?.localizedDescription ?? "nothing was recorded")")
        exit(1)
    }
    print("video: \(recorder.appended[.video]!) appended, \(recorder.dropped[.video]!) dropped of \(pipeline.framesCaptured) captured, \(pipeline.framesLate) late, \(recorder.appendedBeforeStart) before the session's start")
    print("audio: \(recorder.appended[.audio]!) appended, \(recorder.dropped[.audio]!) dropped")
    exit(0)
}

// MARK: The simulated camera and microphone
let width = 480, height = 360, sampleRate = 44_100.0, framesPerAudioBuffer = 1024

var asbd = AudioStreamBasicDescription(mSampleRate: sampleRate, mFormatID: kAudioFormatLinearPCM,
                                       mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                       mBytesPerPacket: 2, mFramesPerPacket: 1, mBytesPerFrame: 2, mChannelsPerFrame: 1,
                                       mBitsPerChannel: 16, mReserved: 0)
var audioFormat: CMAudioFormatDescription?
CMAudioFormatDescriptionCreate(allocator: nil, asbd: &asbd, layoutSize: 0, layout: nil, magicCookieSize: 0, magicCookie: nil,
                               extensions: nil, formatDescriptionOut: &audioFormat)
var cameraPool: CVPixelBufferPool?
CVPixelBufferPoolCreate(nil, nil, [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
                                   kCVPixelBufferWidthKey as String: width, kCVPixelBufferHeightKey as String: height] as CFDictionary,
                        &cameraPool)

try? FileManager.default.removeItem(at: outputURL)
let recorder: MovieRecorder
do {
    recorder = try MovieRecorder(url: outputURL, width: width, height: height, audioFormat: audioFormat!)
} catch {
    print("cannot record: \(error.localizedDescription)")
    exit(1)
}

func cameraFrame(_ n: Int) -> CMSampleBuffer? {
    var pixelBuffer: CVPixelBuffer?
    guard CVPixelBufferPoolCreatePixelBuffer(nil, cameraPool!, &pixelBuffer) == kCVReturnSuccess, let pixelBuffer else { return nil }
    CVPixelBufferLockBaseAddress(pixelBuffer, [])
    let base = CVPixelBufferGetBaseAddress(pixelBuffer)!
    let bytesPerRow = CVPixelBufferGetBytesPerRow(pixelBuffer)
    for y in 0..<height {
        let row = (base + y * bytesPerRow).assumingMemoryBound(to: UInt32.self)
        for x in 0..<width { row[x] = 0xFF00_0000 | UInt32((x + n * 4) & 0xFF) << 16 | UInt32(y & 0xFF) << 8 }
    }
    CVPixelBufferUnlockBaseAddress(pixelBuffer, [])
    var description: CMVideoFormatDescription?
    CMVideoFormatDescriptionCreateForImageBuffer(allocator: nil, imageBuffer: pixelBuffer, formatDescriptionOut: &description)
    var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 30), presentationTimeStamp: CMTime(value: Int64(n), timescale: 30),
                                    decodeTimeStamp: .invalid)
    var sampleBuffer: CMSampleBuffer?
    CMSampleBufferCreateReadyWithImageBuffer(allocator: nil, imageBuffer: pixelBuffer, formatDescription: description!, sampleTiming: &timing,
                                             sampleBufferOut: &sampleBuffer)
    return sampleBuffer
}

func microphoneBuffer(_ n: Int) -> CMSampleBuffer? {
    var samples = [Int16](repeating: 0, count: framesPerAudioBuffer)
    for i in samples.indices { samples[i] = Int16(6000 * sin(2 * Double.pi * 440 * Double(n * framesPerAudioBuffer + i) / sampleRate)) }
    let length = samples.count * 2
    var block: CMBlockBuffer?
    CMBlockBufferCreateWithMemoryBlock(allocator: nil, memoryBlock: nil, blockLength: length, blockAllocator: nil, customBlockSource: nil,
                                       offsetToData: 0, dataLength: length, flags: 0, blockBufferOut: &block)
    samples.withUnsafeBytes { _ = CMBlockBufferReplaceDataBytes(with: $0.baseAddress!, blockBuffer: block!, offsetIntoDestination: 0, dataLength: length) }
    var sampleBuffer: CMSampleBuffer?
    CMAudioSampleBufferCreateReadyWithPacketDescriptions(allocator: nil, dataBuffer: block!, formatDescription: audioFormat!,
                                                         sampleCount: framesPerAudioBuffer,
                                                         presentationTimeStamp: CMTime(value: Int64(n * framesPerAudioBuffer), timescale: Int32(sampleRate)),
                                                         packetDescriptions: nil, sampleBufferOut: &sampleBuffer)
    return sampleBuffer
}

// Deliver each buffer when its time comes, as capture does.
let videoFrames = Int(seconds * 30)
let audioBuffers = Int(seconds * sampleRate) / framesPerAudioBuffer
let start = DispatchTime.now().uptimeNanoseconds
var nextVideo = 0, nextAudio = 0
while nextVideo < videoFrames || nextAudio < audioBuffers {
    let videoDue = nextVideo < videoFrames ? Double(nextVideo) / 30 : .infinity
    let audioDue = nextAudio < audioBuffers ? Double(nextAudio * framesPerAudioBuffer) / sampleRate : .infinity
    let due = min(videoDue, audioDue)
    let now = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    if due > now { usleep(useconds_t((due - now) * 1e6)) }
    if videoDue <= audioDue {
        if let frame = cameraFrame(nextVideo) { recorder.appendVideoSampleBuffer(frame) }
        nextVideo += 1
    } else {
        if let buffer = microphoneBuffer(nextAudio) { recorder.appendAudioSampleBuffer(buffer) }
        nextAudio += 1
    }
}

let finished = DispatchSemaphore(value: 0)
var recordingError: Error?
recorder.finishRecording { error in
    recordingError = error
    finished.signal()
}
finished.wait()
if let recordingError {
    print("recording failed: \(recordingError.localizedDescription)")
    exit(1)
}
print("video: \(recorder.appended[.video]!) appended, \(recorder.dropped[.video]!) dropped of \(videoFrames)")
print("audio: \(recorder.appended[.audio]!) appended, \(recorder.dropped[.audio]!) dropped of \(audioBuffers)")
