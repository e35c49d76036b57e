#define _GNU_SOURCE
#include <pthread.h>
#include "CGraphKitGlue.h"
#include "GstGraphKit.h"
#include <malloc.h>
#include <gst/rtsp/gstrtspmessage.h>
#include <gio/gio.h>

/* ThreadSanitizer annotations. GLib's GMutex, GCond and GAsyncQueue are futex-based and GStreamer
 * is not instrumented, so TSan does not see how GStreamer orders our code on its threads: a
 * pipeline started by one thread and run by pooled streaming threads, a buffer handed from one
 * streaming thread to another through a queue (or from code through an appsrc), a GstBuffer freed
 * and its slice reused. Where our code meets those hand-offs we say so: release where we hand
 * something over, acquire where we receive it. Without -fsanitize=thread these compile to nothing.
 *
 * Two sync points per pipeline (the top-level object above the one a callback is given), kept
 * apart so that streaming threads are not ordered with each other through them:
 *   run_start:   released by the thread that starts the pipeline (or adds an element to a running
 *                one), acquired at the entry of every callback GStreamer makes;
 *   run_stopped: released at the exit of every callback, acquired by the thread that stopped the
 *                pipeline once the state change has returned (its streaming threads are joined).
 * A buffer is its own sync point: released when our code passes it on or lets it go, acquired when
 * our code receives it (probe, appsink, pool, or a buffer just made). */
#include "../GstGraphKit/common/tsan.h"  /* shared with the graphkit plugin's elements */

#ifdef GK_TSAN
/* The pipeline an object is part of (the object itself when it has no parent). Parents are set
 * when elements are added, before any of their callbacks can run. */
static char *run_of(gpointer object) {
    GstObject *o = object;
    while (o != NULL && GST_OBJECT_PARENT(o) != NULL)
        o = GST_OBJECT_PARENT(o);
    return (char *)o;
}
#define RUN_START(run) ((void *)(run))
#define RUN_STOPPED(run) ((void *)((run) + 1))
static inline void run_starts(gpointer object) {
    char *run = run_of(object);
    if (run) __tsan_release(RUN_START(run));
}
static inline void run_stopped(gpointer object) {
    char *run = run_of(object);
    if (run) __tsan_acquire(RUN_STOPPED(run));
}
#else
#define run_starts(object) ((void)0)
#define run_stopped(object) ((void)0)
#endif

void gk_callback_enter(gpointer object) {
#ifdef GK_TSAN
    char *run = run_of(object);
    if (run) __tsan_acquire(RUN_START(run));
#else
    (void)object;
#endif
}

void gk_callback_leave(gpointer object) {
#ifdef GK_TSAN
    char *run = run_of(object);
    if (run) __tsan_release(RUN_STOPPED(run));
#else
    (void)object;
#endif
}

void gk_buffer_received(GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    (void)buffer;
}

GstStateChangeReturn gk_element_set_state(GstElement *element, GstState state) {
    run_starts(element);
    GstStateChangeReturn r = gst_element_set_state(element, state);
    run_stopped(element);
    return r;
}

gboolean gk_element_sync_state_with_parent(GstElement *element) {
    run_starts(element);
    return gst_element_sync_state_with_parent(element);
}

char *gk_element_try_open(GstElement *element) {
    GstStateChangeReturn r = gk_element_set_state(element, GST_STATE_READY);
    gk_element_set_state(element, GST_STATE_NULL);
    if (r != GST_STATE_CHANGE_FAILURE)
        return NULL;
    /* The error it posted went up to the pipeline's bus, where nobody watches yet. */
    GstObject *top = gst_object_ref(GST_OBJECT(element)), *parent;
    while ((parent = gst_object_get_parent(top))) { gst_object_unref(top); top = parent; }
    GstBus *bus = gst_element_get_bus(GST_ELEMENT(top));
    gst_object_unref(top);
    char *words = NULL;
    GstMessage *m;
    while (bus && words == NULL && (m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR))) {
        if (GST_MESSAGE_SRC(m) == GST_OBJECT(element)) {
            GError *error = NULL;
            gchar *debug = NULL;
            gst_message_parse_error(m, &error, &debug);
            words = g_strdup_printf("%s\n%s", error ? error->message : "", debug ? debug : "");
            g_clear_error(&error);
            g_free(debug);
        }
        gst_message_unref(m);
    }
    if (bus)
        gst_object_unref(bus);
    return words ? words : g_strdup("it could not be opened\n");
}

/* GraphKit's own elements, in this process: the graphkit plugin (Sources/GstGraphKit), linked
 * into this library and registered from its descriptor, as a program built with static plugins
 * registers them. The same elements installed as a plugin file (libgstgraphkit.so, found through
 * GST_PLUGIN_PATH) are only listed in the registry, by a scan in another process
 * (gst-plugin-scanner) or from the registry's cache: registering ours replaces those entries, so
 * GStreamer never loads that file here, whatever its version. Unless it has loaded it already:
 * a scan in this process (GST_REGISTRY_FORK=no, or no scanner) loads each new file, and its
 * types then hold the elements' GType names, which ours cannot take again (GLib refuses a
 * second "GkX264Enc", and each element of ours would fail with criticals). Those elements are
 * then used as they are if they are this GraphKit's version; another version's is refused,
 * saying which file. Returns NULL, or a message to free. */
static char *register_elements(void) {
    const GstPluginDesc *own = gst_plugin_graphkit_get_desc();
    GstPlugin *loaded = gst_registry_find_plugin(gst_registry_get(), own->name);
    char *message = NULL;
    if (loaded && gst_plugin_get_filename(loaded) && gst_plugin_is_loaded(loaded)) {
        if (g_strcmp0(gst_plugin_get_version(loaded), own->version) != 0)
            message = g_strdup_printf("GStreamer loaded GraphKit %s's elements into this process (the %s plugin, %s), and "
                                      "GraphKit %s cannot register its own beside them: take that folder out of "
                                      "GST_PLUGIN_PATH, or install GraphKit %s's plugin there",
                                      gst_plugin_get_version(loaded), own->name, gst_plugin_get_filename(loaded),
                                      own->version, own->version);
    } else if (!gst_plugin_register_static(own->major_version, own->minor_version, own->name, own->description,
                                           own->plugin_init, own->version, own->license, own->source, own->package,
                                           own->origin)) {
        message = g_strdup_printf("GraphKit's GStreamer elements (the %s plugin) could not be registered", own->name);
    }
    if (loaded) gst_object_unref(loaded);
    return message;
}

static GMutex init_lock;
static gboolean initialised = FALSE;

char *gk_init(void) {
    char *message = NULL;
    g_mutex_lock(&init_lock);
    if (!initialised) {
        GError *error = NULL;
        if (gst_init_check(NULL, NULL, &error)) {
            initialised = TRUE;
            gk_quiet_known_criticals();
            message = register_elements();
        } else {
            message = g_strdup_printf("GStreamer failed to initialise: %s; check the installation (gstreamer1.0-plugins-base)",
                                      error ? error->message : "gst_init_check failed");
            g_clear_error(&error);
        }
    }
    g_mutex_unlock(&init_lock);
    return message;
}

GstBuffer *gk_buffer_ref(GstBuffer *buffer) {
    GK_BUFFER_HANDED_ON(buffer);
    return gst_buffer_ref(buffer);
}
void gk_buffer_unref(GstBuffer *buffer) {
    GK_BUFFER_HANDED_ON(buffer);
    gst_buffer_unref(buffer);
}
/* Writable: every other holder has let it go (GStreamer's atomic unref, which TSan does not see),
 * so what they did with it happens before what the caller now writes. */
int gk_buffer_is_writable(GstBuffer *buffer) {
    if (!gst_buffer_is_writable(buffer)) return 0;
    GK_BUFFER_RECEIVED(buffer);
    return 1;
}
int gk_buffer_bytes_are_writable(GstBuffer *buffer) {
    if (!gk_buffer_is_writable(buffer)) return 0;
    const guint n = gst_buffer_n_memory(buffer);
    for (guint i = 0; i < n; i++) {
        GstMemory *memory = gst_buffer_peek_memory(buffer, i);
        if (!gst_memory_is_writable(memory) || GST_MEMORY_IS_READONLY(memory)) return 0; /* shared; read-only */
    }
    return 1;
}
GstBuffer *gk_buffer_make_writable(GstBuffer *buffer) { return gst_buffer_make_writable(buffer); }
void gk_caps_unref(GstCaps *caps) { gst_caps_unref(caps); }
GstCaps *gk_caps_ref(GstCaps *caps) { return gst_caps_ref(caps); }
void gk_sample_unref(GstSample *sample) { gst_sample_unref(sample); }
void gk_message_unref(GstMessage *message) { gst_message_unref(message); }

gboolean gk_object_has_property(gpointer object, const char *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != NULL;
}

int gk_object_set_from_string(gpointer object, const char *name, const char *value) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL)
        return 1;
    GValue v = G_VALUE_INIT;
    g_value_init(&v, spec->value_type);
    if (!gst_value_deserialize_with_pspec(&v, value, spec)) {
        g_value_unset(&v);
        return 2;
    }
    g_object_set_property(G_OBJECT(object), name, &v);
    g_value_unset(&v);
    return 0;
}

int gk_tag_setter_set(GstElement *element, const char *tag, const char *value) {
    if (!GST_IS_TAG_SETTER(element))
        return 1;
    if (!gst_tag_exists(tag))
        return 2;
    GType type = gst_tag_get_type(tag);
    GValue v = G_VALUE_INIT;
    g_value_init(&v, type);
    /* A date and time in ISO 8601 (gst_value_deserialize wants GStreamer's own form). */
    if (type == GST_TYPE_DATE_TIME) {
        GstDateTime *when = gst_date_time_new_from_iso8601_string(value);
        if (when == NULL) {
            g_value_unset(&v);
            return 3;
        }
        g_value_take_boxed(&v, when);
    } else if (type == G_TYPE_STRING) {
        g_value_set_string(&v, value);
    } else if (!gst_value_deserialize(&v, value)) {
        g_value_unset(&v);
        return 3;
    }
    gst_tag_setter_add_tag_value(GST_TAG_SETTER(element), GST_TAG_MERGE_REPLACE, tag, &v);
    g_value_unset(&v);
    return 0;
}

char *gk_object_get_as_string(gpointer object, const char *name) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL)
        return NULL;
    GValue v = G_VALUE_INIT;
    g_value_init(&v, spec->value_type);
    g_object_get_property(G_OBJECT(object), name, &v);
    char *s = gst_value_serialize(&v);
    g_value_unset(&v);
    return s;
}

static GQuark domain_quark(int domain) {
    switch (domain) {
    case 0: return GST_CORE_ERROR;
    case 1: return GST_LIBRARY_ERROR;
    case 2: return GST_RESOURCE_ERROR;
    default: return GST_STREAM_ERROR;
    }
}

void gk_element_post_error(GstElement *element, int domain, int code, const char *text, const char *debug) {
    GError *error = g_error_new_literal(domain_quark(domain), code, text);
    GstMessage *m = gst_message_new_error(GST_OBJECT(element), error, debug);
    g_error_free(error);
    gst_element_post_message(element, m);
}

void gk_element_post_warning(GstElement *element, const char *text, const char *debug) {
    GError *error = g_error_new_literal(GST_STREAM_ERROR, GST_STREAM_ERROR_FAILED, text);
    GstMessage *m = gst_message_new_warning(GST_OBJECT(element), error, debug);
    g_error_free(error);
    gst_element_post_message(element, m);
}

int gk_error_domain(const GError *error) {
    if (error == NULL) return -1;
    if (error->domain == GST_CORE_ERROR) return 0;
    if (error->domain == GST_LIBRARY_ERROR) return 1;
    if (error->domain == GST_RESOURCE_ERROR) return 2;
    if (error->domain == GST_STREAM_ERROR) return 3;
    return -1;
}

void gk_send_eos(GstElement *pipeline) { gst_element_send_event(pipeline, gst_event_new_eos()); }

char *gk_set_tls_database(GstElement *element, const char *path) {
    GError *error = NULL;
    GTlsDatabase *database = g_tls_file_database_new(path, &error);
    if (database == NULL) {
        char *words = g_strdup(error && error->message ? error->message : "it holds no certificate");
        g_clear_error(&error);
        return words;
    }
    g_object_set(element, "tls-database", database, NULL);
    g_object_unref(database);
    return NULL;
}

const char *gk_rtsp_request_method(const void *message) {
    const GstRTSPMessage *m = message;
    if (m == NULL || m->type != GST_RTSP_MESSAGE_REQUEST)
        return NULL;
    switch (m->type_data.request.method) {  /* read here: no call into libgstrtsp */
    case GST_RTSP_DESCRIBE: return "DESCRIBE";
    case GST_RTSP_OPTIONS: return "OPTIONS";
    case GST_RTSP_PLAY: return "PLAY";
    case GST_RTSP_PAUSE: return "PAUSE";
    case GST_RTSP_SETUP: return "SETUP";
    case GST_RTSP_TEARDOWN: return "TEARDOWN";
    case GST_RTSP_GET_PARAMETER: return "GET_PARAMETER";
    case GST_RTSP_SET_PARAMETER: return "SET_PARAMETER";
    default: return "OTHER";
    }
}

void gk_pad_send_eos(GstPad *pad) { gst_pad_send_event(pad, gst_event_new_eos()); }

void gk_pad_push_eos(GstPad *pad) { gst_pad_push_event(pad, gst_event_new_eos()); }

void gk_set_thread_name(const char *name) { pthread_setname_np(pthread_self(), name); }

GkPadCounter gk_pad_counter_read(const GkPadCounter *c) {
    GkPadCounter r;
    r.buffers = __atomic_load_n(&c->buffers, __ATOMIC_RELAXED);
    r.bytes = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    r.start_ns = __atomic_load_n(&c->start_ns, __ATOMIC_RELAXED);
    r.end_ns = __atomic_load_n(&c->end_ns, __ATOMIC_RELAXED);
    return r;
}

GkEdgeStats gk_edge_stats_read(const GkEdgeStats *s) {
    GkEdgeStats r;
    r.waits = __atomic_load_n(&s->waits, __ATOMIC_RELAXED);
    r.max_buffers = __atomic_load_n(&s->max_buffers, __ATOMIC_RELAXED);
    r.max_bytes = __atomic_load_n(&s->max_bytes, __ATOMIC_RELAXED);
    r.max_time_ns = __atomic_load_n(&s->max_time_ns, __ATOMIC_RELAXED);
    return r;
}

/* gk_bin_keep_errors: see the header. */
typedef struct {
    GstBin *bin;            /* owns the child bus this watches: valid while the handler runs */
    GMutex lock;
    GSList *kept;           /* GstMessage* errors from elements not yet PAUSED */
} GkErrorKeeper;

static void gk_error_keeper_free(gpointer data) {
    GkErrorKeeper *k = data;
    g_slist_free_full(k->kept, (GDestroyNotify)gst_message_unref);
    g_mutex_clear(&k->lock);
    g_free(k);
}

/* k->lock is a GMutex, which ThreadSanitizer cannot see (GLib is not instrumented): tsan.h. */
static void gk_keeper_lock(GkErrorKeeper *k) { gk_mutex_lock(&k->lock); }

static void gk_keeper_unlock(GkErrorKeeper *k) { gk_mutex_unlock(&k->lock); }

static GstBusSyncReply gk_error_keeper_handler(GstBus *bus, GstMessage *message, gpointer data) {
    (void)bus;
    GkErrorKeeper *k = data;
#ifdef GK_TSAN
    __tsan_acquire(k);  /* its fields, set before the handler was installed */
#endif
    gk_callback_enter(k->bin);
    GSList *release = NULL;
    GstObject *src = GST_MESSAGE_SRC(message);
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR && src && GST_IS_ELEMENT(src)) {
        GST_OBJECT_LOCK(src);
        gboolean before_paused = GST_STATE(GST_ELEMENT(src)) < GST_STATE_PAUSED;
        GST_OBJECT_UNLOCK(src);
        if (before_paused) {
            gk_keeper_lock(k);
            k->kept = g_slist_prepend(k->kept, gst_message_copy(message));
            gk_keeper_unlock(k);
        } else {
            /* PAUSED already, so plugged: decodebin passes it on, except in the instant
             * between the element's state change and decodebin taking it off its list. */
            release = g_slist_prepend(release, gst_message_copy(message));
        }
    } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_STATE_CHANGED && src && GST_IS_ELEMENT(src)) {
        GstState old_state, new_state;
        gst_message_parse_state_changed(message, &old_state, &new_state, NULL);
        if (new_state >= GST_STATE_PAUSED && old_state < GST_STATE_PAUSED) {
            gk_keeper_lock(k);
            for (GSList *l = k->kept; l;) {
                GSList *next = l->next;
                if (GST_MESSAGE_SRC((GstMessage *)l->data) == src) {
                    release = g_slist_prepend(release, l->data);
                    k->kept = g_slist_delete_link(k->kept, l);
                }
                l = next;
            }
            gk_keeper_unlock(k);
        }
    }
    /* What GstBin's own handler does: the bin handles (forwards or drops) the message. */
    GstBinClass *klass = GST_BIN_GET_CLASS(k->bin);
    if (klass->handle_message) klass->handle_message(k->bin, message);
    else gst_message_unref(message);
    if (release) {
        /* Posted from the top, past the bin that may have dropped it. When the bin did pass
         * it on, this is a second report of the same failure, which the run's bus watcher
         * ignores (the first error ends the run). */
        GstObject *top = gst_object_ref(GST_OBJECT(k->bin));
        GstObject *parent;
        while ((parent = gst_object_get_parent(top))) { gst_object_unref(top); top = parent; }
        for (GSList *l = release; l; l = l->next) gst_element_post_message(GST_ELEMENT(top), l->data);
        g_slist_free(release);
        gst_object_unref(top);
    }
    gk_callback_leave(k->bin);
    return GST_BUS_DROP;
}

int gk_bin_keep_errors(GstBin *bin) {
    if (!bin || !bin->child_bus) return 0;
    GkErrorKeeper *k = g_new0(GkErrorKeeper, 1);
    k->bin = bin;
    g_mutex_init(&k->lock);
#ifdef GK_TSAN
    __tsan_release(k);
#endif
    /* GStreamer refuses to replace a sync handler; clearing GstBin's first is allowed. */
    gst_bus_set_sync_handler(bin->child_bus, NULL, NULL, NULL);
    gst_bus_set_sync_handler(bin->child_bus, gk_error_keeper_handler, k, gk_error_keeper_free);
    return 1;
}

/* GStreamer.keepFrameMemory() says why. mallopt is in <malloc.h>, which Swift's Glibc lacks. */
void gk_keep_frame_memory(void) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

int gk_toc_setter_set_chapters(GstElement *element, unsigned count, const uint64_t *starts, const uint64_t *ends,
                               const char *const *titles) {
    if (!GST_IS_TOC_SETTER(element))
        return 1;
    /* One edition holding the chapters, as matroskamux and ffmpeg's Matroska files have them. */
    GstToc *toc = gst_toc_new(GST_TOC_SCOPE_GLOBAL);
    GstTocEntry *edition = gst_toc_entry_new(GST_TOC_ENTRY_TYPE_EDITION, "edition");
    for (unsigned i = 0; i < count; i++) {
        char uid[32];
        g_snprintf(uid, sizeof uid, "chapter%u", i + 1);
        GstTocEntry *chapter = gst_toc_entry_new(GST_TOC_ENTRY_TYPE_CHAPTER, uid);
        gst_toc_entry_set_start_stop_times(chapter, (gint64)starts[i], ends[i] == UINT64_MAX ? -1 : (gint64)ends[i]);
        gst_toc_entry_set_tags(chapter, gst_tag_list_new(GST_TAG_TITLE, titles[i], NULL));
        gst_toc_entry_append_sub_entry(edition, chapter);
    }
    gst_toc_append_entry(toc, edition);
    gst_toc_setter_set_toc(GST_TOC_SETTER(element), toc);
    gst_toc_unref(toc);
    return 0;
}
