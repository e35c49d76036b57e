import Testing
import GraphKitCore

/// URLs as messages show them: credentials removed, the rest as it was.
@Suite struct RedactedURLTests {
    @Test func userInformationAndSecretQueryItemsAreRemoved() {
        #expect(RedactedURL.text("rtsp://admin:hunter2@10.0.0.5:554/stream1") == "rtsp://10.0.0.5:554/stream1")
        #expect(RedactedURL.text("rtsp://user@cam/live") == "rtsp://cam/live")
        #expect(RedactedURL.text("srt://h:9000?mode=caller&passphrase=abc&latency=200") == "srt://h:9000?mode=caller&passphrase=…&latency=200")
        #expect(RedactedURL.text("rtmp://a.example/app?streamKey=x&token=y#f") == "rtmp://a.example/app?streamKey=…&token=…#f")
        #expect(RedactedURL.text("srt://127.0.0.1:9000") == "srt://127.0.0.1:9000")
        #expect(RedactedURL.text("not a url") == "not a url")
        // An '@' in the path is not user information.
        #expect(RedactedURL.text("http://h/a@b") == "http://h/a@b")
    }

    @Test func everyURLInATextIsScrubbed() {
        #expect(RedactedURL.scrub("Could not open rtsp://u:p@cam:554/x (timeout); also \"rtmp://k:s@h/app\"")
                == "Could not open rtsp://cam:554/x (timeout); also \"rtmp://h/app\"")
        #expect(RedactedURL.scrub("no url here") == "no url here")
    }
}
