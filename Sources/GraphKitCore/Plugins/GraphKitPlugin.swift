import CGraphKitPlugin
import FoundationEssentials
import Glibc

/// What a plugin writes to export its node types, in two parts.
///
/// A note, in one C file of the plugin's package (its own small C target, which the Swift
/// target depends on), that graphctl reads from the file before anything of the plugin runs:
///
/// ```c
/// #include <graphkit_plugin.h>
/// GRAPHKIT_PLUGIN_NOTE("echo", "1.0.0");
/// ```
///
/// And one C entry point returning the descriptor GraphKit checks once the file is loaded,
/// before it calls anything else in the plugin (its name and version are the note's):
///
/// ```swift
/// import GraphKit
///
/// @_cdecl("graphkit_plugin_descriptor")
/// public func graphkitPluginDescriptor() -> UnsafeRawPointer {
///     GraphKitPlugin.descriptor(name: "echo", version: "1.0.0", summary: "An echo for audio") { plugin in
///         plugin.register(EchoNode.self)
///     }
/// }
/// ```
///
/// `register` runs once per load; it may throw, and then the plugin registers nothing.
public enum GraphKitPlugin {
    /// The toolchain that compiled GraphKit (its clang's `__VERSION__`): a plugin's note must
    /// name the same one, or the plugin is refused without being loaded.
    public static var toolchain: String { String(cString: graphkit_toolchain()) }

    /// The descriptor, kept for ever (plugins are never unloaded).
    /// Inlined into the plugin, so the versions it states are the ones the plugin was built with.
    @inlinable
    public static func descriptor(name: String, version: String, summary: String = "",
                                  register: @escaping @Sendable (inout PluginRegistration) throws -> Void) -> UnsafeRawPointer {
        makeDescriptor(abi: GraphKitInfo.pluginABIVersion, graphKitVersion: GraphKitInfo.version,
                       compilerVersion: GraphKitInfo.compilerVersion, name: name, version: version, summary: summary,
                       register: register)
    }

    @usableFromInline
    static func makeDescriptor(abi: UInt32, graphKitVersion: String, compilerVersion: String, name: String, version: String,
                               summary: String, register: @escaping @Sendable (inout PluginRegistration) throws -> Void) -> UnsafeRawPointer {
        // Kept for ever, like the plugin: the loader calls each file's entry point once.
        let d = UnsafeMutablePointer<GraphKitPluginDescriptor>.allocate(capacity: 1)
        d.initialize(to: GraphKitPluginDescriptor(
            abi_version: abi, reserved: 0, graphkit_version: strdup(graphKitVersion), compiler_version: strdup(compilerVersion),
            name: strdup(name), version: strdup(version), summary: strdup(summary),
            context: Unmanaged.passRetained(Registration(register)).toOpaque(),
            register_types: { context, registrar in
                guard let context, let registrar else { return strdup("no registrar") }
                let work = Unmanaged<Registration>.fromOpaque(context).takeUnretainedValue()
                let sink = Unmanaged<PluginRegistration.Sink>.fromOpaque(registrar).takeUnretainedValue()
                var registration = PluginRegistration()
                do {
                    try work.register(&registration)
                } catch {
                    return strdup((error as? GraphError)?.description ?? "\(error)")
                }
                sink.types = registration.types
                return nil
            }))
        return UnsafeRawPointer(d)
    }

    private final class Registration: Sendable {
        let register: @Sendable (inout PluginRegistration) throws -> Void
        init(_ register: @escaping @Sendable (inout PluginRegistration) throws -> Void) { self.register = register }
    }
}

/// What a plugin's registration function is handed: the node types it adds.
public struct PluginRegistration {
    var types: [any Node.Type] = []

    /// Adds a node type. A type name that already exists (built in, or in another plugin) makes
    /// the whole plugin fail to load, with a message naming both.
    public mutating func register(_ type: any Node.Type) {
        types.append(type)
    }

    /// Where the host collects what a registration added (handed to the plugin as a pointer, for
    /// the length of one call on the loading thread: never shared).
    final class Sink {
        var types: [any Node.Type] = []
    }
}
