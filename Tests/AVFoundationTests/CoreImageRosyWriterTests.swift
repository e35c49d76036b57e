import CoreImage
import Testing

private typealias T = CoreImageTestImages

/// RosyWriter's CoreImage renderer, written for Apple's platforms (AppleCorpus), run here.
@Suite struct CoreImageRosyWriterTests {
    @Test func rosyFilterDropsGreen() throws {
        let renderer = RosyCIFilterRenderer()
        renderer.prepareForInput(width: 33, height: 9)
        let input = T.varied(33, 9, opaque: true)
        let out = try #require(renderer.copyRenderedPixelBuffer(input))
        #expect(CVPixelBufferGetPixelFormatType(out) == kCVPixelFormatType_32BGRA)
        #expect(T.pixels(out) == T.pixels(input).map { [$0[0], 0, $0[2], $0[3]] })
        renderer.reset()
        #expect(renderer.copyRenderedPixelBuffer(input) == nil)
    }

    @Test func channelSwapAsTheIssueWritesIt() {
        let input = T.varied(21, 5, opaque: true), out = T.blank(21, 5)
        RosyCIFilterRenderer().swapped(input, into: out)
        #expect(T.pixels(out) == T.pixels(input).map { [$0[2], $0[1], $0[0], $0[3]] })
    }

    @Test func typedChainRenders() throws {
        let input = T.varied(24, 16, opaque: true)
        let image = try #require(RosyCIFilterRenderer().graded(input))
        #expect(image.extent == CGRect(x: 0, y: 0, width: 24, height: 16))
        let out = T.blank(24, 16)
        CIContext().render(image, to: out)
        // Opaque throughout (clamped before the blur), and sepia-toned: red above blue.
        #expect(T.pixels(out).allSatisfy { $0[3] == 255 && $0[0] >= $0[2] })
    }
}
