import CZlib

/// Writes a PNG a row at a time, compressed with zlib as it goes and handed out in chunks:
/// nothing holds the whole picture. Two kinds of picture: indexed (one bit a pixel, two palette
/// colours: a waveform) and 8-bit RGBA (a video frame: a thumbnail). Each row is stored as its
/// difference from the row above (PNG's "Up" filter): a waveform's rows differ in a few
/// columns, so what zlib sees is mostly zeros, which its fastest level compresses about as well
/// as its default level compresses the rows themselves, several times faster.
package struct PNGEncoder: ~Copyable {
    let width: Int
    let height: Int
    /// Red, green, blue, alpha of each entry; at most two (one bit a pixel). Empty for RGBA.
    let palette: [[UInt8]]
    /// zlib's state keeps a pointer to its stream, so the stream must not move: on the heap.
    private let stream: UnsafeMutablePointer<z_stream>
    /// zlib's output, handed out as an IDAT chunk whenever it fills.
    private let compressed: UnsafeMutableBufferPointer<UInt8> = .allocate(capacity: 64 << 10)
    /// The row being drawn, and the one above it (all 0 above the first).
    private let row: UnsafeMutableBufferPointer<UInt8>
    private let above: UnsafeMutableBufferPointer<UInt8>
    /// What goes to zlib: the filter type (2, Up), then the row less the one above, byte by byte.
    private let filtered: UnsafeMutableBufferPointer<UInt8>

    /// An indexed picture: one bit a pixel, `palette`'s one or two colours.
    package init(width: Int, height: Int, palette: [[UInt8]]) {
        precondition((1...2).contains(palette.count))
        self.init(width: width, height: height, palette: palette, rowBytes: (width + 7) / 8)
    }

    /// An 8-bit RGBA picture: each row is `width` pixels of red, green, blue, alpha.
    package init(rgbaWidth width: Int, height: Int) {
        self.init(width: width, height: height, palette: [], rowBytes: width * 4)
    }

    private init(width: Int, height: Int, palette: [[UInt8]], rowBytes: Int) {
        precondition(width > 0 && height > 0)
        self.width = width
        self.height = height
        self.palette = palette
        row = .allocate(capacity: rowBytes)
        row.initialize(repeating: 0)
        above = .allocate(capacity: rowBytes)
        above.initialize(repeating: 0)
        filtered = .allocate(capacity: 1 + rowBytes)
        filtered.initialize(repeating: 0)
        filtered[0] = 2
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Fails only without memory for zlib's state (a few hundred KB): nothing to recover.
        let status = deflateInit_(stream, Z_BEST_SPEED, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib's deflateInit failed (\(status))")
        emptyOutput()
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        compressed.deallocate()
        for buffer in [row, above, filtered] { buffer.deallocate() }
    }

    /// The signature and the chunks before the image data.
    package func start<E: Error>(_ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        var header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var ihdr = Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height))
        // Bit depth and colour type (1-bit indexed, or 8-bit RGBA); deflate, adaptive filters, no interlace.
        ihdr += (palette.isEmpty ? [8, 6] : [1, 3]) + [0, 0, 0]
        header += Self.chunk("IHDR", ihdr)
        if !palette.isEmpty {
            header += Self.chunk("PLTE", palette.flatMap { $0[0..<3] })
            if palette.contains(where: { $0[3] != 255 }) { header += Self.chunk("tRNS", palette.map { $0[3] }) }
        }
        try flush(header)
    }

    /// The next row: `draw` edits the previous row's pixels into this one's (all 0 before the
    /// first row): indexed, a bit a pixel, the leftmost in the highest bit of the first byte;
    /// RGBA, four bytes a pixel.
    package func appendRow<E: Error>(_ draw: (UnsafeMutableBufferPointer<UInt8>) -> Void,
                                     _ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        draw(row)
        for i in row.indices {
            filtered[i + 1] = row[i] &- above[i]
            above[i] = row[i]
        }
        try compress(filtered.baseAddress!, count: filtered.count, Z_NO_FLUSH, flush)
    }

    /// The rest of the compressed data and the end.
    package func finish<E: Error>(_ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        var nothing: UInt8 = 0
        try compress(&nothing, count: 0, Z_FINISH, flush)
        try flush(Self.chunk("IEND", []))
    }

    /// Feeds `count` bytes to zlib. Its output collects in `compressed` from call to call; each
    /// time that fills it goes out as an IDAT chunk, and so does the rest when finishing.
    private func compress<E: Error>(_ input: UnsafeMutablePointer<UInt8>, count: Int, _ mode: Int32,
                                    _ flush: ([UInt8]) throws(E) -> Void) throws(E) {
        let z = stream
        z.pointee.next_in = input
        z.pointee.avail_in = UInt32(count)
        defer { z.pointee.next_in = nil }
        while true {
            let status = deflate(z, mode)
            // With memory for its state and well-formed calls, deflate cannot fail (Z_BUF_ERROR
            // only says that it had nothing to do).
            precondition(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, "zlib's deflate failed (\(status))")
            let produced = compressed.count - Int(z.pointee.avail_out)
            if z.pointee.avail_out == 0 || (status == Z_STREAM_END && produced > 0) {
                try flush(Self.chunk("IDAT", compressed[0..<produced]))
                emptyOutput()
            }
            if mode == Z_FINISH ? status == Z_STREAM_END : (z.pointee.avail_in == 0 && z.pointee.avail_out > 0) { return }
        }
    }

    private func emptyOutput() {
        stream.pointee.next_out = compressed.baseAddress
        stream.pointee.avail_out = UInt32(compressed.count)
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// Length, type, data, and the CRC-32 of type and data.
    static func chunk<C: Collection<UInt8>>(_ type: String, _ data: C) -> [UInt8] {
        var typed = Array(type.utf8)
        typed += data
        let crc = typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, UInt32($0.count)) }
        return bigEndian(UInt32(data.count)) + typed + bigEndian(UInt32(truncatingIfNeeded: crc))
    }
}
