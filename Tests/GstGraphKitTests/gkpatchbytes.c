/*
 * gkpatchbytes (Sources/GstGraphKit/gkpatchbytes) alone in GStreamer's harness: the bytes at
 * the given offsets change, across buffer boundaries too; every other byte passes as it came;
 * no patches, no change.
 */
#include <string.h>
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkpatchbytes"); }
GST_END_TEST;

static GstBuffer *bytes_at(guint64 offset, gsize size) {
    GstBuffer *b = gst_buffer_new_allocate(NULL, size, NULL);
    GstMapInfo map;
    fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE));
    for (gsize i = 0; i < size; i++) map.data[i] = (guint8)(offset + i);
    gst_buffer_unmap(b, &map);
    GST_BUFFER_OFFSET(b) = offset;
    return b;
}

/* The bytes that left, concatenated. */
static GByteArray *drain(GstHarness *h) {
    GByteArray *out = g_byte_array_new();
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h)) != NULL) {
        GstMapInfo map;
        fail_unless(gst_buffer_map(b, &map, GST_MAP_READ));
        g_byte_array_append(out, map.data, (guint)map.size);
        gst_buffer_unmap(b, &map);
        gst_buffer_unref(b);
    }
    return out;
}

GST_START_TEST(test_patches_across_buffers)
{
    GstHarness *h = gst_harness_new("gkpatchbytes");
    /* "free" over bytes 98-101 (two buffers), 0xAB at 5. */
    g_object_set(h->element, "patches", "98:66726565; 5:ab", NULL);
    gst_harness_set_src_caps_str(h, "video/quicktime");
    fail_unless_equals_int(gst_harness_push(h, bytes_at(0, 100)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, bytes_at(100, 100)), GST_FLOW_OK);
    GByteArray *out = drain(h);
    fail_unless_equals_int(out->len, 200);
    for (guint i = 0; i < out->len; i++) {
        guint8 want = (guint8)i;
        if (i == 5) want = 0xab;
        if (i >= 98 && i < 102) want = (guint8)"free"[i - 98];
        fail_unless_equals_int(out->data[i], want);
    }
    g_byte_array_unref(out);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_no_patches_no_change)
{
    GstHarness *h = gst_harness_new("gkpatchbytes");
    gst_harness_set_src_caps_str(h, "video/quicktime");
    GstBuffer *in = bytes_at(0, 64);
    gst_buffer_ref(in);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull(h);
    fail_unless(out == in, "the buffer should pass as it came");
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* A list that does not parse changes nothing (and keeps the last good one). */
GST_START_TEST(test_a_bad_list_is_not_taken)
{
    GstHarness *h = gst_harness_new("gkpatchbytes");
    g_object_set(h->element, "patches", "1:ff", NULL);
    ASSERT_WARNING(g_object_set(h->element, "patches", "1:f", NULL));
    ASSERT_WARNING(g_object_set(h->element, "patches", "x:ff", NULL));
    gchar *text = NULL;
    g_object_get(h->element, "patches", &text, NULL);
    fail_unless_equals_string(text, "1:ff");
    g_free(text);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkpatchbytes_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkpatchbytes", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_patches_across_buffers);
    tcase_add_test(tc, test_no_patches_no_change);
    tcase_add_test(tc, test_a_bad_list_is_not_taken);
    return s;
}

GST_CHECK_MAIN(gkpatchbytes);
