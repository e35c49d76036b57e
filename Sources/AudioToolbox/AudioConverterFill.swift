@_spi(Engine) import GraphKitCore

// AudioConverterFillComplexBuffer's loop: ask the callback for PCM only while the encoder owes
// no packets for what it has, pull packets as they come, return when the ones asked for are
// there or the stream has ended. Every wait is bounded and wakes when the run ends (a dispose
// cancels it), so a fill always returns.

extension AudioConverter {
    /// How long one packet may take once the encoder owes it: far more than it ever does; past it
    /// the encoder is taken to have failed.
    static let packetTimeout = 10.0
    /// How long to wait for a packet the encoder should owe by the count, before asking for more
    /// input anyway (the count is a lower bound: the encoder's look-ahead is its own).
    static let owedPacketWait = 0.2

    func fill(reference: AudioConverterRef, proc: AudioConverterComplexInputDataProc, userData: UnsafeMutableRawPointer?,
              packets ioPackets: UnsafeMutablePointer<UInt32>, into list: UnsafeMutablePointer<AudioBufferList>,
              descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>?) -> OSStatus {
        let wanted = Int(ioPackets.pointee)
        ioPackets.pointee = 0
        guard wanted > 0 else { return OSStatus(noErr) }
        guard let descriptions else { return kAudioConverterErr_RequiresPacketDescriptionsError }
        let output = UnsafeMutableAudioBufferListPointer(list)
        guard output.count >= 1, output[0].mData != nil else { return kAudio_ParamError }
        let claimed: OSStatus? = shared.withLock { s in
            guard !s.disposed else { return kAudio_ParamError }
            guard !s.busy else { return kAudioConverterErr_OperationNotSupported }
            s.busy = true
            return nil
        }
        if let claimed { return claimed }
        defer { shared.withLock { $0.busy = false } }

        let status = gather(wanted, reference: reference, proc: proc, userData: userData)
        // Disposed during the fill (by the callback, or another thread): whatever stopped the
        // gathering, the reference is gone. A failed encoder: nothing more comes.
        if shared.withLock({ $0.disposed }) { return kAudio_ParamError }
        if status == kAudioConverterErr_UnspecifiedError || status == kAudio_ParamError { return status }
        return deliver(wanted, into: output, descriptions: descriptions, packets: ioPackets) ?? status
    }

    /// Pulls packets into `pending` until `wanted` are there or the output ended; the callback's
    /// status when it stopped the gathering, else noErr, or a failure's status.
    private func gather(_ wanted: Int, reference: AudioConverterRef, proc: AudioConverterComplexInputDataProc,
                        userData: UnsafeMutableRawPointer?) -> OSStatus {
        guard let session = session() else { return kAudioConverterErr_UnspecifiedError }
        while pending.count < wanted && !outputEnded {
            if shared.withLock({ $0.disposed }) { return kAudio_ParamError }
            // What is there already.
            while let packet = session.next(timeout: 0) { take(packet) }
            if pending.count >= wanted { break }
            if session.isAtEnd { outputEnded = true; break }
            if session.hasEnded { return kAudioConverterErr_UnspecifiedError }
            if inputEnded {
                // The encoder flushes what it holds: every packet comes, then the end.
                if let packet = session.next(timeout: Self.packetTimeout) { take(packet); continue }
                if session.isAtEnd { outputEnded = true; break }
                if shared.withLock({ $0.disposed }) { return kAudio_ParamError }
                return kAudioConverterErr_UnspecifiedError
            }
            // Packets the encoder owes for what it has (at the output's rate, when it resamples),
            // keeping two back for its look-ahead and the resampler's.
            let framesOut = Double(framesPushed) * destination.mSampleRate / source.mSampleRate
            let owed = Int(framesOut / Double(Self.framesPerPacket)) - 2 - packetsPulled
            if owed > 0, let packet = session.next(timeout: Self.owedPacketWait) { take(packet); continue }
            if session.hasEnded && !session.isAtEnd { return kAudioConverterErr_UnspecifiedError }
            // Ask for more.
            let status = requestInput(frames: (wanted - pending.count) * Self.framesPerPacket, session: session,
                                      reference: reference, proc: proc, userData: userData)
            if status != noErr { return status }
        }
        return OSStatus(noErr)
    }

    private func take(_ packet: SampleBuffer) {
        pending.append(packet)
        packetsPulled += 1
    }

    /// The stream's session, started on the first fill after making or resetting.
    private func session() -> AACEncoderSession? {
        let (existing, bitRate) = shared.withLock { ($0.session, $0.bitRate) }
        if let existing { return existing }
        guard let made = try? AACEncoderSession(pcm: pcm, outputSampleRate: Int(destination.mSampleRate),
                                                outputChannels: Int(destination.mChannelsPerFrame), bitRate: Int(bitRate)) else { return nil }
        let disposed = shared.withLock { s in
            s.session = made
            return s.disposed
        }
        if disposed { made.cancel() }
        return made
    }

    /// Calls the input callback once for `frames` frames and pushes what it gives.
    private func requestInput(frames: Int, session: AACEncoderSession, reference: AudioConverterRef,
                              proc: AudioConverterComplexInputDataProc, userData: UnsafeMutableRawPointer?) -> OSStatus {
        var count = UInt32(clamping: frames)
        var input = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: source.mChannelsPerFrame, mDataByteSize: 0, mData: nil))
        var inputDescriptions: UnsafeMutablePointer<AudioStreamPacketDescription>? = nil
        let status = proc(reference, &count, &input, &inputDescriptions, userData)
        guard status == noErr else { return status }
        if count == 0 {
            inputEnded = true
            session.finish()
            return OSStatus(noErr)
        }
        let bytes = Int(count) * Int(source.mBytesPerFrame)
        guard input.mNumberBuffers == 1, let data = input.mBuffers.mData, Int(input.mBuffers.mDataByteSize) >= bytes else {
            return kAudioConverterErr_InvalidInputSize
        }
        do {
            try session.push(UnsafeRawBufferPointer(start: data, count: bytes), frames: Int(count), at: framesPushed)
        } catch {
            return kAudioConverterErr_UnspecifiedError
        }
        framesPushed += Int64(count)
        return OSStatus(noErr)
    }

    /// Writes pending packets into the list's first buffer while they fit; nil when it wrote,
    /// or a status when not even the first fits.
    private func deliver(_ wanted: Int, into output: UnsafeMutableAudioBufferListPointer,
                         descriptions: UnsafeMutablePointer<AudioStreamPacketDescription>, packets ioPackets: UnsafeMutablePointer<UInt32>) -> OSStatus? {
        var buffer = output[0]
        let capacity = Int(buffer.mDataByteSize)
        var offset = 0, written = 0
        while written < wanted, written < pending.count {
            let packet = pending[written]
            guard offset + packet.byteCount <= capacity else { break }
            packet.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { (buffer.mData! + offset).copyMemory(from: base, byteCount: bytes.count) }
            }
            descriptions[written] = AudioStreamPacketDescription(mStartOffset: Int64(offset), mVariableFramesInPacket: 0,
                                                                 mDataByteSize: UInt32(packet.byteCount))
            offset += packet.byteCount
            written += 1
        }
        pending.removeFirst(written)
        buffer.mDataByteSize = UInt32(offset)
        output[0] = buffer
        ioPackets.pointee = UInt32(written)
        return written == 0 && !pending.isEmpty ? kAudioConverterErr_InvalidOutputSize : nil
    }
}
