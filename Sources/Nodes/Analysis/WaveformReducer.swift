import CKernels
import GraphKitCore
import GraphKitRuntime
import MediaContainers

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
    public enum Mode: String, Sendable, CaseIterable, ParameterEnum {
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
        if inputChannels == 2, !splitChannels, mode != .rms {
            addStereoCombined(samples)
            return
        }
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

    /// Adds interleaved float samples, converted as audiowaveform does (`Int16(f × 32767)`,
    /// truncating toward zero), a block at a time so that memory stays fixed.
    public mutating func add(_ samples: UnsafeBufferPointer<Float>) {
        let block = 4096 * inputChannels
        var converted = [Int16](repeating: 0, count: block)
        var start = 0
        while start < samples.count {
            let n = min(block, samples.count - start)
            converted.withUnsafeMutableBufferPointer { out in
                Self.convert(UnsafeBufferPointer(rebasing: samples[start..<(start + n)]), into: out)
            }
            converted.withUnsafeBufferPointer { add(UnsafeBufferPointer(rebasing: $0[0..<n])) }
            start += n
        }
    }

    static func convert(_ input: UnsafeBufferPointer<Float>, into out: UnsafeMutableBufferPointer<Int16>) {
        let n = input.count
        var i = 0
        let lo = SIMD8<Float>(repeating: -32768), hi = SIMD8<Float>(repeating: 32767)
        if let src = input.baseAddress, let dst = out.baseAddress {
            while i + 8 <= n {
                let v = UnsafeRawPointer(src + i).loadUnaligned(as: SIMD8<Float>.self) * 32767
                let t = SIMD8<Int32>(v.clamped(lowerBound: lo, upperBound: hi), rounding: .towardZero)
                UnsafeMutableRawPointer(dst + i).storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: t), as: SIMD8<Int16>.self)
                i += 8
            }
        }
        while i < n {
            out[i] = Int16(max(-32768, min(32767, (input[i] * 32767).rounded(.towardZero))))
            i += 1
        }
    }

    /// Closes the last, partial bin.
    public mutating func finish() {
        if inBin > 0 { closeBin() }
    }

    /// Folds the finished bins past the first `count` into bin `count - 1`, so there are at
    /// most `count`: each channel's lowest low and highest high, exact for minmax and maxabs
    /// (whose pairs are (−v, v)); for rms the larger value. For a width computed from a stream's
    /// stated length, which its decoded samples can pass by a bin.
    public mutating func keepBins(_ count: Int) {
        let width = 2 * outputChannels
        guard count >= 1, binCount > count else { return }
        let last = (count - 1) * width
        for extra in count..<binCount {
            let at = extra * width
            for ch in 0..<outputChannels {
                data[last + 2 * ch] = min(data[last + 2 * ch], data[at + 2 * ch])
                data[last + 2 * ch + 1] = max(data[last + 2 * ch + 1], data[at + 2 * ch + 1])
            }
        }
        data.removeSubrange((count * width)...)
    }

    private mutating func scan(_ s: UnsafeBufferPointer<Int16>, from: Int, count: Int, channel: Int, into out: Int) {
        if mode != .rms, inputChannels <= 2, count >= 32 {
            let (lo, hi) = Self.vectorMinMax(s, from: from, count: count, channels: inputChannels, channel: channel)
            mins[out] = min(mins[out], lo)
            maxs[out] = max(maxs[out], hi)
            return
        }
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

    /// The common case (stereo combined, minmax or maxabs), a buffer at a time: the open bin's
    /// range stays in locals, and the bins this buffer closes, a number known in advance, are
    /// written straight into room made for them at the end of `data`.
    private mutating func addStereoCombined(_ s: UnsafeBufferPointer<Int16>) {
        let frames = s.count / 2
        let closing = (inBin + frames) / samplesPerPixel
        var written = data.count
        data.append(contentsOf: repeatElement(0, count: 2 * closing))
        var lo = mins[0], hi = maxs[0], filled = inBin
        let (spp, maxabs) = (samplesPerPixel, mode == .maxabs)
        data.withUnsafeMutableBufferPointer { out in
            var f = 0
            while f < frames {
                let n = min(spp - filled, frames - f)
                let (l, h) = Self.vectorStereoCombined(s, from: f, count: n)
                lo = min(lo, l)
                hi = max(hi, h)
                f += n
                filled += n
                if filled == spp {
                    if maxabs { (lo, hi) = Self.maxabsPair(lo, hi) }
                    out[written] = Int16(lo)
                    out[written + 1] = Int16(hi)
                    written += 2
                    (lo, hi, filled) = (.max, .min, 0)
                }
            }
        }
        (mins[0], maxs[0], inBin) = (lo, hi, filled)
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

    /// Min and max of one channel of mono or stereo frames, 16 frames at a time.
    static func vectorMinMax(_ s: UnsafeBufferPointer<Int16>, from: Int, count: Int, channels: Int, channel: Int) -> (Int32, Int32) {
        let base = UnsafeRawPointer(s.baseAddress! + from * channels)
        var lo = SIMD16<Int16>(repeating: .max), hi = SIMD16<Int16>(repeating: .min)
        var f = 0
        if channels == 1 {
            while f + 16 <= count {
                let v = base.loadUnaligned(fromByteOffset: f * 2, as: SIMD16<Int16>.self)
                lo = pointwiseMin(lo, v)
                hi = pointwiseMax(hi, v)
                f += 16
            }
        } else {
            while f + 16 <= count {
                let a = base.loadUnaligned(fromByteOffset: f * 4, as: SIMD16<Int16>.self)
                let b = base.loadUnaligned(fromByteOffset: f * 4 + 32, as: SIMD16<Int16>.self)
                let v = channel == 0 ? SIMD16(lowHalf: a.evenHalf, highHalf: b.evenHalf) : SIMD16(lowHalf: a.oddHalf, highHalf: b.oddHalf)
                lo = pointwiseMin(lo, v)
                hi = pointwiseMax(hi, v)
                f += 16
            }
        }
        var l = Int32(lo.min()), h = Int32(hi.max())
        while f < count {
            let v = Int32(s[(from + f) * channels + channel])
            l = min(l, v)
            h = max(h, v)
            f += 1
        }
        return (l, h)
    }

    /// Min and max of (left + right) / 2, truncating toward zero: with AVX2's 32-bit min and max
    /// where the CPU has them, else SSE2's 16-bit ones on the halves (CKernels).
    static func vectorStereoCombined(_ s: UnsafeBufferPointer<Int16>, from: Int, count: Int) -> (Int32, Int32) {
        var lo: Int32 = 0, hi: Int32 = 0
        gk_stereo_half_sum_range(s.baseAddress! + from * 2, count, &lo, &hi)
        return (lo, hi)
    }

    /// A bin's range as maxabs writes it: (−v, v) for its largest magnitude, at most 32767.
    @inline(__always) static func maxabsPair(_ lo: Int32, _ hi: Int32) -> (Int32, Int32) {
        let v = min(32767, max(abs(lo), abs(hi)))
        return (-v, v)
    }

    private mutating func closeBin() {
        for ch in 0..<outputChannels {
            switch mode {
            case .minmax:
                data.append(Int16(mins[ch]))
                data.append(Int16(maxs[ch]))
            case .maxabs:
                let (lo, hi) = Self.maxabsPair(mins[ch], maxs[ch])
                data.append(Int16(lo))
                data.append(Int16(hi))
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
    public var writtenValues: [Int] { data.map(value) }

    @inline(__always) func value(_ v: Int16) -> Int { bits == 8 ? Int(v) / 256 : Int(v) }

    /// One line, no spaces, keys in audiowaveform's order, and a newline.
    public var json: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var all: [UInt8] = []
        encodeJSON { all += $0 }
        return all
    }

    /// The binary .dat format, little-endian: version 1 for one channel, 2 (with a channel
    /// count) for more.
    public var dat: [UInt8] {
        var all: [UInt8] = []
        encodeDat { all += $0 }
        return all
    }

    /// Hands the JSON text out in chunks of about 64 KB: no string per value, and a long
    /// file's waveform costs its bins and one chunk, however long the text.
    public func encodeJSON<E: Error>(_ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        var head = Array("{\"version\":2,\"channels\":\(channels),\"sample_rate\":\(sampleRate),\"samples_per_pixel\":\(samplesPerPixel),".utf8)
        head += Array("\"bits\":\(bits),\"length\":\(length),\"data\":[".utf8)
        try flush(head)
        // Digits go straight into a fixed chunk (no per-byte capacity checks), written out
        // whenever fewer than one number's worth of room is left.
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Self.chunk + 16)
        defer { buffer.deallocate() }
        var n = 0
        let base = UnsafeMutableRawPointer(buffer.baseAddress!)
        try Self.digitQuads.withUnsafeBufferPointer { (quads) throws(E) in
            for (i, raw) in data.enumerated() {
                if i > 0 { buffer[n] = UInt8(ascii: ","); n &+= 1 }
                var v = value(raw)
                if v < 0 { buffer[n] = UInt8(ascii: "-"); n &+= 1; v = -v }
                // At most 5 digits (32768): a leading digit above 9999, then up to four from the
                // table as one 4-byte store (the bytes past the number are overwritten next).
                if v > 9999 {
                    let (high, low) = v.quotientAndRemainder(dividingBy: 10000)
                    buffer[n] = UInt8(truncatingIfNeeded: 48 &+ high)
                    base.storeBytes(of: quads[low].littleEndian, toByteOffset: n &+ 1, as: UInt32.self)
                    n &+= 5
                } else {
                    let digits = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4
                    base.storeBytes(of: (quads[v] >> UInt32(8 &* (4 &- digits))).littleEndian, toByteOffset: n, as: UInt32.self)
                    n &+= digits
                }
                if n >= Self.chunk {
                    try flush(Array(buffer[0..<n]))
                    n = 0
                }
            }
        }
        let tail = Array("]}\n".utf8)
        for b in tail { buffer[n] = b; n += 1 }
        try flush(Array(buffer[0..<n]))
    }

    public func encodeDat<E: Error>(_ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        var out: [UInt8] = []
        out.reserveCapacity(Self.chunk + 64)
        func i32(_ v: Int) { withUnsafeBytes(of: Int32(v).littleEndian) { out += $0 } }
        i32(channels == 1 ? 1 : 2)
        i32(bits == 8 ? 1 : 0)
        i32(sampleRate)
        i32(samplesPerPixel)
        i32(length)
        if channels > 1 { i32(channels) }
        for raw in data {
            let v = value(raw)
            if bits == 8 {
                out.append(UInt8(bitPattern: Int8(v)))
            } else {
                let u = UInt16(bitPattern: Int16(v))
                out.append(UInt8(u & 0xFF))
                out.append(UInt8(u >> 8))
            }
            if out.count >= Self.chunk {
                try flush(out)
                out.removeAll(keepingCapacity: true)
            }
        }
        try flush(out)
    }

    static let chunk = 64 << 10
    /// "0000" to "9999", each as the 4 ASCII bytes of one word, the first digit in the lowest
    /// byte (stored little-endian, so a right shift drops leading zeros).
    static let digitQuads: [UInt32] = (0..<10_000).map { (n: Int) -> UInt32 in
        let ascii = { (digit: Int) in UInt32(48 + digit) }
        return ascii(n / 1000) | ascii(n / 100 % 10) << 8 | ascii(n / 10 % 10) << 16 | ascii(n % 10) << 24
    }
}
