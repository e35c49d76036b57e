import AVFoundation
import AudioToolbox
import GraphKitTesting
import MediaContainers
import Testing
import TestSupport

/// AudioConverter's PCM → AAC as code written for Apple's platforms drives it: a sine made here,
/// pulled through the input callback, its packets written as ADTS and, with the magic cookie as
/// the format description, through a passthrough AVAssetWriter into an M4A; ffmpeg decodes both
/// and the sine's frequency and level come back.
@Suite(.media, .timeLimit(.minutes(5))) struct AudioConverterEncodingTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    @Test func int16MonoSineToAACDecodesBackAsTheSine() throws {
        let source = SineSource(rate: 44_100, channels: 1, frequency: 1_000, amplitude: 0.5, seconds: 2, chunk: 1_000, float: false)
        let encoded = try encode(source, to: aacDescription(), bitRate: 96_000)
        #expect(source.position == 88_200)
        // The priming packet, then the signal's 86.1 packets, then what the encoder flushes.
        #expect((87...90).contains(encoded.packets.count), "\(encoded.packets.count) packets")
        #expect(encoded.packets.allSatisfy { !$0.isEmpty && $0.count <= 768 })

        let config = try #require(audioSpecificConfig(fromMagicCookie: encoded.cookie))
        let parsed = try #require(AudioSpecificConfig(config))
        #expect(parsed.objectType == 2 && parsed.sampleRate == 44_100 && parsed.channels == 1)
        #expect(encoded.cookie.first == 0x03 && encoded.cookie.count == 39, "an ES_Descriptor as Apple's encoder gives: \(encoded.cookie)")

        let path = folder.appendingPathComponent("sine.aac").path
        try Data(adts(encoded.packets, rate: 44_100, channels: 1)).write(to: URL(fileURLWithPath: path))
        let decoded = try decode(path)
        // Every packet decodes to 1,024 frames: the input, plus the priming and the last packet's rest.
        #expect(decoded.count == encoded.packets.count * 1_024)
        #expect(decoded.count >= 88_200 + 1_024 && decoded.count <= 88_200 + 3 * 1_024)
        let (frequency, rms) = measure(decoded[22_050..<66_150], rate: 44_100)
        #expect(abs(frequency - 1_000) < 2, "\(frequency) Hz")
        #expect(abs(rms - 0.5 / 2.0.squareRoot()) < 0.02, "RMS \(rms)")
    }

    @Test func packetsWithTheCookieMakeAnM4AThroughAPassthroughWriter() async throws {
        let source = SineSource(rate: 48_000, channels: 2, frequency: 440, amplitude: 0.25, seconds: 1.5, chunk: 4_096, float: true)
        let encoded = try encode(source, to: aacDescription(), perFill: 8)
        var asbd = aacDescription(rate: 48_000, channels: 2)
        asbd.mFramesPerPacket = 1_024
        var description: CMAudioFormatDescription?
        #expect(CMAudioFormatDescriptionCreate(allocator: kCFAllocatorDefault, asbd: &asbd, layoutSize: 0, layout: nil,
                                               magicCookieSize: encoded.cookie.count, magicCookie: encoded.cookie, extensions: nil,
                                               formatDescriptionOut: &description) == noErr)
        let format = try #require(description)
        let url = folder.appendingPathComponent("sine.m4a")
        let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: nil, sourceFormatHint: format)
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        for (i, packet) in encoded.packets.enumerated() {
            var block: CMBlockBuffer?
            #expect(CMBlockBufferCreateWithMemoryBlock(allocator: nil, memoryBlock: nil, blockLength: packet.count, blockAllocator: nil,
                                                       customBlockSource: nil, offsetToData: 0, dataLength: packet.count, flags: 0,
                                                       blockBufferOut: &block) == kCMBlockBufferNoErr)
            CMBlockBufferReplaceDataBytes(with: packet, blockBuffer: block!, offsetIntoDestination: 0, dataLength: packet.count)
            var timing = CMSampleTimingInfo(duration: CMTime(value: 1_024, timescale: 48_000),
                                            presentationTimeStamp: CMTime(value: CMTimeValue(i * 1_024), timescale: 48_000), decodeTimeStamp: .invalid)
            var size = packet.count
            var sample: CMSampleBuffer?
            #expect(CMSampleBufferCreateReady(allocator: nil, dataBuffer: block, formatDescription: format, sampleCount: 1,
                                              sampleTimingEntryCount: 1, sampleTimingArray: &timing, sampleSizeEntryCount: 1,
                                              sampleSizeArray: &size, sampleBufferOut: &sample) == noErr)
            while !input.isReadyForMoreMediaData { try await Task.sleep(nanoseconds: 1_000_000) }
            #expect(input.append(sample!), "\(String(describing: writer.error))")
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")

        let probe = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                       "stream=codec_name,sample_rate,channels,nb_frames:format=duration", "-of", "default=nw=1", url.path])
        #expect(probe.contains("codec_name=aac") && probe.contains("sample_rate=48000") && probe.contains("channels=2"), "\(probe)")
        #expect(probe.contains("nb_frames=\(encoded.packets.count)"), "\(probe)")
        let decoded = try decode(url.path)
        let frames = decoded.count / 2
        #expect(frames >= 72_000 && frames <= 72_000 + 3 * 1_024, "\(frames) frames")
        let left = decoded.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let (frequency, rms) = measure(left[12_000..<60_000], rate: 48_000)
        #expect(abs(frequency - 440) < 1, "\(frequency) Hz")
        #expect(abs(rms - 0.25 / 2.0.squareRoot()) < 0.015, "RMS \(rms)")
    }

    /// Float stereo at 44.1 kHz to AAC mono at 22.05 kHz: resampled and mixed as the
    /// destination says, the cookie says so, and the tone comes back.
    @Test func resampledAndMixedToTheDestinationsRateAndChannels() throws {
        let source = SineSource(rate: 44_100, channels: 2, frequency: 700, amplitude: 0.4, seconds: 1.5, chunk: 3_000, float: true)
        let started = ContinuousClock.now
        let encoded = try encode(source, to: aacDescription(rate: 22_050, channels: 1), perFill: 3)
        #expect(ContinuousClock.now - started < .seconds(20))
        let parsed = try #require(audioSpecificConfig(fromMagicCookie: encoded.cookie).flatMap { AudioSpecificConfig($0) })
        #expect(parsed.sampleRate == 22_050 && parsed.channels == 1)
        let path = folder.appendingPathComponent("mixed.aac").path
        try Data(adts(encoded.packets, rate: 22_050, channels: 1)).write(to: URL(fileURLWithPath: path))
        let decoded = try decode(path)
        #expect(decoded.count >= 33_075 && decoded.count <= 33_075 + 3 * 1_024, "\(decoded.count) frames")
        let (frequency, rms) = measure(decoded[5_000..<28_000], rate: 22_050)
        #expect(abs(frequency - 700) < 2, "\(frequency) Hz")
        #expect(rms > 0.1, "RMS \(rms)")
    }

    /// A callback that says "no data yet" with a status of its own ends that fill with it; the
    /// next fill goes on, and nothing is lost.
    @Test func aCallbackStatusEndsTheFillAndTheStreamGoesOn() throws {
        let source = SineSource(rate: 22_050, channels: 1, frequency: 300, amplitude: 0.5, seconds: 1, chunk: 2_048, float: false)
        source.pauseEvery = 4_096
        let encoded = try encode(source, to: aacDescription(rate: 22_050), perFill: 4)
        #expect(encoded.statuses.contains(SineSource.noDataYet))
        #expect(source.position == 22_050)
        let path = folder.appendingPathComponent("paused.aac").path
        try Data(adts(encoded.packets, rate: 22_050, channels: 1)).write(to: URL(fileURLWithPath: path))
        let decoded = try decode(path)
        #expect(decoded.count >= 22_050 + 1_024 && decoded.count <= 22_050 + 3 * 1_024)
        let (frequency, _) = measure(decoded[4_000..<20_000], rate: 22_050)
        #expect(abs(frequency - 300) < 1, "\(frequency) Hz")
    }

    /// Disposed from inside its own callback: the fill returns Apple's parameter error, no crash,
    /// no wait; a reset stream starts again from its priming.
    @Test func disposeDuringAFillAndResetBetweenStreams() throws {
        let source = SineSource(rate: 44_100, channels: 1, frequency: 500, amplitude: 0.5, seconds: 1, chunk: 1_024, float: false)
        var input = source.asbd, output = aacDescription()
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&input, &output, &converter) == noErr)
        let c = try #require(converter)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 8_192, alignment: 16)
        defer { buffer.deallocate() }
        var descriptions = [AudioStreamPacketDescription](repeating: .init(), count: 4)
        func fill() -> (OSStatus, UInt32) {
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 1, mDataByteSize: 8_192, mData: buffer))
            var packets: UInt32 = 4
            let status = AudioConverterFillComplexBuffer(c, sineInput, Unmanaged.passUnretained(source).toOpaque(), &packets, &list, &descriptions)
            return (status, packets)
        }
        #expect(fill() == (OSStatus(noErr), 4))
        #expect(AudioConverterReset(c) == noErr)
        #expect(fill() == (OSStatus(noErr), 4))
        // A buffer too small for the next packet: Apple's output-size status, and the packet
        // waits for the next fill rather than being lost.
        var tiny = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 1, mDataByteSize: 4, mData: buffer))
        var one: UInt32 = 1
        #expect(AudioConverterFillComplexBuffer(c, sineInput, Unmanaged.passUnretained(source).toOpaque(), &one, &tiny, &descriptions)
                == kAudioConverterErr_InvalidOutputSize && one == 0)
        #expect(fill() == (OSStatus(noErr), 4))
        source.disposeOnCall = (c, source.calls + 2)
        let started = ContinuousClock.now
        #expect(fill().0 == kAudio_ParamError)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(fill().0 == kAudio_ParamError)
        #expect(AudioConverterDispose(c) == kAudio_ParamError)
    }
}

/// What Apple answers with a status, answered with Apple's status: no converter is started, so
/// these run in the fast tier.
@Suite(.timeLimit(.minutes(1))) struct AudioConverterMisuseTests {
    func new(_ input: AudioStreamBasicDescription, _ output: AudioStreamBasicDescription) -> (OSStatus, AudioConverterRef?) {
        var (i, o) = (input, output)
        var converter: AudioConverterRef? = OpaquePointer(bitPattern: 0x1234)
        let status = AudioConverterNew(&i, &o, &converter)
        if let converter { AudioConverterDispose(converter) }
        return (status, converter)
    }

    var pcm: AudioStreamBasicDescription {
        SineSource(rate: 44_100, channels: 2, frequency: 1, amplitude: 1, seconds: 0, chunk: 1, float: false).asbd
    }

    @Test func formatsItCannotConvertAreRefused() {
        var bigEndian = pcm; bigEndian.mFormatFlags |= kAudioFormatFlagIsBigEndian
        var planar = pcm; planar.mFormatFlags |= kAudioFormatFlagIsNonInterleaved
        var twentyFour = pcm; twentyFour.mBitsPerChannel = 24
        var wrongSize = pcm; wrongSize.mBytesPerFrame = 3
        var slowRate = pcm; slowRate.mSampleRate = 1_000
        var aacIn = aacDescription(rate: 44_100, channels: 2)
        var heAAC = aacDescription(); heAAC.mFormatFlags = UInt32(MPEG4ObjectID.AAC_SBR.rawValue)
        var oddPacket = aacDescription(); oddPacket.mFramesPerPacket = 960
        for (input, output, status) in [(bigEndian, aacDescription(), kAudioConverterErr_FormatNotSupported),
                                        (planar, aacDescription(), kAudioConverterErr_FormatNotSupported),
                                        (twentyFour, aacDescription(), kAudioConverterErr_FormatNotSupported),
                                        (wrongSize, aacDescription(), kAudioConverterErr_FormatNotSupported),
                                        (slowRate, aacDescription(), kAudioConverterErr_InputSampleRateOutOfRange),
                                        (aacIn, pcm, kAudioConverterErr_FormatNotSupported),
                                        (pcm, pcm, kAudioConverterErr_FormatNotSupported),
                                        (pcm, aacDescription(rate: 37_000), kAudioConverterErr_FormatNotSupported),
                                        (pcm, aacDescription(channels: 8), kAudioConverterErr_FormatNotSupported),
                                        (pcm, heAAC, kAudioConverterErr_FormatNotSupported),
                                        (pcm, oddPacket, kAudioConverterErr_FormatNotSupported)] {
            let (got, converter) = new(input, output)
            #expect(got == status)
            #expect(converter == nil)
        }
        _ = aacIn
        #expect(new(pcm, aacDescription()).0 == noErr)
        // Apple's software encoder, asked for by name: the one encoder here.
        var (i, o) = (pcm, aacDescription())
        var software = AudioClassDescription(mType: kAudioEncoderComponentType, mSubType: kAudioFormatMPEG4AAC,
                                             mManufacturer: kAppleSoftwareAudioCodecManufacturer)
        var converter: AudioConverterRef?
        #expect(AudioConverterNewSpecific(&i, &o, 1, &software, &converter) == noErr)
        #expect(converter.map { AudioConverterDispose($0) } == OSStatus(noErr))
        #expect(AudioConverterNewSpecific(&i, &o, 0, &software, &converter) == kAudio_ParamError && converter == nil)
    }

    @Test func propertiesAndReferencesAnswerWithApplesStatuses() throws {
        var input = pcm, output = aacDescription()
        var converter: AudioConverterRef?
        #expect(AudioConverterNew(&input, &output, &converter) == noErr)
        let c = try #require(converter)

        var value: UInt32 = 0, size = UInt32(MemoryLayout<UInt32>.size)
        #expect(AudioConverterGetProperty(c, 0x7A7A_7A7A, &size, &value) == kAudioConverterErr_PropertyNotSupported)
        #expect(AudioConverterGetPropertyInfo(c, 0x7A7A_7A7A, &size, nil) == kAudioConverterErr_PropertyNotSupported)
        var small: UInt16 = 0, smallSize = UInt32(2)
        #expect(AudioConverterGetProperty(c, kAudioConverterEncodeBitRate, &smallSize, &small) == kAudioConverterErr_BadPropertySizeError)
        var bitRate: UInt32 = 1_000
        #expect(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, 4, &bitRate) == kAudio_ParamError)
        #expect(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, 2, &bitRate) == kAudioConverterErr_BadPropertySizeError)
        bitRate = 128_000
        #expect(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, 4, &bitRate) == noErr)
        #expect(AudioConverterGetProperty(c, kAudioConverterEncodeBitRate, &size, &value) == noErr && value == 128_000)
        var writable = DarwinBoolean(false)
        #expect(AudioConverterGetPropertyInfo(c, kAudioConverterEncodeBitRate, &size, &writable) == noErr && writable.boolValue)
        #expect(AudioConverterSetProperty(c, kAudioConverterPropertyMaximumOutputPacketSize, 4, &bitRate) == kAudioConverterErr_OperationNotSupported)
        #expect(AudioConverterGetProperty(c, kAudioConverterPropertyMaximumOutputPacketSize, &size, &value) == noErr && value == 1_536)

        var current = AudioStreamBasicDescription(), asbdSize = UInt32(MemoryLayout<AudioStreamBasicDescription>.size)
        #expect(AudioConverterGetProperty(c, kAudioConverterCurrentOutputStreamDescription, &asbdSize, &current) == noErr)
        #expect(current.mSampleRate == 44_100 && current.mChannelsPerFrame == 2 && current.mFramesPerPacket == 1_024)
        var prime = AudioConverterPrimeInfo(), primeSize = UInt32(MemoryLayout<AudioConverterPrimeInfo>.size)
        #expect(AudioConverterGetProperty(c, kAudioConverterPrimeInfo, &primeSize, &prime) == noErr && prime.leadingFrames == 1_024)

        // The cookie: an ES_Descriptor around AAC-LC's AudioSpecificConfig 0x12 0x10 (44.1 kHz, stereo).
        var cookieSize: UInt32 = 0
        #expect(AudioConverterGetPropertyInfo(c, kAudioConverterCompressionMagicCookie, &cookieSize, nil) == noErr)
        var cookie = [UInt8](repeating: 0, count: Int(cookieSize))
        var tooSmall = cookieSize - 1
        #expect(AudioConverterGetProperty(c, kAudioConverterCompressionMagicCookie, &tooSmall, &cookie) == kAudioConverterErr_BadPropertySizeError)
        #expect(AudioConverterGetProperty(c, kAudioConverterCompressionMagicCookie, &cookieSize, &cookie) == noErr)
        #expect(audioSpecificConfig(fromMagicCookie: cookie) == [0x12, 0x10])

        // No packet descriptions for a variable-size format; nothing asked, nothing done.
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 2_048, alignment: 16)
        defer { buffer.deallocate() }
        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: 2_048, mData: buffer))
        var packets: UInt32 = 1
        let never: AudioConverterComplexInputDataProc = { _, _, _, _, _ in Issue.record("called"); return OSStatus(noErr) }
        #expect(AudioConverterFillComplexBuffer(c, never, nil, &packets, &list, nil) == kAudioConverterErr_RequiresPacketDescriptionsError)
        packets = 0
        var description = AudioStreamPacketDescription()
        #expect(AudioConverterFillComplexBuffer(c, never, nil, &packets, &list, &description) == noErr && packets == 0)

        #expect(AudioConverterDispose(c) == noErr)
        // Disposed: every call refuses the reference.
        packets = 1
        #expect(AudioConverterFillComplexBuffer(c, never, nil, &packets, &list, &description) == kAudio_ParamError && packets == 0)
        #expect(AudioConverterGetProperty(c, kAudioConverterEncodeBitRate, &size, &value) == kAudio_ParamError)
        #expect(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, 4, &bitRate) == kAudio_ParamError)
        #expect(AudioConverterReset(c) == kAudio_ParamError)
        #expect(AudioConverterDispose(c) == kAudio_ParamError)
        #expect(AudioConverterDispose(OpaquePointer(bitPattern: 0x10)!) == kAudio_ParamError)
    }

    @Test func cookiesParseInEveryFormCoreMediaTakes() {
        let config = AudioSpecificConfig.aacLC(sampleRate: 48_000, channels: 2)!
        #expect(config == [0x11, 0x90])
        let cookie = aacMagicCookie(audioSpecificConfig: config, averageBitRate: 128_000, maximumBitRate: 128_000, bufferSize: 1_536)
        #expect(audioSpecificConfig(fromMagicCookie: cookie) == config)
        #expect(audioSpecificConfig(fromMagicCookie: [0, 0, 0, 0] + cookie) == config)  // an esds box's body
        #expect(audioSpecificConfig(fromMagicCookie: config) == config)  // a bare AudioSpecificConfig
        #expect(audioSpecificConfig(fromMagicCookie: [0x03, 0x05, 0, 0, 0, 0x04]) == nil)
        #expect(AudioSpecificConfig([0x12, 0x10]).map { [$0.objectType, $0.sampleRate, $0.channels ?? 0] } == [2, 44_100, 2])
        var asbd = aacDescription(rate: 48_000, channels: 2)
        var description: CMAudioFormatDescription?
        #expect(CMAudioFormatDescriptionCreate(allocator: nil, asbd: &asbd, layoutSize: 0, layout: nil, magicCookieSize: 6,
                                               magicCookie: [UInt8]([0x03, 0x80, 0x80, 0x80, 0x01, 0x00]), extensions: nil,
                                               formatDescriptionOut: &description) == kCMFormatDescriptionError_InvalidParameter)
    }
}
