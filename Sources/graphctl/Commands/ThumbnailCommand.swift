import ArgumentParser
import Glibc
import GraphKit
import Nodes

/// `graphctl thumbnail IN OUT`: one picture of any photo or video, the same command for both, as
/// an upload service makes of every file (``Thumbnail``). A signal stops it at once: nothing is
/// left at OUT, and an earlier file there stays as it was.
struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Make one thumbnail of a photo or a video.",
        discussion: """
            A HEIC, AVIF, WebP, GIF, TIFF or JPEG gives its main picture (the primary image, first \
            frame or first page; a HEIC's own thumbnail when it is at least --size), decoded by \
            libheif, libwebp, giflib, libtiff or libjpeg-turbo in a process of its own and turned \
            upright by its orientation; a PNG is decoded by GStreamer and turned by its EXIF. A \
            movie gives its frame at --at (default a tenth of the way in), turned as shown and HDR \
            tone-mapped to SDR. The picture is scaled \
            down to fit --size × --size (never up) and written as JPEG or PNG by OUT's extension \
            (.jpg, .jpeg, .png), complete or not at all.

            Exit status: 0 written; 64 an option out of its range or OUT's extension not one of \
            these; 65 OUT is IN; 66 IN cannot be read, holds no picture or is damaged (named); 70 \
            the picture could not be taken; 73 OUT cannot be written; 130 cancelled.
            """
    )

    @Argument(help: "The photo or video.")
    var input: String

    @Argument(help: "The picture to write: .jpg, .jpeg or .png.")
    var output: String

    @Option(help: "The thumbnail's longest side, in pixels (1 to 16384).")
    var size = 512

    @Option(help: "A movie's time to take, in seconds (default: a tenth of its length).")
    var at: Double?

    @Option(help: "JPEG quality, 1 to 100.")
    var quality = 85

    func run() throws {
        bootstrapLogging(verbose: false, quiet: true)
        let format: ImageFileFormat
        switch output.split(separator: "/").last?.split(separator: ".").dropFirst().last?.lowercased() {
        case "jpg"?, "jpeg"?: format = .jpeg
        case "png"?: format = .png
        default: throw report(GraphError(.usage, at: "OUT", "\"\(output)\" does not end in .jpg, .jpeg or .png: its extension gives the picture's format"))
        }
        guard (1...16384).contains(size) else { throw report(GraphError(.usage, at: "--size", "a size of \(size): give 1 to 16384 pixels")) }
        guard (1...100).contains(quality) else { throw report(GraphError(.usage, at: "--quality", "a quality of \(quality): give 1 to 100")) }
        if let at, !(at.isFinite && at >= 0) { throw report(GraphError(.usage, at: "--at", "a time of \(at) s: give 0 or more seconds")) }
        do { try InputPath.checkOutput(output, option: "OUT") } catch { throw report(error) }
        let input = InputPath(argument: self.input)
        guard let path = input.path else {
            throw report(GraphError(.inputUnreadable, "cannot read \"\(input.shown)\": \(String(cString: strerror(input.openError)).lowercased())"))
        }
        var inStat = stat(), outStat = stat()
        if stat(path, &inStat) == 0, stat(output, &outStat) == 0, inStat.st_dev == outStat.st_dev, inStat.st_ino == outStat.st_ino {
            throw report(GraphError(.invalidGraph, at: "OUT", "\"\(output)\" is the file read: a thumbnail would replace it"))
        }
        // One signal stops it: the picture under way is abandoned, nothing is left at OUT.
        let signals = InterruptSignals.shared
        signals.handle { _ in InterruptSignals.exitNow(saying: "\ncancelled: nothing was written to \"\(output)\"") }
        defer { signals.stopHandling() }
        do {
            let picture = try Thumbnail.picture(of: path, side: size, at: at)
            try Thumbnail.write(picture, to: output, as: format, quality: quality)
        } catch {
            throw report(input.named(error))
        }
    }
}
