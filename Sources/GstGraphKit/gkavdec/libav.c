/* libavcodec loaded on first use: see libav.h. */
#include <dlfcn.h>
#include <glib.h>
#include "libav.h"

#define GK_AV_FILE "libavcodec.so." G_STRINGIFY(LIBAVCODEC_VERSION_MAJOR)

GkAv gk_av;

static const char *load(void) {
    /* Local: its symbols stay out of the process's namespace, where gst-libav's libavcodec (the
     * same file, loaded once) is. Never closed: pictures out hold its blocks. */
    void *library = dlopen(GK_AV_FILE, RTLD_NOW | RTLD_LOCAL);
    if (!library) return g_strdup_printf("cannot load %s (gstreamer1.0-libav's libavcodec): %s", GK_AV_FILE, dlerror());
    GkAv found;
#define GK_AV_FIND(name) \
    if (!(*(void **)&found.name = dlsym(library, #name))) { \
        dlclose(library); \
        return g_strdup_printf("%s has no function %s: not the libavcodec GraphKit was built for", GK_AV_FILE, #name); \
    }
    GK_AV_FUNCTIONS(GK_AV_FIND)
#undef GK_AV_FIND
    gk_av = found;
    return NULL;
}

const char *gk_av_load(void (*log)(void *, int, const char *, va_list)) {
    static gsize done = 0;
    static const char *why_not = NULL;
    if (g_once_init_enter(&done)) {
        why_not = load();
        if (!why_not) gk_av.av_log_set_callback(log);
        g_once_init_leave(&done, 1);
    }
    return why_not;
}
