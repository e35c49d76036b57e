// Written for Apple's platforms: the seeds' capture → AudioConverter → M4A recorder. A
// microphone through AVCaptureAudioDataOutput, its PCM encoded to AAC by hand with an
// AudioConverter fed from the delegate (the input callback gives what has arrived and says
// "no data yet" with a status of its own), the packets muxed by a passthrough AVAssetWriter with
// the converter's magic cookie as their format description. Compiled unchanged;
// CaptureAACRecorderTests runs it with the test microphone.
import AVFoundation
import AudioToolbox

final class CaptureAACRecorder: NSObject, AVCaptureAudioDataOutputSampleBufferDelegate {
    private let session = AVCaptureSession()
    private let audioOutput = AVCaptureAudioDataOutput()
    private let queue = DispatchQueue(label: "recorder.audio")
    private var converter: AudioConverterRef?
    private var inputFormat = AudioStreamBasicDescription()
    private var outputFormat = AudioStreamBasicDescription()
    private var pending = [UInt8]()
    private var handedOut = [UInt8]()
    private var inputEnded = false
    private(set) var packets: [Data] = []
    private(set) var magicCookie = Data()
    static let noDataYet: OSStatus = 1

    func start(with device: AVCaptureDevice) throws {
        session.beginConfiguration()
        let input = try AVCaptureDeviceInput(device: device)
        if session.canAddInput(input) { session.addInput(input) }
        audioOutput.setSampleBufferDelegate(self, queue: queue)
        if session.canAddOutput(audioOutput) { session.addOutput(audioOutput) }
        session.commitConfiguration()
        session.startRunning()
    }

    /// Stops capture and drains the encoder.
    func stop() {
        session.stopRunning()
        queue.sync {
            inputEnded = true
            encode()
            if let converter = converter { AudioConverterDispose(converter) }
            converter = nil
        }
    }

    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {
        guard let description = CMSampleBufferGetFormatDescription(sampleBuffer),
              let asbd = CMAudioFormatDescriptionGetStreamBasicDescription(description) else { return }
        if converter == nil && !makeConverter(asbd.pointee) { return }
        var bufferList = AudioBufferList()
        var blockBuffer: CMBlockBuffer?
        let status = CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(
            sampleBuffer, bufferListSizeNeededOut: nil, bufferListOut: &bufferList, bufferListSize: MemoryLayout<AudioBufferList>.size,
            blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: 0, blockBufferOut: &blockBuffer)
        guard status == noErr, let data = bufferList.mBuffers.mData else { return }
        pending.append(contentsOf: UnsafeRawBufferPointer(start: data, count: Int(bufferList.mBuffers.mDataByteSize)))
        encode()
    }

    private func makeConverter(_ source: AudioStreamBasicDescription) -> Bool {
        inputFormat = source
        outputFormat = AudioStreamBasicDescription()
        outputFormat.mFormatID = kAudioFormatMPEG4AAC
        outputFormat.mSampleRate = source.mSampleRate
        outputFormat.mChannelsPerFrame = source.mChannelsPerFrame
        outputFormat.mFramesPerPacket = 1024
        guard AudioConverterNew(&inputFormat, &outputFormat, &converter) == noErr, let converter = converter else { return false }
        var bitRate: UInt32 = 64_000
        AudioConverterSetProperty(converter, kAudioConverterEncodeBitRate, UInt32(MemoryLayout<UInt32>.size), &bitRate)
        var cookieSize: UInt32 = 0
        guard AudioConverterGetPropertyInfo(converter, kAudioConverterCompressionMagicCookie, &cookieSize, nil) == noErr else { return false }
        var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
        guard AudioConverterGetProperty(converter, kAudioConverterCompressionMagicCookie, &cookieSize, &cookie) == noErr else { return false }
        magicCookie = Data(cookie[0..<Int(cookieSize)])
        return true
    }

    /// Converts what has arrived, a packet at a time, until the converter wants more than there is.
    private func encode() {
        guard let converter = converter else { return }
        var maxPacketSize: UInt32 = 0
        var size = UInt32(MemoryLayout<UInt32>.size)
        AudioConverterGetProperty(converter, kAudioConverterPropertyMaximumOutputPacketSize, &size, &maxPacketSize)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Int(maxPacketSize), alignment: 16)
        defer { buffer.deallocate() }
        while true {
            var outputList = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: outputFormat.mChannelsPerFrame,
                                                                                      mDataByteSize: maxPacketSize, mData: buffer))
            var packetCount: UInt32 = 1
            var description = AudioStreamPacketDescription()
            let status = AudioConverterFillComplexBuffer(converter, { _, ioNumberDataPackets, ioData, _, inUserData in
                let recorder = Unmanaged<CaptureAACRecorder>.fromOpaque(inUserData!).takeUnretainedValue()
                return recorder.supply(ioNumberDataPackets, ioData)
            }, Unmanaged.passUnretained(self).toOpaque(), &packetCount, &outputList, &description)
            if packetCount > 0 {
                packets.append(Data(bytes: buffer + Int(description.mStartOffset), count: Int(description.mDataByteSize)))
            }
            if status != noErr || packetCount == 0 { return }
        }
    }

    /// The input callback's work: every frame that has arrived, or "no data yet" (or the end).
    private func supply(_ ioNumberDataPackets: UnsafeMutablePointer<UInt32>, _ ioData: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
        let bytesPerFrame = Int(inputFormat.mBytesPerFrame)
        let frames = pending.count / bytesPerFrame
        if frames == 0 {
            ioNumberDataPackets.pointee = 0
            return inputEnded ? OSStatus(noErr) : CaptureAACRecorder.noDataYet
        }
        // The converter reads the data before it calls again: keep it alive until then.
        handedOut = Array(pending[0..<(frames * bytesPerFrame)])
        pending.removeFirst(frames * bytesPerFrame)
        ioNumberDataPackets.pointee = UInt32(frames)
        ioData.pointee.mNumberBuffers = 1
        ioData.pointee.mBuffers.mNumberChannels = inputFormat.mChannelsPerFrame
        ioData.pointee.mBuffers.mDataByteSize = UInt32(handedOut.count)
        ioData.pointee.mBuffers.mData = handedOut.withUnsafeMutableBytes { $0.baseAddress }
        return OSStatus(noErr)
    }

    /// Writes the packets into an M4A, passthrough, the cookie as their format description.
    func writeM4A(to url: URL, completion: @escaping (Error?) -> Void) {
        var asbd = outputFormat
        var format: CMAudioFormatDescription?
        let status = magicCookie.withUnsafeBytes { cookie in
            CMAudioFormatDescriptionCreate(allocator: kCFAllocatorDefault, asbd: &asbd, layoutSize: 0, layout: nil,
                                           magicCookieSize: cookie.count, magicCookie: cookie.baseAddress, extensions: nil,
                                           formatDescriptionOut: &format)
        }
        guard status == noErr, let formatDescription = format, let writer = try? AVAssetWriter(outputURL: url, fileType: .m4a) else {
            completion(NSError(domain: "CaptureAACRecorder", code: Int(status)))
            return
        }
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: nil, sourceFormatHint: formatDescription)
        writer.add(input)
        writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for (index, packet) in packets.enumerated() {
            var block: CMBlockBuffer?
            CMBlockBufferCreateWithMemoryBlock(allocator: kCFAllocatorDefault, memoryBlock: nil, blockLength: packet.count, blockAllocator: nil,
                                               customBlockSource: nil, offsetToData: 0, dataLength: packet.count, flags: 0, blockBufferOut: &block)
            packet.withUnsafeBytes { bytes in
                _ = CMBlockBufferReplaceDataBytes(with: bytes.baseAddress!, blockBuffer: block!, offsetIntoDestination: 0, dataLength: packet.count)
            }
            var timing = CMSampleTimingInfo(duration: CMTime(value: 1024, timescale: CMTimeScale(outputFormat.mSampleRate)),
                                            presentationTimeStamp: CMTime(value: CMTimeValue(index * 1024), timescale: CMTimeScale(outputFormat.mSampleRate)),
                                            decodeTimeStamp: .invalid)
            var sampleSize = packet.count
            var sample: CMSampleBuffer?
            CMSampleBufferCreateReady(allocator: kCFAllocatorDefault, dataBuffer: block, formatDescription: formatDescription, sampleCount: 1,
                                      sampleTimingEntryCount: 1, sampleTimingArray: &timing, sampleSizeEntryCount: 1, sampleSizeArray: &sampleSize,
                                      sampleBufferOut: &sample)
            while !input.isReadyForMoreMediaData { Thread.sleep(forTimeInterval: 0.001) }
            if let sample = sample { input.append(sample) }
        }
        input.markAsFinished()
        writer.finishWriting { completion(writer.error) }
    }
}
