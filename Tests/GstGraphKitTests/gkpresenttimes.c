/*
 * gkpresenttimes (Sources/GstGraphKit/gkpresenttimes) alone in GStreamer's harness: an edit
 * list's offset (segment start against time) leaves the stamps and the segment together; frames
 * out of time order are left out and counted in one warning; overlapping sound is cut to the sample.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkpresenttimes"); }
GST_END_TEST;

static GstBuffer *frame(GstClockTime pts) {
    GstBuffer *b = gst_buffer_new_allocate(NULL, 24, NULL);
    GST_BUFFER_PTS(b) = pts;
    GST_BUFFER_DURATION(b) = 40 * GST_MSECOND;
    return b;
}

#define VIDEO "video/x-raw, format=(string)I420, width=(int)4, height=(int)4, framerate=(fraction)25/1"

/* qtdemux's segment for a B-frame track's edit: start 80 ms (media time), time 0. */
GST_START_TEST(test_an_edit_offset_leaves_the_stamps)
{
    GstHarness *h = gst_harness_new("gkpresenttimes");
    gst_harness_set_src_caps_str(h, VIDEO);
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    segment.start = 80 * GST_MSECOND;
    segment.time = 0;
    segment.stop = 1080 * GST_MSECOND;
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    for (int i = 0; i < 3; i++) fail_unless_equals_int(gst_harness_push(h, frame((GstClockTime)(80 + 40 * i) * GST_MSECOND)), GST_FLOW_OK);
    for (int i = 0; i < 3; i++) {
        GstBuffer *b = gst_harness_pull(h);
        fail_unless_equals_uint64(GST_BUFFER_PTS(b), (guint64)(40 * i) * GST_MSECOND);
        gst_buffer_unref(b);
    }
    GstEvent *event = gk_check_next_event(h, GST_EVENT_SEGMENT), *later;
    while ((later = gk_check_next_event(h, GST_EVENT_SEGMENT)) != NULL) { gst_event_unref(event); event = later; }
    fail_unless(event != NULL); /* the last: the harness sent one of its own first */
    const GstSegment *out = NULL;
    gst_event_parse_segment(event, &out);
    fail_unless_equals_uint64(out->start, 0);
    fail_unless_equals_uint64(out->time, 0);
    fail_unless_equals_uint64(out->stop, GST_SECOND);
    gst_event_unref(event);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_frames_out_of_order_are_left_out_with_a_warning)
{
    GstHarness *h = gst_harness_new("gkpresenttimes");
    GstBus *bus = gk_check_bus(h);
    gst_harness_set_src_caps_str(h, VIDEO);
    const guint ms[] = { 0, 40, 80, 40, 80, 120 };
    for (guint i = 0; i < G_N_ELEMENTS(ms); i++) gst_harness_push(h, frame(ms[i] * GST_MSECOND));
    fail_unless_equals_int(gst_harness_buffers_received(h), 4);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
    fail_unless(m != NULL, "no warning");
    GError *error = NULL;
    gst_message_parse_warning(m, &error, NULL);
    fail_unless(strstr(error->message, "2 video frames out of time order left out") != NULL, "%s", error->message);
    g_error_free(error);
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Sound that starts 100 ms before the last buffer's end (joined transport streams) loses the
 * overlap to the sample; an overlap within 20 ms is left as it is. */
GST_START_TEST(test_overlapping_sound_is_cut_to_the_sample)
{
    GstHarness *h = gst_harness_new("gkpresenttimes");
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(8000));
    gst_harness_push(h, gk_check_counted_samples(0, 8000, 8000));   /* 0 - 1 s */
    gst_harness_push(h, gk_check_counted_samples(7200, 1600, 8000)); /* 0.9 - 1.1 s */
    gst_harness_push(h, gk_check_counted_samples(8720, 800, 8000)); /* 10 ms early: kept */
    gst_buffer_unref(gst_harness_pull(h));
    GstBuffer *cut = gst_harness_pull(h);
    fail_unless_equals_uint64(GST_BUFFER_PTS(cut), GST_SECOND);
    fail_unless_equals_int(gst_buffer_get_size(cut), 800 * 2);
    gint16 sample = 0;
    gst_buffer_extract(cut, 0, &sample, 2);
    fail_unless_equals_int(sample, 8000);
    gst_buffer_unref(cut);
    GstBuffer *kept = gst_harness_try_pull(h);
    fail_unless(kept != NULL, "the sound 10 ms early was left out");
    fail_unless_equals_int(gst_buffer_get_size(kept), 800 * 2);
    gst_buffer_unref(kept);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkpresenttimes_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkpresenttimes", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_an_edit_offset_leaves_the_stamps);
    tcase_add_test(tc, test_frames_out_of_order_are_left_out_with_a_warning);
    tcase_add_test(tc, test_overlapping_sound_is_cut_to_the_sample);
    return s;
}

GST_CHECK_MAIN(gkpresenttimes);
