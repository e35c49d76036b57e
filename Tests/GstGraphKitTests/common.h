/*
 * What the element tests share. Each test program is run by `make test-elements` with
 * GST_PLUGIN_PATH naming the folder of the built plugin (out/gstreamer-1.0) and nothing else,
 * and a registry of its own.
 */
#ifndef GK_CHECK_COMMON_H
#define GK_CHECK_COMMON_H
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>

/* The element is the one in the plugin file GST_PLUGIN_PATH names, not a copy from elsewhere. */
static inline void gk_check_from_plugin_file(const char *element) {
    const char *folder = g_getenv("GST_PLUGIN_PATH");
    fail_unless(folder != NULL, "GST_PLUGIN_PATH is not set: run these through `make test-elements`");
    GstElementFactory *factory = gst_element_factory_find(element);
    fail_unless(factory != NULL, "no element %s: the plugin in %s was not loaded", element, folder);
    GstPlugin *plugin = gst_plugin_feature_get_plugin(GST_PLUGIN_FEATURE(factory));
    fail_unless(plugin != NULL);
    char *expected = g_build_filename(folder, "libgstgraphkit.so", NULL);
    fail_unless_equals_string(gst_plugin_get_filename(plugin), expected);
    fail_unless_equals_string(gst_plugin_get_name(plugin), "graphkit");
    g_free(expected);
    gst_object_unref(plugin);
    gst_object_unref(factory);
}

/* The caps the harness's sink pad has now: what the element last sent downstream. */
static inline GstCaps *gk_check_output_caps(GstHarness *h) {
    GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
    fail_unless(caps != NULL, "the element sent no caps");
    return caps;
}

/* A suite of one test case, `*tc`, whose tests may take up to 10 minutes each (the Swift tests'
 * hard limit): a guard against a hang on a loaded machine, not a measure of speed. */
static inline Suite *gk_check_suite(const char *name, TCase **tc) {
    Suite *s = suite_create(name);
    *tc = tcase_create("general");
    tcase_set_timeout(*tc, 600);
    suite_add_tcase(s, *tc);
    return s;
}

/* The next event of `type` the element sent downstream (others before it skipped), or NULL. */
static inline GstEvent *gk_check_next_event(GstHarness *h, GstEventType type) {
    GstEvent *event;
    while ((event = gst_harness_try_pull_event(h)) != NULL) {
        if (GST_EVENT_TYPE(event) == type) return event;
        gst_event_unref(event);
    }
    return NULL;
}

/* A bus on the element, so that its errors can be read (a harness gives it none). */
static inline GstBus *gk_check_bus(GstHarness *h) {
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    return bus;
}

/* S16 mono samples whose values are their positions (from `first`), stamped at `rate`. */
static inline GstBuffer *gk_check_counted_samples(gint64 first, gint count, gint rate) {
    GstBuffer *b = gst_buffer_new_allocate(NULL, (gsize)count * 2, NULL);
    GstMapInfo map;
    fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE));
    for (gint i = 0; i < count; i++) ((gint16 *)map.data)[i] = (gint16)(first + i);
    gst_buffer_unmap(b, &map);
    GST_BUFFER_PTS(b) = gst_util_uint64_scale_round((guint64)first, GST_SECOND, (guint64)rate);
    GST_BUFFER_DURATION(b) = gst_util_uint64_scale_round((guint64)(first + count), GST_SECOND, (guint64)rate) - GST_BUFFER_PTS(b);
    return b;
}

#define GK_CHECK_MONO_S16(rate) "audio/x-raw, format=(string)S16LE, layout=(string)interleaved, channels=(int)1, rate=(int)" #rate

#endif
