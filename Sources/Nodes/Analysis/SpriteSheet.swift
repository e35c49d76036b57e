import GraphKitCore

/// A grid of equal tiles in one picture, as web video players take their scrubbing previews:
/// tile `i` at column `i % columns`, row `i / columns`, left to right then top to bottom.
/// ``WebVTTIndex`` names each tile's rectangle (`#xywh=`).
package struct SpriteSheet: Sendable, Equatable {
    package let count: Int
    package let columns: Int
    package let tileWidth: Int
    package let tileHeight: Int

    /// `columns` is capped at `count`: a sheet of 3 tiles with 5 columns is 3 wide.
    package init(count: Int, columns: Int, tileWidth: Int, tileHeight: Int) {
        precondition(count > 0 && columns > 0 && tileWidth > 0 && tileHeight > 0)
        self.count = count
        self.columns = min(columns, count)
        self.tileWidth = tileWidth
        self.tileHeight = tileHeight
    }

    package var rows: Int { (count + columns - 1) / columns }
    package var width: Int { columns * tileWidth }
    package var height: Int { rows * tileHeight }

    /// Tile `i`'s rectangle in the sheet, in pixels.
    package func rect(_ i: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        ((i % columns) * tileWidth, (i / columns) * tileHeight, tileWidth, tileHeight)
    }

    /// The sheet of `tiles` (BGRA, packed rows, each tileWidth × tileHeight), black and opaque
    /// where a last row has fewer tiles.
    package func compose(_ tiles: [SampleBuffer]) throws(GraphError) -> SampleBuffer {
        precondition(tiles.count == count)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 3, to: pixels.count, by: 4) { pixels[i] = 255 }
        let rowBytes = tileWidth * 4
        for (i, tile) in tiles.enumerated() {
            guard case .rawVideo(let v)? = tile.format, v.pixelFormat == .bgra, v.width == tileWidth, v.height == tileHeight,
                  tile.byteCount == rowBytes * tileHeight else {
                throw GraphError(.runFailed, "tile \(i) of a sprite sheet is \(tile.format?.description ?? "no picture"), not BGRA \(tileWidth)x\(tileHeight)")
            }
            let r = rect(i)
            let bytes = tile.bytes
            pixels.withUnsafeMutableBytes { dst in
                bytes.withUnsafeBytes { src in
                    for y in 0..<tileHeight {
                        let d = dst.baseAddress! + ((r.y + y) * width + r.x) * 4
                        d.copyMemory(from: src.baseAddress! + y * rowBytes, byteCount: rowBytes)
                    }
                }
            }
        }
        return SampleBuffer(format: .rawVideo(.init(pixelFormat: .bgra, width: width, height: height, frameRate: FrameRate(1))),
                            bytes: pixels, presentationTime: .zero, duration: nil)
    }
}
