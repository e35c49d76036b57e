import ArgumentParser
import Nodes

/// `--target` and `--true-peak`, the options `graphctl normalize` and `graphctl export
/// --normalize` share: effect.normalize's `target` and `truePeak`, with the node's ranges.
struct LoudnessOptions: ParsableArguments {
    @Option(help: "Integrated loudness to reach, LUFS (-70 to -5; default -16).",
            transform: NumberArgument.range("--target", of: NormalizeNode.target))
    var target: Double?

    @Option(name: .customLong("true-peak"), help: "True-peak ceiling, dBTP (-20 to 0; default -1).",
            transform: NumberArgument.range("--true-peak", of: NormalizeNode.truePeak))
    var truePeak: Double?
}
