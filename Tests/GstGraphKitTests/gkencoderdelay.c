/*
 * gkencoderdelay (Sources/GstGraphKit/gkencoderdelay) alone in GStreamer's harness: the raw
 * samples into `sink` are counted, the span of what comes back into `encoded_sink` is measured,
 * and just before the EOS "graphkit-encoder-delay" says priming = out - in; the encoded side's
 * segment is left open at its end.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkencoderdelay"); }
GST_END_TEST;

GST_START_TEST(test_measures_the_priming)
{
    GstElement *e = gst_element_factory_make("gkencoderdelay", NULL);
    fail_unless(e != NULL);
    GstHarness *raw = gst_harness_new_with_element(e, "sink", "src");
    GstHarness *encoded = gst_harness_new_with_element(e, "encoded_sink", "encoded_src");
    gst_harness_set_src_caps_str(raw, GK_CHECK_MONO_S16(48000));
    for (gint64 at = 0; at < 3000; at += 1000) gst_harness_push(raw, gk_check_counted_samples(at, 1000, 48000));
    fail_unless_equals_int(gst_harness_buffers_received(raw), 3);
    /* An AAC encoder's output: 4 frames of 1024 from -1024 samples (the priming). */
    gst_harness_set_src_caps_str(encoded, "audio/mpeg, mpegversion=(int)4, stream-format=(string)raw");
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    segment.stop = gst_util_uint64_scale(3000, GST_SECOND, 48000);
    fail_unless(gst_harness_push_event(encoded, gst_event_new_segment(&segment)));
    for (int i = 0; i < 4; i++) {
        GstBuffer *b = gst_buffer_new_allocate(NULL, 100, NULL);
        GST_BUFFER_PTS(b) = gst_util_uint64_scale_round((guint64)(1024 * i), GST_SECOND, 48000);
        GST_BUFFER_DURATION(b) = gst_util_uint64_scale_round((guint64)(1024 * (i + 1)), GST_SECOND, 48000) - GST_BUFFER_PTS(b);
        fail_unless_equals_int(gst_harness_push(encoded, b), GST_FLOW_OK);
    }
    fail_unless(gst_harness_push_event(encoded, gst_event_new_eos()));
    GstEvent *seg = gk_check_next_event(encoded, GST_EVENT_SEGMENT);
    fail_unless(seg != NULL);
    const GstSegment *open = NULL;
    gst_event_parse_segment(seg, &open);
    fail_unless(!GST_CLOCK_TIME_IS_VALID(open->stop), "the segment's end was passed on");
    gst_event_unref(seg);
    GstEvent *fact = gk_check_next_event(encoded, GST_EVENT_CUSTOM_DOWNSTREAM);
    fail_unless(fact != NULL, "no encoder delay event");
    const GstStructure *s = gst_event_get_structure(fact);
    fail_unless(gst_structure_has_name(s, "graphkit-encoder-delay"));
    gint64 priming = 0, samples = 0;
    gint rate = 0;
    fail_unless(gst_structure_get_int64(s, "priming", &priming) && gst_structure_get_int64(s, "samples", &samples) &&
                gst_structure_get_int(s, "rate", &rate));
    fail_unless_equals_int64(priming, 4096 - 3000);
    fail_unless_equals_int64(samples, 3000);
    fail_unless_equals_int(rate, 48000);
    gst_event_unref(fact);
    fail_unless(gk_check_next_event(encoded, GST_EVENT_EOS) != NULL, "the EOS should follow the delay");
    gst_harness_teardown(encoded);
    gst_harness_teardown(raw);
    gst_object_unref(e);
}
GST_END_TEST;

static Suite *gkencoderdelay_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkencoderdelay", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_measures_the_priming);
    return s;
}

GST_CHECK_MAIN(gkencoderdelay);
