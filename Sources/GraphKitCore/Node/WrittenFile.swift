/// A file a node writes that no one parameter names: a playlist in the node's folder, a picture
/// numbered in it. A node declares them from its parameters
/// (``NodeDescriptor/writtenFilesInFolders``), so that they go through the same check as every
/// output (``FileRoles``, the loader's ``WriterCollisions``): never over a file the run reads,
/// never two writers at one name, found when the graph is loaded (65), not while it runs.
public struct WrittenFile: Sendable, Equatable {
    /// The parameter where a problem with it is reported (the folder's, or the name's).
    public var parameter: String
    /// Its path, as the graph's paths are (relative to the current folder).
    public var path: String

    public init(parameter: String, path: String) {
        self.parameter = parameter
        self.path = path
    }

    /// `name` in `folder`: `out/hls` + `playlist.m3u8`.
    public static func path(_ name: String, in folder: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }
}
