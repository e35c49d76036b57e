// The peak level of a file, read with AssetReader: the AVAssetReader sample loop, with the AV/CM
// prefixes dropped.
//
//   swift run example-peak-level song.m4a
import Assets
import Glibc
import GraphKit

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    print("usage: example-peak-level FILE")
    exit(64)
}

do {
    let asset = try Asset(path: arguments[1])
    let reader = try AssetReader(asset: asset)
    let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio),
                                        outputSettings: .linearPCM(sampleFormat: .f32le))
    try reader.add(output)
    try reader.startReading()
    var peak: Float = 0
    var frames = 0
    while let sample = output.copyNextSampleBuffer() {
        frames += sample.frameCount
        sample.withAudioSamples(as: Float.self) { for s in $0 { peak = max(peak, abs(s)) } }
    }
    if reader.status == .failed, let error = reader.error { throw error }
    let dB = peak > 0 ? 20 * log10(Double(peak)) : -.infinity
    print("peak \(peak) (\(dB) dBFS) over \(frames) frames of \(asset.duration.seconds) s")
} catch let error as GraphError {
    print("error: \(error)")
    exit(error.code.exitStatus)
}
