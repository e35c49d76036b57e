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

    /// An RTMP URL as sink.rtmp's messages quote it: its server and application, never its key.
    @Test func aStreamKeyIsCutFromTheApplicationOn() {
        #expect(RedactedURL.withoutKey("rtmp://127.0.0.1:1935/live/s3cret") == "rtmp://127.0.0.1:1935/live/…")
        #expect(RedactedURL.withoutKey("rtmps://u:p@h/app/key/more?x=1") == "rtmps://h/app/…")
        #expect(RedactedURL.withoutKey("rtmp://h/s3cret") == "rtmp://h/…")
        #expect(RedactedURL.withoutKey("http://h/app/s3cret") == "http://h/app/…")
        #expect(RedactedURL.withoutKey("rtmp://h?key=s3cret&x=1") == "rtmp://h/…")
        #expect(RedactedURL.withoutKey("rtmp://h/") == "rtmp://h/")
        #expect(RedactedURL.withoutKey("rtmp://h:1935") == "rtmp://h:1935")
        #expect(RedactedURL.withoutKey("h/live/s3cret") == "h/live/…")
        #expect(RedactedURL.withoutKey("s3cret") == "s3cret")
        // Quoted where a malformed URL is refused.
        let format = StringFormat(expected: "rtmp://…", shown: .urlWithoutKey)
        #expect(format.quoted("ftp://h:21/live/s3cret") == "\"ftp://h:21/live/…\"")
    }

    @Test func everyURLInATextIsScrubbed() {
        #expect(RedactedURL.scrub("Could not open rtsp://u:p@cam:554/x (timeout); also \"rtmp://k:s@h/app\"")
                == "Could not open rtsp://cam:554/x (timeout); also \"rtmp://h/app\"")
        #expect(RedactedURL.scrub("no url here") == "no url here")
    }
}
