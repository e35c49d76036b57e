import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphs/transcode-hevc.json` on a file made by GStreamer: validated, run, and the result
/// checked by ffprobe (an independent reader).
@Suite(.media) struct TranscodeHEVCTests {
    @Test(.timeLimit(.minutes(10))) func transcodesToHvc1AndOpusWithEveryFrame() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("in.mp4").path, output = folder.appendingPathComponent("out.mp4").path
        try TestMedia.gstLaunch("videotestsrc num-buffers=45 pattern=ball ! video/x-raw,width=160,height=120,framerate=30/1 ! x264enc ! mp4mux name=m ! "
                                + "filesink location=\(input) audiotestsrc num-buffers=35 samplesperbuffer=1470 ! audio/x-raw,rate=44100,channels=2 ! "
                                + "avenc_aac aac-ms=0 ! m.")
        let validated = try Graphctl.run("validate", Graphctl.graph("transcode-hevc.json"))
        #expect(validated.status == 0, "\(validated.stderr)")
        let r = try Graphctl.run("run", Graphctl.graph("transcode-hevc.json"), "--set", "src.path=\(input)", "--set", "file.path=\(output)")
        try #require(r.status == 0, "\(r.stderr)")
        let text = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                     "stream=codec_type,codec_name,codec_tag_string,profile,nb_read_frames,sample_rate",
                                                     "-of", "compact=p=0", output])
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.contains("codec_name=hevc") && $0.contains("profile=Main") && $0.contains("codec_type=video")
                                 && $0.contains("codec_tag_string=hvc1") && $0.contains("nb_read_frames=45") }, "\(text)")
        #expect(lines.contains { $0.contains("codec_name=opus") && $0.contains("sample_rate=48000") && $0.contains("codec_type=audio") }, "\(text)")
    }
}
