import Testing
import GraphKit
@testable import Nodes

/// The WebVTT index, exact.
@Suite struct WebVTTIndexTests {
    @Test func timestampsAreHoursMinutesSecondsMilliseconds() {
        #expect(WebVTTIndex.timestamp(.zero) == "00:00:00.000")
        #expect(WebVTTIndex.timestamp(MediaTime(seconds: 3723.4567)) == "01:02:03.457")
        #expect(WebVTTIndex.timestamp(MediaTime(seconds: 10)) == "00:00:10.000")
        #expect(WebVTTIndex.timestamp(MediaTime(seconds: 0.05)) == "00:00:00.050")
    }

    @Test func oneCueATileCoveringToTheEnd() {
        let sheet = SpriteSheet(count: 3, columns: 2, tileWidth: 160, tileHeight: 90)
        let text = WebVTTIndex.text(times: [.zero, MediaTime(seconds: 10), MediaTime(seconds: 20)], end: MediaTime(seconds: 25.5),
                                    sheet: sheet, spriteURL: "sprite.jpg")
        #expect(text == """
            WEBVTT

            00:00:00.000 --> 00:00:10.000
            sprite.jpg#xywh=0,0,160,90

            00:00:10.000 --> 00:00:20.000
            sprite.jpg#xywh=160,0,160,90

            00:00:20.000 --> 00:00:25.500
            sprite.jpg#xywh=0,90,160,90

            """)
    }
}
