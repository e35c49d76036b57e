// `import GraphKit`: the engine as applications and plugins see it, one module over its layers
// (docs/ARCHITECTURE.md): GraphKitCore (media types, the node contract, the graph loader),
// MediaContainers (what files' own bytes say) and GraphKitRuntime (the GStreamer engine that
// runs graphs). Code inside GraphKit imports the layer it needs, so the compiler keeps the layers
// apart; code outside imports this.
@_exported import GraphKitCore
@_exported import GraphKitRuntime
@_exported import MediaContainers
