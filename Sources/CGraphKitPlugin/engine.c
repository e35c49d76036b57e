#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#include "graphkit_engine.h"
#include "graphkit_plugin.h"

GraphKitEngineReach graphkit_engine_reach(void *handle, const char **image) {
    const void *ours = (const void *)&graphkit_toolchain;
    if (image) {
        Dl_info info;
        *image = dladdr(ours, &info) ? info.dli_fname : NULL;
    }
    const void *theirs = dlsym(handle, "graphkit_toolchain");
    if (!theirs) return GRAPHKIT_ENGINE_NONE;
    return theirs == ours ? GRAPHKIT_ENGINE_SAME : GRAPHKIT_ENGINE_OTHER;
}
