#include "graphkit_plugin.h"

/* Compiled with GraphKit, by the toolchain that compiles its Swift code: what a plugin's note
 * must name. */
const char *graphkit_toolchain(void) { return GRAPHKIT_TOOLCHAIN; }
