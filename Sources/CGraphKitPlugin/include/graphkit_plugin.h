#ifndef GRAPHKIT_PLUGIN_H
#define GRAPHKIT_PLUGIN_H
/*
 * The one thing a GraphKit plugin exports: a C function named GRAPHKIT_PLUGIN_ENTRY_SYMBOL that
 * returns this plain C struct. graphctl reads and checks it before it calls any Swift code in the
 * plugin, the way GStreamer's registry reads GstPluginDesc. The first field never moves, so a
 * loader of any version can read which ABI a plugin was built for.
 *
 * Swift plugins do not fill it by hand: `GraphKitPlugin.descriptor(name:version:register:)` does.
 */
#include <stdint.h>

#define GRAPHKIT_PLUGIN_ABI_VERSION 1u
#define GRAPHKIT_PLUGIN_ENTRY_SYMBOL "graphkit_plugin_descriptor"

typedef struct GraphKitPluginDescriptor {
    /* GRAPHKIT_PLUGIN_ABI_VERSION the plugin was built with. */
    uint32_t abi_version;
    uint32_t reserved;
    /* The GraphKit version and the Swift compiler the plugin was built with (its swiftmodule's). */
    const char *graphkit_version;
    const char *compiler_version;
    /* The plugin's own name, version and one line about it. */
    const char *name;
    const char *version;
    const char *summary;
    /* Registers the plugin's node types into `registrar` (GraphKit's), passing `context`.
     * Returns NULL on success, or an error message allocated with malloc, which the caller frees. */
    void *context;
    char *(*register_types)(void *context, void *registrar);
} GraphKitPluginDescriptor;

typedef const GraphKitPluginDescriptor *(*GraphKitPluginEntry)(void);

#endif
