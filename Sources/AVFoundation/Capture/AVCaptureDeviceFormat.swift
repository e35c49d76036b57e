import GraphKitCore

extension AVCaptureDevice {
    /// A size and frame rates a device captures at, as AVFoundation's. Cameras offer the sizes the
    /// engine scales any camera's frames to (the capture node converts and scales what the camera
    /// gives), at 1 to 60 frames a second, described as 4:2:0 bi-planar video range ('420v'), as
    /// Apple's cameras describe theirs; the output's `videoSettings` decide the frames' format.
    /// A microphone's one format is 16-bit PCM at 48 kHz, mono.
    open class Format: NSObject, @unchecked Sendable {
        // Unchecked: immutable once made; NSObject's conformance cannot be checked.
        public let formatDescription: CMFormatDescription
        public let videoSupportedFrameRateRanges: [AVFrameRateRange]
        public let mediaType: AVMediaType
        public var isVideoBinned: Bool { false }
        public var videoFieldOfView: Float { 60 }
        let dimensions: CMVideoDimensions

        init(width: Int32, height: Int32) {
            var description: CMFormatDescription?
            CMVideoFormatDescriptionCreate(allocator: nil, codecType: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, width: width, height: height,
                                           extensions: nil, formatDescriptionOut: &description)
            formatDescription = description ?? CMFormatDescription(format: .rawVideo(.init(pixelFormat: .nv12, width: Int(width), height: Int(height),
                                                                                             frameRate: FrameRate(30))))
            videoSupportedFrameRateRanges = [AVFrameRateRange(minFrameRate: 1, maxFrameRate: 60)]
            mediaType = .video
            dimensions = CMVideoDimensions(width: width, height: height)
            super.init()
        }

        init(sampleRate: Int, channels: Int) {
            formatDescription = CMFormatDescription(format: .pcm(.init(sampleRate: sampleRate, channels: channels, sampleFormat: .s16le)))
            videoSupportedFrameRateRanges = []
            mediaType = .audio
            dimensions = CMVideoDimensions()
            super.init()
        }

        static let cameraFormats = [(320, 240), (640, 480), (960, 540), (1280, 720), (1920, 1080), (3840, 2160)].map { Format(width: $0.0, height: $0.1) }
        static let microphoneFormats = [Format(sampleRate: 48_000, channels: 1)]

        open override var description: String {
            mediaType == .video ? "<AVCaptureDeviceFormat '420v' \(dimensions.width)x\(dimensions.height), { 1- 60 fps}>" : "<AVCaptureDeviceFormat 'lpcm' 48000 Hz 1 ch>"
        }
    }
}

/// The frame rates a format supports, as AVFoundation's.
open class AVFrameRateRange: NSObject, @unchecked Sendable {
    // Unchecked: immutable once made; NSObject's conformance cannot be checked.
    public let minFrameRate: Float64
    public let maxFrameRate: Float64
    public var minFrameDuration: CMTime { CMTime(value: 1_000, timescale: CMTimeScale(maxFrameRate * 1_000)) }
    public var maxFrameDuration: CMTime { CMTime(value: 1_000, timescale: CMTimeScale(minFrameRate * 1_000)) }
    init(minFrameRate: Float64, maxFrameRate: Float64) {
        self.minFrameRate = minFrameRate
        self.maxFrameRate = maxFrameRate
        super.init()
    }
}
