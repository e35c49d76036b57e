import ArgumentParser
import Assets
import Glibc
import GraphKit
import Nodes

/// `graphctl hls SOURCE FOLDER`: an MP4 packaged for HTTP Live Streaming without re-encoding
/// (``HLSPackager``): FOLDER/playlist.m3u8, and init.mp4 and fragmented-MP4 segments, each
/// starting on a key frame, in a generation folder beside it. What `ffmpeg -i SOURCE -c copy -f hls -hls_segment_type fmp4
/// -hls_playlist_type vod FOLDER/playlist.m3u8` writes.
struct HLS: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hls",
        abstract: "Package an MP4 for HLS (fragmented-MP4 segments and a VOD playlist) without re-encoding.",
        discussion: """
            Each segment starts on a key frame: at the first one at or after each multiple of \
            --segment-duration. The packets are copied, so the video's key frames must be at most \
            --segment-duration apart: a source whose key frames are farther apart is refused (64) \
            before anything is written. The segments go into a generation folder of their own \
            (FOLDER/playlist.3f9a0c61d2e4/) and the playlist is exchanged with an earlier one last, \
            in one rename; the earlier package's generation is removed only then. A failure or a \
            signal removes the new generation and leaves an earlier package as it was. A playlist \
            that would be the source is refused (65). A --segment-duration outside 0.5 to 60 \
            seconds (or not a finite number) is refused (64) before the source is read.
            """
    )

    @Argument(help: "The MP4 (or MOV, M4A) to package.")
    var source: String

    @Argument(help: "The folder to write into (made if missing).")
    var folder: String

    @Option(help: "Seconds each segment aims at, from 0.5 to 60.",
            transform: NumberArgument.seconds("--segment-duration", in: HLSSinkNode.segmentDurations))
    var segmentDuration: Double = 6

    @Option(help: "The playlist's file name.")
    var playlist = "playlist.m3u8"

    @Flag(help: "Print nothing on success.")
    var quiet = false

    func run() throws {
        // The source by its bytes (a name that is not UTF-8 too); messages show it escaped.
        do { try InputPath.checkOutput(folder, option: "FOLDER") } catch { throw report(error) }
        let input = InputPath(argument: source)
        // Its descriptor stays open until the packaging is done (it reads /proc/self/fd/N).
        defer { withExtendedLifetime(input) {} }
        guard let sourcePath = input.path else {
            throw report(GraphError(.inputUnreadable, "cannot package \"\(input.shown)\" for HLS: \(String(cString: strerror(input.openError)).lowercased())"))
        }
        let packager = HLSPackager(source: sourcePath, folder: folder, segmentDuration: segmentDuration, playlistName: playlist)
        // A signal stops it before its next segment (milliseconds away): it removes what it wrote.
        InterruptSignals.shared.handle { _ in packager.cancel() }
        defer { InterruptSignals.shared.stopHandling() }
        let done: HLSPackager.Report
        do throws(GraphError) {
            done = try packager.package()
        } catch {
            throw report(input.named(error))
        }
        if !quiet {
            let total = done.segments.reduce(0) { $0 + $1.duration }
            print("\(folder)/\(done.playlist): \(done.segments.count) segments, \((total * 1000).rounded() / 1000) s, target duration \(done.targetDuration) s")
        }
    }
}
