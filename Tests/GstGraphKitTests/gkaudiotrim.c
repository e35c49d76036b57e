/*
 * gkaudiotrim (Sources/GstGraphKit/gkaudiotrim) alone in GStreamer's harness: the samples kept
 * are exactly those from `start` to `end`, the first stamped 0; nothing is trimmed with
 * timescale 0; a plain segment's end ends the stream at the nearest sample.
 */
#include <string.h>
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkaudiotrim"); }
GST_END_TEST;

/* Every sample that leaves, in order: their values are their positions in the input. */
static GArray *drain(GstHarness *h, GstClockTime *first_pts) {
    GArray *out = g_array_new(FALSE, FALSE, sizeof(gint16));
    GstBuffer *b;
    gboolean first = TRUE;
    while ((b = gst_harness_try_pull(h)) != NULL) {
        if (first) { *first_pts = GST_BUFFER_PTS(b); first = FALSE; }
        GstMapInfo map;
        fail_unless(gst_buffer_map(b, &map, GST_MAP_READ));
        g_array_append_vals(out, map.data, (guint)(map.size / 2));
        gst_buffer_unmap(b, &map);
        gst_buffer_unref(b);
    }
    return out;
}

/* An edit's numbers in the track's clock (here 4 units a sample) give the same samples. */
GST_START_TEST(test_keeps_exactly_the_edit)
{
    GstHarness *h = gst_harness_new("gkaudiotrim");
    g_object_set(h->element, "start", (gint64)(4 * 1024), "end", (gint64)(4 * (1024 + 2000)), "timescale", 4 * 8000, NULL);
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(8000));
    for (gint64 at = 0; at < 4096; at += 1000)
        fail_unless_equals_int(gst_harness_push(h, gk_check_counted_samples(at, 1000, 8000)), GST_FLOW_OK);
    GstClockTime first_pts = GST_CLOCK_TIME_NONE;
    GArray *out = drain(h, &first_pts);
    fail_unless_equals_int(out->len, 2000);
    for (guint i = 0; i < out->len; i++) fail_unless_equals_int(g_array_index(out, gint16, i), 1024 + (gint)i);
    fail_unless_equals_uint64(first_pts, 0);
    g_array_unref(out);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_timescale_zero_keeps_everything)
{
    GstHarness *h = gst_harness_new("gkaudiotrim");
    g_object_set(h->element, "start", (gint64)100, "end", (gint64)200, "timescale", 0, NULL);
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(8000));
    for (gint64 at = 0; at < 3000; at += 1000) gst_harness_push(h, gk_check_counted_samples(at, 1000, 8000));
    GstClockTime first_pts = GST_CLOCK_TIME_NONE;
    GArray *out = drain(h, &first_pts);
    fail_unless_equals_int(out->len, 3000);
    fail_unless_equals_int(g_array_index(out, gint16, 0), 0);
    g_array_unref(out);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* A segment [0, stop] whose stop is an exact sample count cut down to nanoseconds ends at that
 * sample, not one later (a decoder clips at the sample after it). */
GST_START_TEST(test_segment_stop_ends_at_the_nearest_sample)
{
    GstHarness *h = gst_harness_new("gkaudiotrim");
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(44100));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    segment.stop = gst_util_uint64_scale(2500, GST_SECOND, 44100); /* 56689342.4 ns, cut down */
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    for (gint64 at = 0; at < 3000; at += 1000) gst_harness_push(h, gk_check_counted_samples(at, 1000, 44100));
    GstClockTime first_pts = GST_CLOCK_TIME_NONE;
    GArray *out = drain(h, &first_pts);
    fail_unless_equals_int(out->len, 2500);
    g_array_unref(out);
    gst_harness_teardown(h);
}
GST_END_TEST;

static GstFlowReturn refuse(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    (void)pad; (void)parent;
    gst_buffer_unref(buffer);
    return GST_FLOW_NOT_NEGOTIATED;
}

/* A format downstream refuses is posted as the error it is, once, where it is met: on its way
 * up it may be lost (typefind drops the result of pushing the data it typefound with). */
GST_START_TEST(test_a_refused_format_is_posted_once)
{
    GstHarness *h = gst_harness_new("gkaudiotrim");
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    gst_pad_set_chain_function(h->sinkpad, refuse);
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(8000));
    for (gint64 at = 0; at < 3000; at += 1000)
        fail_unless_equals_int(gst_harness_push(h, gk_check_counted_samples(at, 1000, 8000)), GST_FLOW_NOT_NEGOTIATED);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m != NULL);
    GError *error = NULL;
    gchar *debug = NULL;
    gst_message_parse_error(m, &error, &debug);
    fail_unless(debug != NULL && strstr(debug, "not-negotiated") != NULL);
    g_clear_error(&error);
    g_free(debug);
    gst_message_unref(m);
    fail_unless(gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR) == NULL);
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkaudiotrim_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkaudiotrim", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_keeps_exactly_the_edit);
    tcase_add_test(tc, test_timescale_zero_keeps_everything);
    tcase_add_test(tc, test_segment_stop_ends_at_the_nearest_sample);
    tcase_add_test(tc, test_a_refused_format_is_posted_once);
    return s;
}

GST_CHECK_MAIN(gkaudiotrim);
