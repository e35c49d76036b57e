#ifndef GRAPHKIT_PLUGIN_H
#define GRAPHKIT_PLUGIN_H
/*
 * What a GraphKit plugin carries, in two parts:
 *
 * 1. A note, read from the file before any of its code runs. `GRAPHKIT_PLUGIN_NOTE("name",
 *    "version")` in one C file of the plugin puts an ELF note (owner "GraphKit", type
 *    GRAPHKIT_PLUGIN_NOTE_TYPE, in a section `.note.graphkit`) into the shared object: the plugin
 *    ABI, the GraphKit version (this header's), the toolchain that compiled it (its clang, which
 *    is the Swift toolchain's own), the plugin's name and version. Plain data, no pointers, so the
 *    loader reads it with `pread` from the descriptor it checked. A file without it is not
 *    `dlopen`ed: its constructors never run.
 *
 * 2. A descriptor, returned by the C function named GRAPHKIT_PLUGIN_ENTRY_SYMBOL once the note
 *    matched and the library is loaded, the way GStreamer's registry reads GstPluginDesc. The
 *    first field never moves, so a loader of any version can read which ABI a plugin was built
 *    for. Swift plugins do not fill it by hand: `GraphKitPlugin.descriptor(name:version:register:)`
 *    does; its name, version and ABI must be the note's.
 */
#include <stdint.h>

#define GRAPHKIT_PLUGIN_ABI_VERSION 1u
#define GRAPHKIT_PLUGIN_ENTRY_SYMBOL "graphkit_plugin_descriptor"

/* GraphKit's version: the one place it is written. GraphKitInfo.version (what `graphctl --version`
 * prints), the graphkit GStreamer plugin's version and the release tag are this; CHANGELOG.md's
 * newest entry names it (a test checks). */
#define GRAPHKIT_VERSION "0.5.0"

/* The compiler that compiles the note: under `swift build`, the Swift toolchain's clang, whose
 * version string names the toolchain's exact llvm-project commit. GraphKit records its own the
 * same way (graphkit_toolchain()), so a plugin built by another toolchain is refused unloaded. */
#define GRAPHKIT_TOOLCHAIN __VERSION__

/* The note: its owner, its type ('GKP1'), and its contents. Strings are NUL-terminated and
 * NUL-padded; the sizes are part of the ABI. */
#define GRAPHKIT_PLUGIN_NOTE_OWNER "GraphKit"
#define GRAPHKIT_PLUGIN_NOTE_TYPE 0x31504b47u

typedef struct GraphKitPluginNote {
    uint32_t abi_version;
    char graphkit_version[32];
    char toolchain[160];
    char name[64];
    char version[32];
} GraphKitPluginNote;

/* An ELF note as it lies in the file: the header, the owner padded to 4 bytes, the contents. */
typedef struct GraphKitPluginELFNote {
    uint32_t owner_size, contents_size, type;
    char owner[12];
    GraphKitPluginNote contents;
} GraphKitPluginELFNote;

#if defined(__has_attribute)
#if __has_attribute(retain)
#define GRAPHKIT_PLUGIN_RETAIN __attribute__((retain))
#endif
#endif
#ifndef GRAPHKIT_PLUGIN_RETAIN
#define GRAPHKIT_PLUGIN_RETAIN
#endif

/* The note with every field given: for tests that need a note of another ABI or toolchain. */
#define GRAPHKIT_PLUGIN_NOTE_FIELDS(ABI, GRAPHKIT, TOOLCHAIN, NAME, VERSION)                                   \
    _Static_assert(sizeof(GRAPHKIT) <= 32 && sizeof(TOOLCHAIN) <= 160, "a GraphKit note field is too long");  \
    _Static_assert(sizeof(NAME) <= 64, "a GraphKit plugin's name has at most 63 bytes");                       \
    _Static_assert(sizeof(VERSION) <= 32, "a GraphKit plugin's version has at most 31 bytes");                 \
    __attribute__((section(".note.graphkit"), used, aligned(4))) GRAPHKIT_PLUGIN_RETAIN                        \
    static const GraphKitPluginELFNote graphkit_plugin_note = {                                                \
        sizeof(GRAPHKIT_PLUGIN_NOTE_OWNER), sizeof(GraphKitPluginNote), GRAPHKIT_PLUGIN_NOTE_TYPE,             \
        GRAPHKIT_PLUGIN_NOTE_OWNER, { (ABI), GRAPHKIT, TOOLCHAIN, NAME, VERSION } }

/* What a plugin writes, once, in a C file of its own (docs/PLUGINS.md, "The note"). */
#define GRAPHKIT_PLUGIN_NOTE(NAME, VERSION) \
    GRAPHKIT_PLUGIN_NOTE_FIELDS(GRAPHKIT_PLUGIN_ABI_VERSION, GRAPHKIT_VERSION, GRAPHKIT_TOOLCHAIN, NAME, VERSION)

/* The toolchain that compiled GraphKit itself (GRAPHKIT_TOOLCHAIN in GraphKit's own build). */
const char *graphkit_toolchain(void);

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
