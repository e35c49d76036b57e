#include "CCairo.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static GkCairo table;
static const GkCairo *loaded;
static char failure[512];

static void load(void) {
    void *lib = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
    /* Each name, with the slot it fills; a missing one fails the whole table. */
    struct { const char *name; void **slot; } symbols[] = {
        {"cairo_image_surface_create", (void **)&table.image_surface_create},
        {"cairo_svg_surface_create", (void **)&table.svg_surface_create},
        {"cairo_surface_write_to_png", (void **)&table.surface_write_to_png},
        {"cairo_surface_finish", (void **)&table.surface_finish},
        {"cairo_surface_status", (void **)&table.surface_status},
        {"cairo_surface_destroy", (void **)&table.surface_destroy},
        {"cairo_status_to_string", (void **)&table.status_to_string},
        {"cairo_create", (void **)&table.create},
        {"cairo_destroy", (void **)&table.destroy},
        {"cairo_set_source_rgba", (void **)&table.set_source_rgba},
        {"cairo_set_operator", (void **)&table.set_operator},
        {"cairo_paint", (void **)&table.paint},
        {"cairo_rectangle", (void **)&table.rectangle},
        {"cairo_move_to", (void **)&table.move_to},
        {"cairo_line_to", (void **)&table.line_to},
        {"cairo_close_path", (void **)&table.close_path},
        {"cairo_fill", (void **)&table.fill},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(lib, symbols[i].name);
        if (*symbols[i].slot == NULL) {
            snprintf(failure, sizeof failure, "libcairo.so.2 has no %s", symbols[i].name);
            return; /* the library stays loaded: unloading buys nothing in a process that failed */
        }
    }
    loaded = &table;
}

const GkCairo *gk_cairo(const char **error) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load);
    if (loaded == NULL) *error = failure;
    return loaded;
}
