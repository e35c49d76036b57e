import CGraphKitPlugin

public enum GraphKitInfo {
    /// GraphKit's version, written in one place: `graphkit_plugin.h`'s GRAPHKIT_VERSION. Inlined
    /// into the code that uses it, so a plugin carries the version it was built against, not the
    /// one it is later loaded into.
    @inlinable public static var version: String { GRAPHKIT_VERSION }

    /// The version of the plugin descriptor (`graphkit_plugin.h`'s GRAPHKIT_PLUGIN_ABI_VERSION).
    @inlinable public static var pluginABIVersion: UInt32 { 1 }

    /// The Swift compiler that built this module (a plugin inlines it from the module it was
    /// compiled against). Swift modules without library evolution are only compatible when built
    /// by the same compiler, so plugins are checked against it.
    @inlinable public static var compilerVersion: String {
        #if compiler(>=6.5)
        "6.5 or later"
        #elseif compiler(>=6.4)
        "6.4"
        #elseif compiler(>=6.3.1)
        "6.3.1"
        #elseif compiler(>=6.3)
        "6.3"
        #else
        "6.2 or earlier"
        #endif
    }
}
