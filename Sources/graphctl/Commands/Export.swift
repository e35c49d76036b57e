import ArgumentParser
import Assets
import Dispatch
import Glibc
import GraphKit

/// `graphctl export IN OUT --preset P [--start S --duration D] [--normalize [--target LUFS]
/// [--true-peak dBTP]]`: an asset exported as `AVAssetExportSession` exports it
/// (``AssetExportSession``): a preset, a time range, the index first, and GraphKit's own
/// loudness normalization (``LoudnessNormalization``). A signal cancels it: nothing is left at OUT.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export a media file with an AVFoundation preset (passthrough, 1280x720, appleM4A…), optionally a time range of it.",
        discussion: """
            Presets: passthrough (the samples as stored, never re-encoded: a range starts at the video \
            keyframe at or before its start), highestQuality, 1920x1080, 1280x720, 640x480 (H.264 fitted \
            in the box, aspect kept, never enlarged; AAC 128 kb/s), appleM4A (the sound alone, AAC in M4A). \
            OUT must not exist; its extension gives the file type (.mp4, .mov, .m4a). The index goes \
            before the media unless --no-faststart is given.

            --normalize brings the sound to a loudness (EBU R128) in two runs: the first measures the \
            range's sound alone, the second exports it through effect.normalize at the gain found, with \
            a true-peak limiter only where needed, between the decoder and the AAC encoder: \
            --target LUFS (default -16) under --true-peak dBTP (default -1), the ranges of graphctl \
            normalize. Not with passthrough, which copies the sound as stored.

            Exit status: 0 the file is complete; 64 a preset, a range or an extension that cannot be \
            used, or a --start or --duration that is not a number of seconds from 0 to 31536000 \
            (nan, inf and 1e400 are none), --normalize with passthrough or an input without sound, \
            --target or --true-peak out of range or without --normalize (nothing written); 66 the input cannot be read; 70 the export failed; 73 OUT exists \
            or cannot be written; 130 cancelled (Ctrl-C: nothing is left at OUT).
            """
    )

    @Argument(help: "The media file to export.")
    var input: String

    @Argument(help: "The file to write (.mp4, .mov or .m4a); it must not exist.")
    var output: String

    @Option(help: "passthrough, highestQuality, 1920x1080, 1280x720, 640x480 or appleM4A.")
    var preset: String

    /// The longest time --start and --duration take (a year): beyond any recording, and far
    /// within what a media clock counts.
    static let longest = 31_536_000.0

    @Option(help: "Seconds from the input's start where the export starts (0 to 31536000).",
            transform: NumberArgument.seconds("--start", in: 0...longest))
    var start: Double?

    @Option(help: "Seconds exported (default: to the end; at most 31536000).",
            transform: NumberArgument.seconds("--duration", in: 0...longest))
    var duration: Double?

    @Flag(help: "Normalize the sound's loudness (EBU R128, two passes) before it is encoded.")
    var normalize = false

    /// --target and --true-peak, with --normalize.
    @OptionGroup var loudness: LoudnessOptions
    var target: Double? { loudness.target }
    var truePeak: Double? { loudness.truePeak }

    @Flag(name: .customLong("no-faststart"), help: "Write the index after the media.")
    var noFaststart = false

    @Flag(help: "No progress on standard error.")
    var quiet = false

    static let presets: [String: ExportPreset] = [
        "passthrough": .passthrough, "highestQuality": .highestQuality, "1920x1080": .hd1920x1080,
        "1280x720": .hd1280x720, "640x480": .sd640x480, "appleM4A": .appleM4A, "mediumQuality": .mediumQuality,
        "lowQuality": .lowQuality, "3840x2160": .uhd3840x2160, "960x540": .qhd960x540, "hevcHighestQuality": .hevcHighestQuality,
        "hevc1920x1080": .hevc1920x1080, "hevc3840x2160": .hevc3840x2160,
    ]

    func run() throws {
        guard let preset = Self.presets[preset] ?? ExportPreset(rawValue: preset) else {
            throw report(GraphError(.usage, at: "--preset", "\"\(preset)\" is not a preset: choose one of \(Self.presets.keys.sorted().joined(separator: ", "))"))
        }
        if !normalize, let option = target != nil ? "--target" : truePeak != nil ? "--true-peak" : nil {
            throw report(GraphError(.usage, at: option, "\(option) is a setting of --normalize: give --normalize too"))
        }
        if normalize, preset == .passthrough {
            throw report(GraphError(.usage, at: "--normalize", "--normalize changes the sound, and passthrough copies it as stored: pick a preset that encodes (highestQuality, 1280x720, appleM4A…)"))
        }
        let type: FileType
        switch output.split(separator: ".").last.map({ $0.lowercased() }) {
        case "mp4"?, "m4v"?: type = .mp4
        case "mov"?: type = .mov
        case "m4a"?: type = .m4a
        default: throw report(GraphError(.usage, at: output, "\"\(output)\" does not end in .mp4, .mov or .m4a: its extension gives the file type"))
        }
        // The input by its bytes (a name that is not UTF-8 too); messages show it escaped.
        do { try InputPath.checkOutput(output, option: "OUT") } catch { throw report(error) }
        let source = InputPath(argument: input)
        // Its descriptor stays open until the export is done (the session reads /proc/self/fd/N).
        defer { withExtendedLifetime(source) {} }
        guard let sourcePath = source.path else {
            throw report(GraphError(.inputUnreadable, "cannot read \"\(source.shown)\": \(String(cString: strerror(source.openError)).lowercased())"))
        }
        let session: AssetExportSession
        do {
            let asset = try Asset(path: sourcePath)
            session = try AssetExportSession(asset: asset, preset: preset)
            session.outputPath = output
            session.outputFileType = type
            session.shouldOptimizeForNetworkUse = !noFaststart
            if normalize {
                session.loudnessNormalization = LoudnessNormalization(targetLUFS: target, truePeakDBTP: truePeak)
            }
            if start != nil || duration != nil {
                let from = MediaTime(seconds: start ?? 0)
                session.timeRange = MediaTimeRange(start: from, duration: duration.map { MediaTime(seconds: $0) } ?? (asset.duration - from))
            }
        } catch {
            throw report(source.named(error))
        }
        InterruptSignals.shared.handle { _ in session.cancelExport() }
        defer { InterruptSignals.shared.stopHandling() }
        let outcome = Guarded<GraphError?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(GraphError) {
                try await session.export()
            } catch {
                outcome.withLock { $0 = error }
            }
            done.signal()
        }
        var shown = -1
        while done.wait(timeout: .now() + .milliseconds(250)) == .timedOut {
            let percent = Int(session.progress * 100)
            if !quiet, percent != shown {
                writeStandardError("\rexporting: \(percent)%")
                shown = percent
            }
        }
        let failure = outcome.withLock { $0 }
        if !quiet, failure == nil { writeStandardError("\rexporting: 100%") }
        if !quiet, shown >= 0 || failure == nil { writeStandardError("\n") }
        if let failure { throw report(source.named(failure)) }
    }
}
