import ArgumentParser
import FoundationEssentials
import Glibc
import Dispatch
import GraphKit
import Nodes

@main
struct GraphCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "graphctl",
        abstract: "Run, check and explain GraphKit media graphs.",
        discussion: """
            Exit status: 0 success; 64 usage error; 65 invalid graph; 66 an input cannot be read;
            69 a GStreamer plugin is missing; 70 the run failed; 73 an output cannot be written;
            75 a camera or microphone is busy (another program holds it); 78 a GraphKit plugin
            cannot be used; 130 cancelled.
            Node types from plugins: --plugin PATH, or folders in GRAPHKIT_PLUGIN_PATH.
            """,
        version: "graphctl \(GraphKitInfo.version) (GStreamer \(GraphKitInfo.gstreamerVersion))",
        subcommands: [Run.self, Batch.self, Validate.self, Inspect.self, Probe.self, Analyze.self, Normalize.self, Export.self, HLS.self, ThumbnailCommand.self, Devices.self, Dot.self, Schema.self, BatchWorker.self]
    )

    /// `graphctl` alone: the help, on standard error, and the status of a usage error (64), as
    /// for any other missing argument.
    func run() throws {
        printError(GraphCtl.helpMessage())
        throw ExitCode(64)
    }

    /// ArgumentParser's own main, with one addition: `run` starts GStreamer on the other core
    /// while the options and the graph are read (5 ms of a 10 ms start), and no exit happens
    /// while that start is under way.
    static func main() {
        // While the process has one thread: libcamera (gstreamer1.0-libcamera's provider, asked
        // by any device lookup) logs INFO and WARN lines on standard error otherwise. The
        // user's own setting stands.
        setenv("LIBCAMERA_LOG_LEVELS", "*:ERROR", 0)
        let command = CommandLine.arguments.dropFirst().first ?? ""
        // Before anything else: a signal from here on ends the process with 130, removing what
        // it made, until the command says what a signal means (workers ignore them).
        if command != BatchWorker.name { InterruptSignals.shared.install() }
        let startsGStreamer = ["run", "analyze", BatchWorker.name].contains(command)
        if startsGStreamer {
            GStreamer.keepFrameMemory()  // before any thread allocates
            GStreamer.beginInitializing()
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if startsGStreamer { GStreamer.waitUntilInitialized() }
            if startsGStreamer { GStreamer.deinitialize() }
            exit(withError: error)
        }
        // Like gst-launch-1.0: every run has ended and been released by now.
        if startsGStreamer { GStreamer.deinitialize() }
    }
}

/// Prints a GraphKit error the way every command does, and gives its exit status. Each line's
/// control characters are escaped (``TerminalText``): a message quotes names and text that come
/// from files and arguments, which must not drive the terminal or forge a line.
func report(_ error: GraphError, file: String? = nil) -> ExitCode {
    for line in describe(error, file: file) { printError("error: " + TerminalText.escaped(line)) }
    // GStreamer's debug text helps a developer, not a user: only with --verbose.
    if verboseOutput, let cause = error.cause, !cause.isEmpty { printError("  cause: \(cause)") }
    return ExitCode(error.code.exitStatus)
}

/// A GraphKit error's problems as `report` prints them (without `error: `): each with its place,
/// after the graph file's name when the place is inside the file.
func describe(_ error: GraphError, file: String? = nil) -> [String] {
    error.problems.map { problem in
        var line = ""
        if let file, let location = problem.location, !location.hasPrefix(file), !location.hasPrefix("--"),
           !location.hasPrefix("node \"") {
            line += "\(file): "
        }
        return line + problem.description
    }
}

/// Set by `run --verbose`: error causes are printed, and the log shows debug messages.
nonisolated(unsafe) var verboseOutput = false

/// Routes GraphKit's log (swift-log) to standard error: warnings by default (GStreamer's, with
/// the node id), errors only with --quiet, everything down to debug with --verbose.
func bootstrapLogging(verbose: Bool, quiet: Bool) {
    verboseOutput = verbose
    GraphKitLogging.bootstrapStandardError(level: verbose ? .debug : quiet ? .error : .warning)
}

func printError(_ text: String) {
    writeStandardError(text + "\n")
}

func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
        offset += n
    }
}

/// `value` with `decimals` digits after the point, as printf's %.Nf (no Foundation needed).
func fixed(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
    let scale = (0..<decimals).reduce(1.0) { r, _ in r * 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale), fraction = Int(scaled.truncatingRemainder(dividingBy: scale))
    let digits = String(fraction)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    return decimals == 0 ? "\(sign)\(whole)" : "\(sign)\(whole)." + String(repeating: "0", count: decimals - digits.count) + digits
}
