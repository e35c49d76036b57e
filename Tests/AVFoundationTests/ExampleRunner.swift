import Foundation

/// A built example: beside the test bundle (the build's products folder).
func builtExample(_ name: String, file: String = #filePath) throws -> String {
    let candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                      URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("../../.build/debug").standardized]
    for dir in candidates where FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent(name).path) {
        return dir.appendingPathComponent(name).path
    }
    throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name) (build the package first)"])
}
