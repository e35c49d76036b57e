/*
 * gkrisingtimes (Sources/GstGraphKit/gkrisingtimes) alone in GStreamer's harness: rising decode
 * times pass untouched; the first that goes back or repeats fails the stream with an error that
 * names the input and both times, and is not passed on.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkrisingtimes"); }
GST_END_TEST;

static GstBuffer *stamped(GstClockTime dts) {
    GstBuffer *b = gst_buffer_new_allocate(NULL, 16, NULL);
    GST_BUFFER_DTS(b) = dts;
    GST_BUFFER_PTS(b) = dts + 10 * GST_MSECOND;
    return b;
}

GST_START_TEST(test_rising_times_pass)
{
    GstHarness *h = gst_harness_new("gkrisingtimes");
    gst_harness_set_src_caps_str(h, "audio/mpeg, mpegversion=(int)4");
    for (int i = 0; i < 5; i++) fail_unless_equals_int(gst_harness_push(h, stamped(i * 23 * GST_MSECOND)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 5);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Decode times 0, 23, 46, 40 ms: what mp4mux writes without a word (GStreamer 1.22, 1.26.2). */
GST_START_TEST(test_a_time_going_back_fails_naming_the_input)
{
    GstHarness *h = gst_harness_new("gkrisingtimes");
    g_object_set(h->element, "input", "audio", NULL);
    GstBus *bus = gk_check_bus(h);
    gst_harness_set_src_caps_str(h, "audio/mpeg, mpegversion=(int)4");
    const guint ms[] = { 0, 23, 46 };
    for (guint i = 0; i < G_N_ELEMENTS(ms); i++) fail_unless_equals_int(gst_harness_push(h, stamped(ms[i] * GST_MSECOND)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, stamped(40 * GST_MSECOND)), GST_FLOW_ERROR);
    fail_unless_equals_int(gst_harness_buffers_received(h), 3);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m != NULL, "no error posted");
    GError *error = NULL;
    gst_message_parse_error(m, &error, NULL);
    fail_unless(g_error_matches(error, GST_STREAM_ERROR, GST_STREAM_ERROR_FORMAT));
    fail_unless(strstr(error->message, "the audio input's time stamps go back at 0.040 s (after 0.046 s)") != NULL, "%s", error->message);
    g_error_free(error);
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_a_repeated_time_fails)
{
    GstHarness *h = gst_harness_new("gkrisingtimes");
    gst_harness_set_src_caps_str(h, "video/x-h264");
    fail_unless_equals_int(gst_harness_push(h, stamped(GST_SECOND)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, stamped(GST_SECOND)), GST_FLOW_ERROR);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkrisingtimes_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkrisingtimes", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_rising_times_pass);
    tcase_add_test(tc, test_a_time_going_back_fails_naming_the_input);
    tcase_add_test(tc, test_a_repeated_time_fails);
    return s;
}

GST_CHECK_MAIN(gkrisingtimes);
