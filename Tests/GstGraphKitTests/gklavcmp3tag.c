/*
 * gklavcmp3tag (Sources/GstGraphKit/gklavcmp3tag) alone in GStreamer's harness: ffmpeg's label
 * ("Lavc…", "Lavf") in a first frame's LAME tag becomes "LAME", so that mpegaudioparse reads the
 * delay; LAME's own tag, a frame without a Xing/Info header and every later buffer pass as they came.
 */
#include <string.h>
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gklavcmp3tag"); }
GST_END_TEST;

/* An MPEG-1 layer III stereo frame (44.1 kHz, 128 kb/s: 417 bytes) with an Info header that
 * has every optional field, so the tag is at 4 + 32 + 8 + 4 + 4 + 100 + 4 = 156. */
#define TAG_AT 156
static GstBuffer *first_frame(const char *label) {
    GstBuffer *b = gst_buffer_new_allocate(NULL, 417, NULL);
    GstMapInfo map;
    fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE));
    memset(map.data, 0, map.size);
    const guint8 header[] = { 0xFF, 0xFB, 0x90, 0x00 };
    memcpy(map.data, header, 4);
    if (label != NULL) {
        memcpy(map.data + 36, "Info", 4);
        GST_WRITE_UINT32_BE(map.data + 40, 0xF);
        memcpy(map.data + TAG_AT, label, strlen(label));
    }
    gst_buffer_unmap(b, &map);
    return b;
}

static gchar *label_of(GstBuffer *b) {
    gchar label[5] = { 0 };
    gst_buffer_extract(b, TAG_AT, label, 4);
    return g_strdup(label);
}

static void check_relabels(const char *in, const char *want) {
    GstHarness *h = gst_harness_new("gklavcmp3tag");
    gst_harness_set_src_caps_str(h, "audio/mpeg, mpegversion=(int)1, layer=(int)3");
    fail_unless_equals_int(gst_harness_push(h, first_frame(in)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, first_frame(in)), GST_FLOW_OK);
    GstBuffer *first = gst_harness_pull(h), *second = gst_harness_pull(h);
    gchar *a = label_of(first), *b = label_of(second);
    fail_unless_equals_string(a, want);
    fail_unless(strncmp(b, in, 4) == 0, "a later buffer was changed: %s", b); /* the first frame only */
    g_free(a);
    g_free(b);
    gst_buffer_unref(first);
    gst_buffer_unref(second);
    gst_harness_teardown(h);
}

GST_START_TEST(test_ffmpeg_labels_become_lame)
{
    check_relabels("Lavc60.31", "LAME");
    check_relabels("Lavf", "LAME");
}
GST_END_TEST;

GST_START_TEST(test_lame_and_other_tags_pass)
{
    check_relabels("LAME3.100", "LAME");
    check_relabels("Xyzw", "Xyzw");
}
GST_END_TEST;

GST_START_TEST(test_a_plain_frame_passes_untouched)
{
    GstHarness *h = gst_harness_new("gklavcmp3tag");
    gst_harness_set_src_caps_str(h, "audio/mpeg, mpegversion=(int)1, layer=(int)3");
    GstBuffer *in = first_frame(NULL);
    gst_buffer_ref(in);
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer *out = gst_harness_pull(h);
    fail_unless(out == in);
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gklavcmp3tag_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gklavcmp3tag", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_ffmpeg_labels_become_lame);
    tcase_add_test(tc, test_lame_and_other_tags_pass);
    tcase_add_test(tc, test_a_plain_frame_passes_untouched);
    return s;
}

GST_CHECK_MAIN(gklavcmp3tag);
