import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// The recording examples (AVFoundation code as written for Apple's platforms, compiled
/// unchanged), run here and judged by ffprobe and ffmpeg; and the CoreMedia functions capture
/// code makes sample buffers with.
@Suite(.media, .timeLimit(.minutes(10))) struct CaptureExamplesTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    @Test func audioToM4A() throws {
        let out = folder.appendingPathComponent("tone.m4a").path
        let printed = try TestMedia.runTool(try builtExample("example-avfoundation-audio-to-m4a"), [out, "2"])
        #expect(printed.contains("wrote 88200 frames (2.0 s) of AAC"), "\(printed)")
        let probe = try MediaProbe(out)
        let a = try #require(probe.stream("audio"))
        #expect(a.codecName == "aac" && a.sampleRate == 44100 && a.channels == 2 && probe.streams.count == 1)
        #expect(abs(probe.duration - 2.0) < 0.03, "\(probe.duration)")
        // The tone's peak, 8000 of 32767: -12.2 dBFS, through AAC (past the encoder's first
        // frames, where AAC overshoots).
        let detected = try TestMedia.runTool("sh", ["-c", "ffmpeg -v info -ss 0.1 -t 1.8 -i '\(out)' -af volumedetect -f null - 2>&1 | grep max_volume"])
        let db = Double(detected.split(separator: ":").last!.replacingOccurrences(of: "dB", with: "").trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(abs(db - -12.2) < 1.0, "\(detected)")
    }

    /// Real-time inputs: every buffer is appended or dropped by the recorder (never by the
    /// writer), and what was appended is in the file.
    @Test func rosyWriterRecorder() throws {
        let out = folder.appendingPathComponent("rosy.mov").path
        let printed = try TestMedia.runTool(try builtExample("example-avfoundation-rosywriter"), [out, "2"])
        func counts(_ kind: String) -> (appended: Int, dropped: Int)? {
            guard let line = printed.split(separator: "\n").first(where: { $0.hasPrefix(kind + ":") }) else { return nil }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            return numbers.count >= 3 ? (numbers[0], numbers[1]) : nil
        }
        let video = try #require(counts("video"), "\(printed)")
        let audio = try #require(counts("audio"), "\(printed)")
        #expect(video.appended + video.dropped == 60 && audio.appended + audio.dropped == 86, "\(printed)")
        let probe = try MediaProbe(out, countFrames: true)
        let v = try #require(probe.stream("video")), a = try #require(probe.stream("audio"))
        #expect(v.codecName == "h264" && v.width == 480 && v.height == 360 && v.frameCount == video.appended)
        #expect(a.codecName == "aac" && a.channels == 1 && a.sampleRate == 44100)
        // The audio's length (a dropped frame before the last would lengthen the video's last
        // frame, which is shown until the end).
        let audioSeconds = Double(audio.appended * 1024) / 44100
        #expect(abs((a.duration ?? 0) - audioSeconds) < 0.05, "\(String(describing: a.duration)) vs \(audioSeconds)")
    }

    /// RosyWriter itself (the example's capture mode): AVCaptureSession with the test camera
    /// and microphone, each frame through CoreImage's colour matrix without green, recorded by
    /// MovieRecorder. The movie holds every frame appended, without green, its sound as long as
    /// its pictures.
    @Test func rosyWriterCapturePipeline() throws {
        let out = folder.appendingPathComponent("rosy-capture.mov").path
        let printed = try TestMedia.runTool(try builtExample("example-avfoundation-rosywriter"), [out, "3", "capture", "vga"])
        let line = try #require(printed.split(separator: "\n").first { $0.hasPrefix("video:") }, "\(printed)")
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        let appended = numbers[0], captured = numbers[2], beforeStart = numbers[4]
        // About 90 frames in 3 s; a loaded machine makes some late (dropped by capture, counted).
        #expect(appended >= 30 && appended <= captured && captured <= 100, "\(printed)")
        let probe = try MediaProbe(out, countFrames: true)
        let v = try #require(probe.stream("video")), a = try #require(probe.stream("audio"))
        // Frames appended with times before the session's start (a loaded machine delivers the
        // camera's first frames after a sound that started the session): only the last is shown.
        let shown = appended - max(0, beforeStart - 1)
        #expect(v.codecName == "h264" && v.width == 640 && v.height == 480 && v.frameCount == shown, "\(String(describing: v.frameCount)) frames in the file; \(printed)")
        #expect(a.codecName == "aac")
        #expect(abs((a.duration ?? 0) - (v.duration ?? 0)) < 0.25, "audio \(String(describing: a.duration)) s, video \(String(describing: v.duration)) s")
        let rgb = folder.appendingPathComponent("frame.rgb").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-vf", "select=eq(n\\,\(appended / 2))", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", rgb])
        let pixels = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rgb)))
        let means = (0..<3).map { c in Double(stride(from: c, to: pixels.count, by: 3).reduce(0) { $0 + Int(pixels[$1]) }) / Double(pixels.count / 3) }
        #expect(pixels.count == 640 * 480 * 3 && means[1] < 3 && means[0] + means[2] > 100, "mean R, G, B: \(means)")
    }

    /// RosyWriter's capture from a V4L2 camera another program holds at the start
    /// (Tests/Fixtures/fake-v4l2, refusing its first two attempts): the session is interrupted
    /// (`videoDeviceInUseByAnotherClient`) and stops running, tries again each second by itself,
    /// and once the camera is let go the interruption ends, the session runs again, and the
    /// movie holds the camera's frames from then on.
    @Test func rosyWriterWaitsForABusyCamera() throws {
        let camera = try FakeV4L2Camera(in: folder)
        let out = folder.appendingPathComponent("rosy-busy.mov").path
        let printed = try TestMedia.runTool("env", camera.settings(busyAttempts: 2).map { "\($0.key)=\($0.value)" }
                                            + ["timeout", "60", try builtExample("example-avfoundation-rosywriter"), out, "6", "capture", "vga", camera.devicePath])
        let notices = printed.split(separator: "\n").map(String.init).filter { $0.hasPrefix("session ") }
        #expect(notices == ["session was interrupted: videoDeviceInUseByAnotherClient", "session interruption ended"], "\(printed)")
        let probe = try MediaProbe(out, countFrames: true)
        let v = try #require(probe.stream("video"))
        // Six seconds asked, about two of them interrupted (retried each second; later on a
        // loaded machine): at least half a second of frames, and no more than 4.5 s.
        #expect(v.width == 640 && v.height == 480 && (15...135).contains(v.frameCount ?? 0), "\(String(describing: v.frameCount)) frames; \(printed)")
    }

    /// RosyWriter's capture from a PipeWire camera and microphone (PipeWire's own test sources in
    /// a daemon of the test's, ``PipeWireTestDaemon``): the camera chosen by the `uniqueID`
    /// `graphctl devices` lists, the microphone as `AVCaptureDevice.default(for: .audio)`, the
    /// first one listed. The session runs with no interruption; the movie holds the camera's
    /// SMPTE bars at VGA through the colour effect (green removed: the first bar, light grey,
    /// becomes magenta) and the microphone's sound, as long as the pictures. (PipeWire's audio
    /// test source does not stamp its buffers: before capture.audio stamped and steadied them,
    /// every sample was refused for having no time, then for overlapping the one before.)
    @Test(.enabled(if: PipeWireTestDaemon.missing == nil, "\(PipeWireTestDaemon.missing ?? "")"))
    func rosyWriterRecordsAPipeWireCamera() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-rosy-cam")
        try daemon.provide(microphone: "gk-rosy-mic")
        let out = folder.appendingPathComponent("rosy-pipewire.mov").path
        let printed = try TestMedia.runTool("env", daemon.environment.map { "\($0.key)=\($0.value)" }
                                            + ["timeout", "60", try builtExample("example-avfoundation-rosywriter"), out, "3", "capture", "vga", "pipewire:gk-rosy-cam"])
        #expect(!printed.contains("session was interrupted"), "\(printed)")
        let probe = try MediaProbe(out, countFrames: true)
        let v = try #require(probe.stream("video")), a = try #require(probe.stream("audio"))
        #expect(v.width == 640 && v.height == 480 && (30...95).contains(v.frameCount ?? 0), "\(String(describing: v.frameCount)) frames; \(printed)")
        #expect(a.codecName == "aac" && abs((a.duration ?? 0) - (v.duration ?? 0)) < 0.25, "audio \(String(describing: a.duration)) s, video \(String(describing: v.duration)) s")
        let rgb = try TestMedia.runTool("sh", ["-c", "ffmpeg -v error -ss 1 -i '\(out)' -frames:v 1 -vf crop=8:8:30:100 -f rawvideo -pix_fmt rgb24 - | od -An -tu1 -w3 -v | head -1"])
        let pixel = rgb.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(pixel.count == 3 && pixel[0] > 150 && pixel[1] < 40 && pixel[2] > 150, "first bar \(pixel)")
    }

    @Test func sampleBufferCreation() throws {
        var asbd = AudioStreamBasicDescription(mSampleRate: 8000, mFormatID: kAudioFormatLinearPCM, mFormatFlags: kAudioFormatFlagsNativeFloatPacked,
                                               mBytesPerPacket: 4, mFramesPerPacket: 1, mBytesPerFrame: 4, mChannelsPerFrame: 1,
                                               mBitsPerChannel: 32, mReserved: 0)
        var format: CMAudioFormatDescription?
        #expect(CMAudioFormatDescriptionCreate(allocator: nil, asbd: &asbd, layoutSize: 0, layout: nil, magicCookieSize: 0, magicCookie: nil,
                                               extensions: nil, formatDescriptionOut: &format) == noErr)
        #expect(CMAudioFormatDescriptionGetStreamBasicDescription(format!)!.pointee == asbd)
        var bad = asbd
        bad.mBitsPerChannel = 24
        var none: CMAudioFormatDescription?
        #expect(CMAudioFormatDescriptionCreate(allocator: nil, asbd: &bad, layoutSize: 0, layout: nil, magicCookieSize: 0, magicCookie: nil,
                                               extensions: nil, formatDescriptionOut: &none) == kCMFormatDescriptionError_InvalidParameter && none == nil)
        var bytes: [Float] = [0.5, -0.5, 0.25, 1]
        var block: CMBlockBuffer?
        #expect(CMBlockBufferCreateWithMemoryBlock(allocator: nil, memoryBlock: &bytes, blockLength: 16, blockAllocator: nil, customBlockSource: nil,
                                                   offsetToData: 0, dataLength: 16, flags: 0, blockBufferOut: &block) == kCMBlockBufferNoErr)
        var tooShort: CMBlockBuffer?
        #expect(CMBlockBufferCreateWithMemoryBlock(allocator: nil, memoryBlock: nil, blockLength: 8, blockAllocator: nil, customBlockSource: nil,
                                                   offsetToData: 4, dataLength: 8, flags: 0, blockBufferOut: &tooShort) == kCMBlockBufferBadLengthParameterErr)
        var one: Float = 0.75
        #expect(CMBlockBufferReplaceDataBytes(with: &one, blockBuffer: block!, offsetIntoDestination: 12, dataLength: 4) == kCMBlockBufferNoErr)
        #expect(CMBlockBufferReplaceDataBytes(with: &one, blockBuffer: block!, offsetIntoDestination: 14, dataLength: 4) == kCMBlockBufferBadLengthParameterErr)
        var sb: CMSampleBuffer?
        #expect(CMAudioSampleBufferCreateReadyWithPacketDescriptions(allocator: nil, dataBuffer: block!, formatDescription: format!, sampleCount: 3,
                                                                     presentationTimeStamp: .zero, packetDescriptions: nil, sampleBufferOut: &sb)
                == kCMSampleBufferError_InvalidSampleData && sb == nil)
        #expect(CMAudioSampleBufferCreateReadyWithPacketDescriptions(allocator: nil, dataBuffer: block!, formatDescription: format!, sampleCount: 4,
                                                                     presentationTimeStamp: CMTimeMake(value: 80, timescale: 8000), packetDescriptions: nil,
                                                                     sampleBufferOut: &sb) == noErr)
        let buffer = try #require(sb)
        #expect(CMSampleBufferGetNumSamples(buffer) == 4 && CMSampleBufferGetDuration(buffer) == CMTimeMake(value: 4, timescale: 8000))
        #expect(CMSampleBufferGetPresentationTimeStamp(buffer) == CMTimeMake(value: 80, timescale: 8000))
        var out = [Float](repeating: 0, count: 4)
        CMBlockBufferCopyDataBytes(CMSampleBufferGetDataBuffer(buffer)!, atOffset: 0, dataLength: 16, destination: &out)
        #expect(out == [0.5, -0.5, 0.25, 0.75])
    }
}
