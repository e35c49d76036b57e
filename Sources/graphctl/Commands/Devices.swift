import ArgumentParser
import FoundationEssentials
import Glibc
import Dispatch
import GraphKit

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the cameras and microphones GStreamer finds, with the value for a capture node's device."
    )

    @Flag(help: "Print JSON for machines.")
    var json = false

    func run() throws {
        let devices = GStreamer.captureDevices()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(devices), as: UTF8.self))
            return
        }
        for kind in [CaptureDevice.Kind.camera, .microphone] {
            let these = devices.filter { $0.kind == kind }
            print(kind == .camera ? "Cameras:" : "Microphones:")
            if these.isEmpty { print("  none found (the \"test\" device always works)") }
            for d in these { print("  \(d.name)\n    device: \(d.device)") }
        }
    }
}
