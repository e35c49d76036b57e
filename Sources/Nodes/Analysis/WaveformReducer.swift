/// Reduces PCM to waveform bins with audiowaveform's arithmetic (v1.10), value for value:
///
/// - bins start at frame 0, never overlap, and the last partial bin counts like the others
///   (length = ceil(frames / samplesPerPixel));
/// - channels combined: per frame, the sum of the 16-bit samples divided by the channel count
///   with integer division truncating toward zero;
/// - float input becomes 16-bit as `Int16(f × 32767)`, truncating toward zero;
/// - `maxabs` and `rms` bins are stored as the pair (−v, v).
///
/// Memory grows with the number of bins, never with the number of samples.
public struct WaveformReducer: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        case minmax, maxabs, rms
    }

    public let samplesPerPixel: Int
    public let inputChannels: Int
    public let splitChannels: Bool
    public let mode: Mode
    public var outputChannels: Int { splitChannels ? inputChannels : 1 }

    /// For each finished bin, for each output channel: min then max, 16-bit.
    public private(set) var data: [Int16] = []
    private var inBin = 0
    private var mins: [Int32]
    private var maxs: [Int32]
    private var squares: [Double]

    public init(samplesPerPixel: Int, inputChannels: Int, splitChannels: Bool = false, mode: Mode = .minmax) {
        precondition(samplesPerPixel >= 1 && inputChannels >= 1)
        self.samplesPerPixel = samplesPerPixel
        self.inputChannels = inputChannels
        self.splitChannels = splitChannels
        self.mode = mode
        let n = splitChannels ? inputChannels : 1
        mins = Array(repeating: Int32.max, count: n)
        maxs = Array(repeating: Int32.min, count: n)
        squares = Array(repeating: 0, count: n)
    }

    /// Finished bins so far.
    public var binCount: Int { data.count / (2 * outputChannels) }

    /// Adds interleaved 16-bit samples (a whole number of frames).
    public mutating func add(_ samples: UnsafeBufferPointer<Int16>) {
        let c = inputChannels
        let frames = samples.count / c
        var f = 0
        while f < frames {
            let n = min(samplesPerPixel - inBin, frames - f)
            if splitChannels || c == 1 {
                for ch in 0..<c { scan(samples, from: f, count: n, channel: ch, into: splitChannels ? ch : 0) }
            } else {
                scanCombined(samples, from: f, count: n)
            }
            f += n
            inBin += n
            if inBin == samplesPerPixel { closeBin() }
        }
    }

    /// Adds interleaved float samples, converted as audiowaveform does.
    public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        var converted = [Int16](repeating: 0, count: samples.count)
        for i in samples.indices {
            let v = (samples[i] * 32767).rounded(.towardZero)
            converted[i] = Int16(max(-32768, min(32767, v)))
        }
        converted.withUnsafeBufferPointer { add($0) }
    }

    /// Closes the last, partial bin.
    public mutating func finish() {
        if inBin > 0 { closeBin() }
    }

    private mutating func scan(_ s: UnsafeBufferPointer<Int16>, from: Int, count: Int, channel: Int, into out: Int) {
        var lo = mins[out], hi = maxs[out]
        var sq = 0.0
        let c = inputChannels
        var i = from * c + channel
        let end = (from + count) * c
        if mode == .rms {
            while i < end { let v = Int32(s[i]); lo = min(lo, v); hi = max(hi, v); sq += Double(v * v); i += c }
        } else {
            while i < end { let v = Int32(s[i]); lo = min(lo, v); hi = max(hi, v); i += c }
        }
        mins[out] = lo
        maxs[out] = hi
        squares[out] += sq
    }

    private mutating func scanCombined(_ s: UnsafeBufferPointer<Int16>, from: Int, count: Int) {
        var lo = mins[0], hi = maxs[0]
        var sq = 0.0
        let c = inputChannels
        let c32 = Int32(c)
        for f in from..<(from + count) {
            var sum: Int32 = 0
            let base = f * c
            for ch in 0..<c { sum += Int32(s[base + ch]) }
            let v = sum / c32  // truncates toward zero, like C
            lo = min(lo, v)
            hi = max(hi, v)
            if mode == .rms { sq += Double(v * v) }
        }
        mins[0] = lo
        maxs[0] = hi
        squares[0] += sq
    }

    private mutating func closeBin() {
        for ch in 0..<outputChannels {
            switch mode {
            case .minmax:
                data.append(Int16(mins[ch]))
                data.append(Int16(maxs[ch]))
            case .maxabs:
                let v = Int16(min(32767, max(abs(mins[ch]), abs(maxs[ch]))))
                data.append(-v)
                data.append(v)
            case .rms:
                let v = Int16(min(32767, (squares[ch] / Double(inBin)).squareRoot().rounded()))
                data.append(-v)
                data.append(v)
            }
            mins[ch] = .max
            maxs[ch] = .min
            squares[ch] = 0
        }
        inBin = 0
    }
}

/// Waveform data in the BBC audiowaveform formats that peaks.js reads.
public struct WaveformData: Sendable, Equatable {
    public var sampleRate: Int
    public var samplesPerPixel: Int
    public var channels: Int
    /// 8 or 16.
    public var bits: Int
    /// For each bin, for each channel: min then max, 16-bit (scaled to 8-bit when written).
    public var data: [Int16]

    public init(sampleRate: Int, samplesPerPixel: Int, channels: Int, bits: Int, data: [Int16]) {
        self.sampleRate = sampleRate
        self.samplesPerPixel = samplesPerPixel
        self.channels = channels
        self.bits = bits
        self.data = data
    }

    /// Pairs per channel.
    public var length: Int { data.count / (2 * channels) }

    /// Values as written: 16-bit, or 8-bit by truncating division by 256 (not a shift).
    public var writtenValues: [Int] { data.map { bits == 8 ? Int($0) / 256 : Int($0) } }

    /// One line, no spaces, keys in audiowaveform's order, and a newline.
    public var json: String {
        var s = "{\"version\":2,\"channels\":\(channels),\"sample_rate\":\(sampleRate),\"samples_per_pixel\":\(samplesPerPixel),"
        s += "\"bits\":\(bits),\"length\":\(length),\"data\":["
        s += writtenValues.map(String.init).joined(separator: ",")
        return s + "]}\n"
    }

    /// The binary .dat format, little-endian: version 1 for one channel, 2 (with a channel
    /// count) for more.
    public var dat: [UInt8] {
        var out: [UInt8] = []
        func i32(_ v: Int) { withUnsafeBytes(of: Int32(v).littleEndian) { out += $0 } }
        i32(channels == 1 ? 1 : 2)
        i32(bits == 8 ? 1 : 0)
        i32(sampleRate)
        i32(samplesPerPixel)
        i32(length)
        if channels > 1 { i32(channels) }
        for v in writtenValues {
            if bits == 8 {
                out.append(UInt8(bitPattern: Int8(v)))
            } else {
                withUnsafeBytes(of: Int16(v).littleEndian) { out += $0 }
            }
        }
        return out
    }
}
