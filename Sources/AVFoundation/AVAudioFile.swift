@_spi(Engine) import Assets
@_spi(Engine) import GraphKitCore
import Glibc

/// A sound file read into PCM buffers or written from them, as AVFAudio's `AVAudioFile`.
///
/// Reading: any file GraphKit decodes (its first sound track), in the processing format (32-bit
/// float, not interleaved, unless asked otherwise), from ``framePosition`` on; `length` is the
/// track's duration in frames. Writing: linear PCM into a WAV file (16-bit integer or 32-bit
/// float, by the settings), written beside the final name and renamed onto it, complete, by
/// ``close()`` (or when the object goes away); a file that is never closed is never under the
/// name. Other codecs are refused by name: write them with `AVAssetWriter`.
open class AVAudioFile: @unchecked Sendable {
    // Unchecked: open, as AVFAudio's; used by one thread at a time, as Apple's is.
    public let url: URL
    public let fileFormat: AVAudioFormat
    public let processingFormat: AVAudioFormat
    private var reading: Reading?
    private var writing: Writing?

    /// Opens `fileURL` to read, in the standard processing format (32-bit float, not interleaved).
    public convenience init(forReading fileURL: URL) throws {
        try self.init(forReading: fileURL, commonFormat: .pcmFormatFloat32, interleaved: false)
    }

    public init(forReading fileURL: URL, commonFormat format: AVAudioCommonFormat, interleaved: Bool) throws {
        url = fileURL
        guard fileURL.isFileURL else { throw avError(.fileFormatNotRecognized, "\(fileURL) is not a file URL; GraphKit reads local files") }
        let asset: Asset
        do { asset = try Asset(path: fileURL.path) } catch { throw avError(error) }
        guard let track = asset.tracks(withMediaType: .audio).first, let rate = track.stream.sampleRate, let channels = track.stream.channels,
              let file = AVAudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: Double(rate), channels: AVAudioChannelCount(channels), interleaved: true),
              let processing = AVAudioFormat(commonFormat: format, sampleRate: Double(rate), channels: AVAudioChannelCount(channels), interleaved: interleaved) else {
            throw avError(.fileFormatNotRecognized, "\(fileURL.path) has no sound track GraphKit reads as PCM (or its format is not 32-bit float or 16-bit integer PCM)")
        }
        fileFormat = file
        processingFormat = processing
        let frames = track.timeRange.duration.converted(to: Int32(clamping: rate)).value
        reading = Reading(asset: asset, track: track, rate: rate, channels: channels, length: max(0, frames))
    }

    /// Opens `fileURL` to write the linear PCM that `settings` describe, taking buffers in the
    /// standard processing format.
    public convenience init(forWriting fileURL: URL, settings: [String: Any]) throws {
        try self.init(forWriting: fileURL, settings: settings, commonFormat: .pcmFormatFloat32, interleaved: false)
    }

    public init(forWriting fileURL: URL, settings: [String: Any], commonFormat format: AVAudioCommonFormat, interleaved: Bool) throws {
        url = fileURL
        guard fileURL.isFileURL, ["wav", "wave"].contains(fileURL.pathExtension.lowercased()) else {
            throw avError(.invalidOutputURLPathExtension, "\(fileURL.path): AVAudioFile writes WAV files here (.wav); write other types with AVAssetWriter")
        }
        guard let file = AVAudioFormat(settings: settings) else {
            throw avError(.operationNotAllowed, "AVAudioFile writes linear PCM of 16-bit integers or 32-bit floats (AVFormatIDKey kAudioFormatLinearPCM, AVSampleRateKey, AVNumberOfChannelsKey, AVLinearPCMBitDepthKey 16 or 32); the settings were \(settings)")
        }
        guard let processing = AVAudioFormat(commonFormat: format, sampleRate: file.sampleRate, channels: file.channelCount, interleaved: interleaved) else {
            throw avError(.operationNotAllowed, "the processing format must be 32-bit float or 16-bit integer PCM")
        }
        if let problem = outputFolderProblem(fileURL) { throw problem }
        fileFormat = file
        processingFormat = processing
        writing = try Writing(url: fileURL, format: file)
    }

    deinit { close() }

    /// Frames in the file: as read, its sound track's duration; as written, the frames so far.
    public var length: AVAudioFramePosition { reading?.length ?? writing?.frames ?? 0 }

    /// Where the next read starts, in frames; set it to read from elsewhere. Writing: the
    /// frames written so far.
    public var framePosition: AVAudioFramePosition {
        get { reading?.position ?? writing?.frames ?? 0 }
        set { reading?.seek(to: newValue) }
    }

    /// Reads as many frames as `buffer` holds (fewer at the end: `frameLength` says how many; 0
    /// past the end), from ``framePosition``.
    public func read(into buffer: AVAudioPCMBuffer) throws {
        try read(into: buffer, frameCount: buffer.frameCapacity)
    }

    public func read(into buffer: AVAudioPCMBuffer, frameCount frames: AVAudioFrameCount) throws {
        guard let reading else { throw avError(.operationNotAllowed, "\(url.path) was opened for writing, not reading") }
        guard buffer.format.channelCount == processingFormat.channelCount, buffer.format.sampleRate == processingFormat.sampleRate else {
            throw avError(.operationNotAllowed, "the buffer's format (\(buffer.format.channelCount) channels at \(buffer.format.sampleRate) Hz) is not the file's processing format (\(processingFormat.channelCount) at \(processingFormat.sampleRate))")
        }
        try reading.read(into: buffer, frames: Int(min(frames, buffer.frameCapacity)))
    }

    /// Appends `buffer`'s `frameLength` frames (in the processing format's rate and channels).
    public func write(from buffer: AVAudioPCMBuffer) throws {
        guard let writing else { throw avError(.operationNotAllowed, "\(url.path) was opened for reading, or is closed") }
        guard buffer.format.channelCount == fileFormat.channelCount, buffer.format.sampleRate == fileFormat.sampleRate else {
            throw avError(.operationNotAllowed, "the buffer's format (\(buffer.format.channelCount) channels at \(buffer.format.sampleRate) Hz) is not the file's (\(fileFormat.channelCount) at \(fileFormat.sampleRate)): convert it first")
        }
        try writing.append(buffer)
    }

    /// Finishes the file: a written one is completed and renamed onto its name. Later writes
    /// throw. Called when the object goes away.
    public func close() {
        writing?.finish()
        writing = nil
        reading?.stop()
    }

    // MARK: Reading

    private final class Reading {
        let asset: Asset
        let track: AssetTrack
        let rate: Int, channels: Int
        let length: AVAudioFramePosition
        private(set) var position: AVAudioFramePosition = 0
        private var reader: AssetReader?
        private var output: AssetReaderTrackOutput?
        /// Decoded samples not handed out yet (interleaved floats), and how far into them.
        private var pending: SampleBuffer?
        private var used = 0

        init(asset: Asset, track: AssetTrack, rate: Int, channels: Int, length: AVAudioFramePosition) {
            (self.asset, self.track, self.rate, self.channels, self.length) = (asset, track, rate, channels, length)
        }

        func seek(to frame: AVAudioFramePosition) {
            stop()
            position = max(0, min(frame, length))
        }

        func stop() {
            reader?.cancelReading()
            (reader, output, pending, used) = (nil, nil, nil, 0)
        }

        /// A reader from `position` on, decoding to interleaved floats at the file's own rate and channels.
        private func start() throws {
            let r = try AssetReader(asset: asset)
            let o = AssetReaderTrackOutput(track: track, outputSettings: .linearPCM(sampleFormat: .f32le, sampleRate: rate, channels: channels))
            try r.add(o)
            if position > 0 {
                let start = MediaTime(value: position, timescale: Int32(clamping: rate))
                r.timeRange = MediaTimeRange(start: start, duration: max(.zero, asset.duration - start))
            }
            try r.startReading()
            (reader, output) = (r, o)
        }

        func read(into buffer: AVAudioPCMBuffer, frames: Int) throws {
            var filled = 0
            do {
                if output == nil && position < length { try start() }
                while filled < frames, position < length {
                    if pending == nil || used >= pending!.frameCount {
                        guard let next = output?.copyNextSampleBuffer() else {
                            if let error = reader?.error { throw error }
                            break
                        }
                        (pending, used) = (next, 0)
                    }
                    guard let pending else { break }
                    let n = min(frames - filled, pending.frameCount - used, Int(length - position))
                    pending.withAudioSamples(as: Float.self) { s in
                        for f in 0..<n { for c in 0..<channels { buffer.setSample(c, filled + f, s[(used + f) * channels + c]) } }
                    }
                    used += n
                    filled += n
                    position += AVAudioFramePosition(n)
                }
            } catch {
                buffer.frameLength = AVAudioFrameCount(filled)
                throw avError(error)
            }
            buffer.frameLength = AVAudioFrameCount(filled)
        }
    }

    // MARK: Writing

    private final class Writing {
        let url: URL
        let format: AVAudioFormat
        let temporary: String
        let fd: Int32
        private(set) var frames: AVAudioFramePosition = 0
        private var failed = false

        init(url: URL, format: AVAudioFormat) throws {
            self.url = url
            self.format = format
            let folder = url.deletingLastPathComponent().path, name = url.lastPathComponent
            var made: (String, Int32)?
            for _ in 0..<16 {
                let candidate = "\(folder)/.\(name).\(UInt32.random(in: 0...UInt32.max)).partial"
                let fd = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
                if fd >= 0 { made = (candidate, fd); break }
                if errno != EEXIST { break }
            }
            guard let made else {
                throw avError(.unknown, "cannot write \(url.path): \(String(cString: strerror(errno)))", underlying: NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
            }
            (temporary, fd) = made
            try put(header(dataBytes: 0))
        }

        /// RIFF WAVE: a `fmt ` of PCM (1) or IEEE float (3), then `data`.
        private func header(dataBytes: UInt32) -> [UInt8] {
            let bytes = format.bytesPerSample, channels = Int(format.channelCount), rate = UInt32(format.sampleRate.rounded())
            var h: [UInt8] = []
            func u32(_ v: UInt32) { h += withUnsafeBytes(of: v.littleEndian, Array.init) }
            func u16(_ v: UInt16) { h += withUnsafeBytes(of: v.littleEndian, Array.init) }
            h += Array("RIFF".utf8); u32(36 &+ dataBytes); h += Array("WAVE".utf8)
            h += Array("fmt ".utf8); u32(16); u16(format.commonFormat == .pcmFormatFloat32 ? 3 : 1); u16(UInt16(channels))
            u32(rate); u32(rate * UInt32(channels * bytes)); u16(UInt16(channels * bytes)); u16(UInt16(bytes * 8))
            h += Array("data".utf8); u32(dataBytes)
            return h
        }

        private func put(_ bytes: [UInt8], at offset: off_t? = nil) throws {
            let written = bytes.withUnsafeBytes { raw in
                offset.map { pwrite(fd, raw.baseAddress, raw.count, $0) } ?? Glibc.write(fd, raw.baseAddress, raw.count)
            }
            guard written == bytes.count else {
                failed = true
                throw avError(.diskFull, "cannot write \(url.path): \(written < 0 ? String(cString: strerror(errno)) : "the disk took \(written) of \(bytes.count) bytes")")
            }
        }

        func append(_ buffer: AVAudioPCMBuffer) throws {
            guard !failed else { throw avError(.unknown, "writing \(url.path) failed before; nothing more is written") }
            let n = Int(buffer.frameLength), channels = Int(format.channelCount)
            // The file's data may not pass 4 GiB (a WAV's sizes are 32-bit).
            let bytes = n * channels * format.bytesPerSample
            guard (frames + AVAudioFramePosition(n)) * AVAudioFramePosition(channels * format.bytesPerSample) < AVAudioFramePosition(UInt32.max - 44) else {
                throw avError(.operationNotAllowed, "\(url.path) would pass a WAV file's 4 GiB")
            }
            var out = [UInt8](repeating: 0, count: bytes)
            out.withUnsafeMutableBytes { raw in
                for f in 0..<n {
                    for c in 0..<channels {
                        let v = buffer.sample(c, f), i = f * channels + c
                        if format.commonFormat == .pcmFormatFloat32 {
                            raw.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self)
                        } else {
                            raw.storeBytes(of: Int16(clamping: Int((v * 32768).rounded())).littleEndian, toByteOffset: i * 2, as: Int16.self)
                        }
                    }
                }
            }
            try put(out)
            frames += AVAudioFramePosition(n)
        }

        /// The sizes written into the header, then the file renamed onto its name; on a
        /// failure, the temporary file removed and nothing renamed.
        func finish() {
            let dataBytes = UInt32(clamping: frames * AVAudioFramePosition(Int(format.channelCount) * format.bytesPerSample))
            if !failed, (try? put(header(dataBytes: dataBytes), at: 0)) != nil, fsync(fd) == 0, Glibc.close(fd) == 0,
               rename(temporary, url.path) == 0 {
                return
            }
            Glibc.close(fd)
            unlink(temporary)
        }
    }
}
