import Effects
import GraphKit
import GraphKitTesting
import Foundation
import Testing

/// The client's node, unit-tested as README's "Test a node" says: no GStreamer code.
@Suite struct InvertNodeTests {
    @Test(.timeLimit(.minutes(5)))
    func invertsEverySample() throws {
        let h = try NodeHarness(#"{ "type": "effect.invert" }"#, registry: .withEffects)
        try h.push(TestMedia.pcm(frames: 4) { frame, _ in Int16(frame * 1000) - 1000 })
        let out = try #require(h.pull())
        #expect(out.withAudioSamples(as: Int16.self) { Array($0) } == [1000, 0, -1000, -2000])
        #expect(try !h.finish().hasLeftovers)
    }

    @Test(.timeLimit(.minutes(5)))
    func offPassesAudioThrough() throws {
        let h = try NodeHarness(#"{ "type": "effect.invert", "params": { "enabled": false } }"#, registry: .withEffects)
        try h.push(TestMedia.pcm(frames: 3) { frame, _ in Int16(frame - 32768) })
        #expect(try #require(h.pull()).withAudioSamples(as: Int16.self) { Array($0) } == [-32768, -32767, -32766])
    }

    @Test(.timeLimit(.minutes(5)))
    func aBadParameterIsNamed() throws {
        #expect { try NodeHarness(#"{ "type": "effect.invert", "params": { "enabled": 3 } }"#, registry: .withEffects) } throws: { error in
            "\(error)".contains("enabled")
        }
    }
}

/// One engine in the process: the products link GraphKit into the program once, whichever of
/// them it depends on, and nothing loads the shared library beside it.
@Suite struct OneEngineTests {
    @Test func theEngineIsLinkedIntoTheProgramOnce() throws {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        #expect(!maps.contains("libGraphKitShared.so"), "the shared library is loaded beside the linked engine")
        let address = UInt(bitPattern: unsafeBitCast(MediaTime.self as Any.Type, to: UnsafeRawPointer.self))
        let image = maps.split(separator: "\n").first { line in
            let range = line.split(separator: " ")[0].split(separator: "-").compactMap { UInt($0, radix: 16) }
            return range.count == 2 && (range[0]..<range[1]).contains(address)
        }.flatMap { $0.split(separator: " ", omittingEmptySubsequences: true).last }
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(image.map(String.init) == executable, "MediaTime is defined in \(image.map(String.init) ?? "no file"), not \(executable)")
    }
}
