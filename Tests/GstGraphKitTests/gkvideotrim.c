/*
 * gkvideotrim (Sources/GstGraphKit/gkvideotrim) alone in GStreamer's harness: frames within an
 * edit's media range are stamped where the edit plays them, the others left out; nothing changes
 * with timescale 0; a list that goes back in the media, overlaps or does not read is ignored.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkvideotrim"); }
GST_END_TEST;

#define FRAME (GST_SECOND / 25)

/* 25 frames a second, frame n at n/25 s, lasting 1/25 s, its one byte n. */
static void push_frames(GstHarness *h, guint count) {
    gst_harness_set_src_caps_str(h, "video/x-raw, format=(string)GRAY8, width=(int)1, height=(int)1, framerate=(fraction)25/1");
    for (guint n = 0; n < count; n++) {
        GstBuffer *b = gst_buffer_new_allocate(NULL, 1, NULL);
        gst_buffer_memset(b, 0, (guint8)n, 1);
        GST_BUFFER_PTS(b) = n * FRAME;
        GST_BUFFER_DURATION(b) = FRAME;
        fail_unless_equals_int(gst_harness_push(h, b), GST_FLOW_OK);
    }
}

/* The frames that left, as "n@ms" (the frame's number, its time in milliseconds). */
static GString *drain(GstHarness *h) {
    GString *out = g_string_new(NULL);
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h)) != NULL) {
        guint8 n = 0;
        gst_buffer_extract(b, 0, &n, 1);
        g_string_append_printf(out, "%s%u@%" G_GUINT64_FORMAT, out->len ? " " : "", n, GST_BUFFER_PTS(b) / GST_MSECOND);
        gst_buffer_unref(b);
    }
    return out;
}

/* Two edits of a 12,800-a-second clock: media 0.10 s to 0.22 s plays at 0, then 0.30 s to 0.38 s
 * at 0.16 s (after the first's 0.12 s and an empty edit's 0.04 s): frames 3 to 5, then 8 and 9;
 * frame 2 (at 0.08 s, before the first edit's start) and 6, 7 (between the edits) are left out. */
GST_START_TEST(test_frames_within_the_edits_show_where_they_play)
{
    GstHarness *h = gst_harness_new("gkvideotrim");
    g_object_set(h->element, "edits", "1280:2816:0,3840:4864:2048", "timescale", 12800, NULL);
    push_frames(h, 12);
    GString *out = drain(h);
    /* 1280 ticks = 0.1 s: frame 3 is at 0.12 s, 0.02 s into the edit. */
    fail_unless_equals_string(out->str, "3@20 4@60 5@100 8@180 9@220");
    g_string_free(out, TRUE);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_timescale_zero_changes_nothing)
{
    GstHarness *h = gst_harness_new("gkvideotrim");
    g_object_set(h->element, "edits", "1280:2816:0,3840:4864:2048", "timescale", 0, NULL);
    push_frames(h, 3);
    GString *out = drain(h);
    fail_unless_equals_string(out->str, "0@0 1@40 2@80");
    g_string_free(out, TRUE);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Edits that go back in the media, overlap, are empty or do not read are not applied. */
GST_START_TEST(test_a_list_it_cannot_apply_is_ignored)
{
    const char *lists[] = {"3840:4864:0,1280:2816:1024", "1280:4000:0,3840:4864:2720", "1280:1280:0,3840:4864:0",
                           "1280:2816", "1280:2816:0,x:4864:1", "-5:2816:0,3840:4864:2048", "1280:2816:0,3840:99999999999999999999:1"};
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
        GstHarness *h = gst_harness_new("gkvideotrim");
        g_object_set(h->element, "edits", lists[i], "timescale", 12800, NULL);
        push_frames(h, 2);
        GString *out = drain(h);
        fail_unless(g_str_equal(out->str, "0@0 1@40"), "list %s gave %s", lists[i], out->str);
        g_string_free(out, TRUE);
        gst_harness_teardown(h);
    }
}
GST_END_TEST;

/* A seek's presentation times go upstream as the media times that play there; the segment that
 * comes back after it leaves at the presentation time it starts; the duration is the edits'. */
GST_START_TEST(test_seeks_and_segments_cross_the_edit_list)
{
    GstHarness *h = gst_harness_new("gkvideotrim");
    /* Media 0.10-0.22 s plays at 0, media 0.30-0.38 s at 0.16 s (after a 0.04 s gap). */
    g_object_set(h->element, "edits", "1280:2816:0,3840:4864:2048", "timescale", 12800, NULL);
    gst_harness_set_src_caps_str(h, "video/x-raw, format=(string)GRAY8, width=(int)1, height=(int)1, framerate=(fraction)25/1");
    const gint64 asked[] = {0, 20 * GST_MSECOND, 140 * GST_MSECOND, 180 * GST_MSECOND, GST_SECOND};
    const gint64 media[] = {100 * GST_MSECOND, 120 * GST_MSECOND, 300 * GST_MSECOND, 320 * GST_MSECOND, 380 * GST_MSECOND};
    for (guint i = 0; i < G_N_ELEMENTS(asked); i++) {
        fail_unless(gst_harness_push_upstream_event(h, gst_event_new_seek(1.0, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH, GST_SEEK_TYPE_SET, asked[i],
                                                                          GST_SEEK_TYPE_NONE, -1)));
        GstEvent *seek = NULL;
        while ((seek = gst_harness_try_pull_upstream_event(h)) != NULL && GST_EVENT_TYPE(seek) != GST_EVENT_SEEK) gst_event_unref(seek);
        fail_unless(seek != NULL);
        gint64 start = -1;
        gst_event_parse_seek(seek, NULL, NULL, NULL, NULL, &start, NULL, NULL);
        fail_unless_equals_int64(start, media[i]);
        gst_event_unref(seek);
    }
    GstEvent *earlier;
    while ((earlier = gst_harness_try_pull_event(h)) != NULL) gst_event_unref(earlier);  /* the harness's own first segment */
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    segment.start = segment.time = segment.position = 320 * GST_MSECOND;
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    GstEvent *out = gk_check_next_event(h, GST_EVENT_SEGMENT);
    fail_unless(out != NULL);
    const GstSegment *moved = NULL;
    gst_event_parse_segment(out, &moved);
    fail_unless_equals_uint64(moved->start, 180 * GST_MSECOND);
    fail_unless_equals_uint64(moved->time, 180 * GST_MSECOND);
    gst_event_unref(out);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkvideotrim_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkvideotrim", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_frames_within_the_edits_show_where_they_play);
    tcase_add_test(tc, test_timescale_zero_changes_nothing);
    tcase_add_test(tc, test_a_list_it_cannot_apply_is_ignored);
    tcase_add_test(tc, test_seeks_and_segments_cross_the_edit_list);
    return s;
}

GST_CHECK_MAIN(gkvideotrim);
