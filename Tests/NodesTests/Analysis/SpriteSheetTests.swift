import Testing
import GraphKit
@testable import Nodes

/// The sprite sheet's grid, exact: our own arithmetic.
@Suite struct SpriteSheetTests {
    static func tile(_ value: UInt8, width: Int = 2, height: Int = 1) -> SampleBuffer {
        SampleBuffer(format: .rawVideo(.init(pixelFormat: .bgra, width: width, height: height, frameRate: FrameRate(1))),
                     bytes: [UInt8](repeating: value, count: width * height * 4), presentationTime: .zero, duration: nil)
    }

    @Test func tilesGoLeftToRightThenDown() throws {
        let sheet = SpriteSheet(count: 5, columns: 2, tileWidth: 2, tileHeight: 1)
        #expect((sheet.columns, sheet.rows, sheet.width, sheet.height) == (2, 3, 4, 3))
        #expect(sheet.rect(0) == (0, 0, 2, 1) && sheet.rect(1) == (2, 0, 2, 1) && sheet.rect(4) == (0, 2, 2, 1))
        let composed = try sheet.compose((1...5).map { Self.tile(UInt8($0 * 10)) })
        #expect(composed.format == .rawVideo(.init(pixelFormat: .bgra, width: 4, height: 3, frameRate: FrameRate(1))))
        // Row by row, a pixel's four bytes: tiles 10 20 / 30 40 / 50 and opaque black.
        let pixels = stride(from: 0, to: composed.byteCount, by: 4).map { composed.bytes[$0] }
        #expect(pixels == [10, 10, 20, 20, 30, 30, 40, 40, 50, 50, 0, 0])
        #expect(composed.bytes[(2 * 4 + 3) * 4 + 3] == 255)
    }

    @Test func columnsAreCappedAtTheCount() {
        let sheet = SpriteSheet(count: 3, columns: 5, tileWidth: 160, tileHeight: 90)
        #expect((sheet.columns, sheet.rows, sheet.width, sheet.height) == (3, 1, 480, 90))
    }

    @Test func aTileOfAnotherSizeIsRefused() {
        let sheet = SpriteSheet(count: 2, columns: 2, tileWidth: 2, tileHeight: 1)
        #expect { try sheet.compose([Self.tile(1), Self.tile(2, width: 3)]) } throws: { ($0 as? GraphError)?.code == .runFailed }
    }
}
