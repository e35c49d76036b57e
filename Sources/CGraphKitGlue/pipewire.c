// PipeWire's nodes, listed by GraphKit itself: GStreamer's PipeWire device provider corrupted
// the heap (0.3.65: a graphctl run that looked its camera up first aborted 2 times in 50 at a
// thread's exit, "unaligned tcache chunk"; 0 in 40 without the look-up) or returned devices it
// had freed (1.4: every listing crashed). This asks PipeWire's registry once, on the calling
// thread (a main loop of its own: no thread is made), and ends within a time limit.
//
// libpipewire is opened at run time: GraphKit loads on machines without it, and lists no
// PipeWire device there. Only its exported functions are looked up; the interface calls
// (registry, sync, timers) are the headers' inline functions over the objects' own tables.

#include "CGraphKitGlue.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <pipewire/pipewire.h>

static struct {
    void (*init)(int *, char ***);
    struct pw_main_loop *(*main_loop_new)(const struct spa_dict *);
    struct pw_loop *(*main_loop_get_loop)(struct pw_main_loop *);
    int (*main_loop_run)(struct pw_main_loop *);
    int (*main_loop_quit)(struct pw_main_loop *);
    void (*main_loop_destroy)(struct pw_main_loop *);
    struct pw_context *(*context_new)(struct pw_loop *, struct pw_properties *, size_t);
    void (*context_destroy)(struct pw_context *);
    struct pw_core *(*context_connect)(struct pw_context *, struct pw_properties *, size_t);
    int (*core_disconnect)(struct pw_core *);
    void (*proxy_destroy)(struct pw_proxy *);
    int loaded;
} api;

static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static void load_api(void) {
    void *lib = dlopen("libpipewire-0.3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
#define LOOK(field, name) if (!(*(void **)&api.field = dlsym(lib, name))) return;
    LOOK(init, "pw_init")
    LOOK(main_loop_new, "pw_main_loop_new")
    LOOK(main_loop_get_loop, "pw_main_loop_get_loop")
    LOOK(main_loop_run, "pw_main_loop_run")
    LOOK(main_loop_quit, "pw_main_loop_quit")
    LOOK(main_loop_destroy, "pw_main_loop_destroy")
    LOOK(context_new, "pw_context_new")
    LOOK(context_destroy, "pw_context_destroy")
    LOOK(context_connect, "pw_context_connect")
    LOOK(core_disconnect, "pw_core_disconnect")
    LOOK(proxy_destroy, "pw_proxy_destroy")
#undef LOOK
    api.init(NULL, NULL);
    api.loaded = 1;
}

struct listing {
    struct pw_main_loop *loop;
    struct pw_core *core;
    int seq;
    int count;
    gk_pipewire_node_fn found;
    void *context;
};

static const char *lookup(const struct spa_dict *props, const char *key) {
    const char *value = props ? spa_dict_lookup(props, key) : NULL;
    return value ? value : "";
}

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    (void)permissions; (void)version;
    struct listing *l = data;
    if (!type || strcmp(type, PW_TYPE_INTERFACE_Node) != 0 || !props) return;
    // Bounded: a registry that claims more nodes than any machine has is not read further.
    if (l->count >= 4096) return;
    l->count++;
    l->found(l->context, id, lookup(props, PW_KEY_OBJECT_SERIAL), lookup(props, PW_KEY_NODE_NAME),
             lookup(props, PW_KEY_NODE_DESCRIPTION), lookup(props, PW_KEY_MEDIA_CLASS), lookup(props, PW_KEY_OBJECT_PATH));
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
};

static void on_done(void *data, uint32_t id, int seq) {
    struct listing *l = data;
    if (id == PW_ID_CORE && seq == l->seq) api.main_loop_quit(l->loop);
}

static void on_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq; (void)res; (void)message;
    struct listing *l = data;
    if (id == PW_ID_CORE) api.main_loop_quit(l->loop);
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = on_done,
    .error = on_error,
};

static void on_timeout(void *data, uint64_t expirations) {
    (void)expirations;
    struct listing *l = data;
    api.main_loop_quit(l->loop);
}

int gk_pipewire_list_nodes(double timeout_seconds, gk_pipewire_node_fn found, void *context) {
    pthread_once(&api_once, load_api);
    if (!api.loaded) return -1;
    struct listing l = { .found = found, .context = context };
    l.loop = api.main_loop_new(NULL);
    if (!l.loop) return -2;
    struct pw_loop *loop = api.main_loop_get_loop(l.loop);
    struct pw_context *pw_context = api.context_new(loop, NULL, 0);
    if (!pw_context) {
        api.main_loop_destroy(l.loop);
        return -2;
    }
    int result = -3;  // no PipeWire daemon to connect to
    l.core = api.context_connect(pw_context, NULL, 0);
    if (l.core) {
        struct spa_hook core_listener, registry_listener;
        spa_zero(core_listener);
        spa_zero(registry_listener);
        struct pw_registry *registry = pw_core_get_registry(l.core, PW_VERSION_REGISTRY, 0);
        if (registry) {
            pw_core_add_listener(l.core, &core_listener, &core_events, &l);
            pw_registry_add_listener(registry, &registry_listener, &registry_events, &l);
            l.seq = pw_core_sync(l.core, PW_ID_CORE, 0);
            struct spa_source *timer = pw_loop_add_timer(loop, on_timeout, &l);
            if (timer) {
                struct timespec limit = { .tv_sec = (time_t)timeout_seconds,
                                          .tv_nsec = (long)((timeout_seconds - (double)(time_t)timeout_seconds) * 1e9) };
                pw_loop_update_timer(loop, timer, &limit, NULL, false);
            }
            api.main_loop_run(l.loop);
            if (timer) pw_loop_destroy_source(loop, timer);
            spa_hook_remove(&registry_listener);
            spa_hook_remove(&core_listener);
            api.proxy_destroy((struct pw_proxy *)registry);
            result = l.count;
        }
        api.core_disconnect(l.core);
    }
    api.context_destroy(pw_context);
    api.main_loop_destroy(l.loop);
    return result;
}
