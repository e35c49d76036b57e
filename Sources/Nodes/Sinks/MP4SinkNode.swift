import Foundation
import GraphKit

/// `sink.mp4`: writes MP4, M4A or MOV, like `AVAssetWriter`.
///
/// Status runs unknown → writing → completed | failed | cancelled. Without fragments the file is
/// written beside the target under a temporary name and renamed when complete, so an existing
/// file is only ever replaced by a complete one and a failed run leaves nothing under the target
/// name. With `fragmentInterval` the file is written under its name from the start, so a crash
/// keeps every fragment written (`movieFragmentInterval`).
///
/// Example:
/// ```json
/// "file": { "type": "sink.mp4", "params": { "path": "out/capture.m4a", "faststart": true } }
/// ```
public final class MP4SinkNode: ElementNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.mp4",
        category: .sink,
        summary: "MP4 / M4A / MOV writer",
        inputs: [
            PortDescriptor("audio", .aac, presence: .optional, help: "AAC audio track"),
            PortDescriptor("video", .h264, presence: .optional, help: "H.264 video track"),
        ],
        parameters: [
            ParameterDescriptor("path", .string, help: "the file to write; missing folders are created"),
            ParameterDescriptor("container", .enumeration(["auto", "mp4", "m4a", "mov"]), default: .string("auto"),
                                help: "file type; auto takes it from the extension (.mov is QuickTime, anything else MP4)"),
            ParameterDescriptor("faststart", .boolean, default: .boolean(true),
                                help: "index (moov) before the media data, for progressive playback"),
            ParameterDescriptor("fragmentInterval", .number(0...3600), default: .number(0),
                                help: "seconds per fragment; 0 writes one unfragmented file"),
        ],
        requiresAnInput: true,
        example: #"{ "type": "sink.mp4", "params": { "path": "out/capture.m4a", "faststart": true } }"#
    )

    let context: NodeContext
    let path: String
    let fragmentInterval: Double
    private let lock = NSLock()
    private var status: OutputReport.Status = .unknown

    public init(context: NodeContext) throws {
        self.context = context
        path = context.parameters.string("path")!
        fragmentInterval = context.parameters.double("fragmentInterval")!
    }

    var target: URL { URL(fileURLWithPath: path) }
    /// Beside the target, under a fixed name, so the next run to the same target removes a file
    /// a killed run left behind.
    var temporary: URL {
        target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).partial")
    }
    var writesInPlace: Bool { fragmentInterval > 0 }

    public var output: OutputReport? {
        lock.lock()
        defer { lock.unlock() }
        return OutputReport(node: context.id, path: path, status: status)
    }

    public func build(in bin: BinBuilder) throws {
        let container = context.parameters.string("container")!
        let isMov = container == "mov" || (container == "auto" && target.pathExtension.lowercased() == "mov")
        let mux = try bin.make(isMov ? "qtmux" : "mp4mux", name: "mux")
        if writesInPlace {
            try mux.set("fragment-duration", Int(fragmentInterval * 1000))
        } else {
            try mux.set("faststart", context.parameters.bool("faststart")!)
        }
        let sink = try bin.make("filesink", name: "filesink", ["location": (writesInPlace ? target : temporary).path])
        try bin.link(mux, sink)
        for port in ["audio", "video"] where context.connectedInputs.contains(port) {
            try bin.expose(input: port, requesting: "\(port)_%u", from: mux)
        }
    }

    public func prepare() throws {
        let at = context.location(parameter: "path")
        let fm = FileManager.default
        let folder = target.deletingLastPathComponent()
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw GraphError(.outputUnwritable, at: at, "cannot write \"\(path)\": \"\(folder.path)\" is a file, not a folder", node: context.id)
            }
        } else {
            do {
                try fm.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw GraphError(.outputUnwritable, at: at, "cannot create the folder for \"\(path)\": \(Self.reason(error))", node: context.id)
            }
        }
        if fm.fileExists(atPath: target.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw GraphError(.outputUnwritable, at: at, "cannot write \"\(path)\": it is a folder", node: context.id)
        }
        try? fm.removeItem(at: temporary)
        let probe = writesInPlace ? target : temporary
        guard fm.createFile(atPath: probe.path, contents: nil) else {
            throw GraphError(.outputUnwritable, at: at, "cannot write in \"\(folder.path)\": permission denied or disk full", node: context.id)
        }
        lock.lock()
        status = .writing
        lock.unlock()
    }

    public func finish(_ outcome: RunStatus) throws {
        let fm = FileManager.default
        lock.lock()
        let wasWriting = status == .writing
        lock.unlock()
        guard wasWriting else { return }
        var final: OutputReport.Status
        defer {
            lock.lock()
            status = final
            lock.unlock()
        }
        switch outcome {
        case .completed, .stopped:
            final = .failed
            if !writesInPlace {
                // rename(2) replaces the target atomically: readers see the old file or the new.
                guard rename(temporary.path, target.path) == 0 else {
                    let reason = String(cString: strerror(errno))
                    try? fm.removeItem(at: temporary)
                    throw GraphError(.outputUnwritable, at: context.location(parameter: "path"),
                                     "cannot move the finished file to \"\(path)\": \(reason)", node: context.id)
                }
            }
            final = .completed
        case .failed:
            final = .failed
            // A fragmented recording keeps what it wrote: surviving failure is its purpose.
            if !writesInPlace { try? fm.removeItem(at: temporary) }
        case .cancelled:
            final = .cancelled
            try? fm.removeItem(at: writesInPlace ? target : temporary)
        }
    }

    static func reason(_ error: Error) -> String {
        let e = error as NSError
        if let underlying = e.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return e.localizedDescription
    }
}
