/*
 * gkencoderdelay (Sources/GstGraphKit/gkencoderdelay) alone in GStreamer's harness, around
 * GStreamer's AAC encoder: the samples in are counted, the span out measured, and just before
 * the EOS "graphkit-encoder-delay" says priming = out - in; the output's segment is left open at
 * its end.
 */
#include <math.h>
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkencoderdelay"); }
GST_END_TEST;

GST_START_TEST(test_measures_the_priming)
{
    /* avenc_aac takes planar float: audioconvert makes it, and passes the count on. */
    GstHarness *h = gst_harness_new_parse("audioconvert ! gkencoderdelay encoder-factory=avenc_aac");
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(48000));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    segment.stop = gst_util_uint64_scale(3000, GST_SECOND, 48000); /* a demuxer's: the input's end */
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    for (gint64 at = 0; at < 3000; at += 1000)
        fail_unless_equals_int(gst_harness_push(h, gk_check_counted_samples(at, 1000, 48000)), GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    /* The span of what came out, as the element measures it. */
    GstClockTime first = GST_CLOCK_TIME_NONE, end = 0;
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h)) != NULL) {
        if (!GST_CLOCK_TIME_IS_VALID(first)) first = GST_BUFFER_PTS(b);
        end = GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b);
        gst_buffer_unref(b);
    }
    gint64 out = (gint64)gst_util_uint64_scale_round(end - first, 48000, GST_SECOND);
    fail_unless(out >= 3000 + 1024, "the encoder gave %" G_GINT64_FORMAT " samples", out);
    /* The events that left, in order: the last segment, then the delay, then the EOS. */
    GstEvent *seg = NULL, *fact = NULL, *event;
    gboolean eos_after_fact = FALSE;
    while ((event = gst_harness_try_pull_event(h)) != NULL) {
        if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) { if (seg) gst_event_unref(seg); seg = event; continue; }
        if (GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_DOWNSTREAM && fact == NULL) { fact = event; continue; }
        if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) eos_after_fact = fact != NULL;
        gst_event_unref(event);
    }
    fail_unless(seg != NULL);
    const GstSegment *open = NULL;
    gst_event_parse_segment(seg, &open);
    fail_unless(!GST_CLOCK_TIME_IS_VALID(open->stop), "the segment's end was passed on");
    gst_event_unref(seg);
    fail_unless(fact != NULL, "no encoder delay event");
    const GstStructure *s = gst_event_get_structure(fact);
    fail_unless(gst_structure_has_name(s, "graphkit-encoder-delay"));
    gint64 priming = 0, samples = 0;
    gint rate = 0;
    fail_unless(gst_structure_get_int64(s, "priming", &priming) && gst_structure_get_int64(s, "samples", &samples) &&
                gst_structure_get_int(s, "rate", &rate));
    fail_unless_equals_int64(priming, out - 3000);
    fail_unless_equals_int64(samples, 3000);
    fail_unless_equals_int(rate, 48000);
    gst_event_unref(fact);
    fail_unless(eos_after_fact, "the EOS should follow the delay");
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_the_encoder_is_set_once)
{
    GstElement *e = gst_element_factory_make("gkencoderdelay", NULL);
    g_object_set(e, "encoder-factory", "avenc_aac", NULL);
    ASSERT_WARNING(g_object_set(e, "encoder-factory", "avenc_aac", NULL));
    gchar *factory = NULL;
    g_object_get(e, "encoder-factory", &factory, NULL);
    fail_unless_equals_string(factory, "avenc_aac");
    fail_unless_equals_int(GST_BIN(e)->numchildren, 1);
    g_free(factory);
    gst_object_unref(e);
}
GST_END_TEST;

/* The first sample whose size is over `level` in S16 mono `data`; -1 for none. */
static gint64 onset(const gint16 *data, gint64 count, gint level) {
    for (gint64 i = 0; i < count; i++)
        if (data[i] > level || data[i] < -level) return i;
    return -1;
}

/* Where a tone that starts 4,800 samples in is heard, decoded, `skip` samples of input left out:
 * the decoded samples' index of its onset; *first_pts gets the output's first time stamp. */
static gint64 heard_at(guint skip, GstClockTime *first_pts) {
    char *description = g_strdup_printf("audioconvert ! gkencoderdelay encoder-factory=avenc_aac skip-priming=%u ! aacparse ! avdec_aac "
                                        "! audioconvert ! capsfilter caps=audio/x-raw,format=S16LE,channels=1", skip);
    GstHarness *h = gst_harness_new_parse(description);
    g_free(description);
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(48000));
    /* 0.3 s in buffers of 10 ms: silence, then a 1 kHz tone from sample 4,800 (0.1 s). */
    for (gint64 at = 0; at < 14400; at += 480) {
        GstBuffer *b = gst_buffer_new_allocate(NULL, 480 * 2, NULL);
        GstMapInfo map;
        fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE));
        gint16 *samples = (gint16 *)map.data;
        for (gint64 i = 0; i < 480; i++) samples[i] = at + i < 4800 ? 0 : (gint16)(16000 * sin(2 * G_PI * 1000 * (double)(at + i) / 48000));
        gst_buffer_unmap(b, &map);
        GST_BUFFER_PTS(b) = gst_util_uint64_scale_int((guint64)at, GST_SECOND, 48000);
        GST_BUFFER_DURATION(b) = gst_util_uint64_scale_int(480, GST_SECOND, 48000);
        fail_unless_equals_int(gst_harness_push(h, b), GST_FLOW_OK);
    }
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    GByteArray *decoded = g_byte_array_new();
    *first_pts = GST_CLOCK_TIME_NONE;
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h)) != NULL) {
        if (!GST_CLOCK_TIME_IS_VALID(*first_pts)) *first_pts = GST_BUFFER_PTS(b);
        GstMapInfo map;
        fail_unless(gst_buffer_map(b, &map, GST_MAP_READ));
        g_byte_array_append(decoded, map.data, (guint)map.size);
        gst_buffer_unmap(b, &map);
        gst_buffer_unref(b);
    }
    const gint64 at = onset((const gint16 *)decoded->data, decoded->len / 2, 4000);
    g_byte_array_unref(decoded);
    gst_harness_teardown(h);
    return at;
}

/* skip-priming: the tone is heard where it was in the input, counted from the output's first
 * sample (which keeps the input's first time stamp); without it, the priming's 1,024 samples
 * later. */
GST_START_TEST(test_skipping_the_priming_puts_the_sound_at_its_time)
{
    GstClockTime start = 0;
    const gint64 late = heard_at(0, &start);
    fail_unless(late >= 4800 + 1024 - 64 && late <= 4800 + 1024 + 64, "without a skip the tone is heard at %" G_GINT64_FORMAT, late);
    fail_unless_equals_uint64(start, 0);
    const gint64 on_time = heard_at(1024, &start);
    fail_unless(on_time >= 4800 - 64 && on_time <= 4800 + 64, "skipping the priming, the tone is heard at %" G_GINT64_FORMAT, on_time);
    fail_unless_equals_uint64(start, 0);
    fail_unless_equals_int64(late - on_time, 1024);
}
GST_END_TEST;

/* skip-priming: the event at the end says no priming is left, over every input sample. */
GST_START_TEST(test_a_skipped_priming_is_none_left)
{
    GstHarness *h = gst_harness_new_parse("audioconvert ! gkencoderdelay encoder-factory=avenc_aac skip-priming=1024");
    gst_harness_set_src_caps_str(h, GK_CHECK_MONO_S16(48000));
    for (gint64 at = 0; at < 3000; at += 1000)
        fail_unless_equals_int(gst_harness_push(h, gk_check_counted_samples(at, 1000, 48000)), GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    GstEvent *event, *fact = NULL;
    while ((event = gst_harness_try_pull_event(h)) != NULL) {
        if (GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_DOWNSTREAM && fact == NULL) fact = event;
        else gst_event_unref(event);
    }
    fail_unless(fact != NULL, "no encoder delay event");
    gint64 priming = -1, samples = 0;
    fail_unless(gst_structure_get_int64(gst_event_get_structure(fact), "priming", &priming) &&
                gst_structure_get_int64(gst_event_get_structure(fact), "samples", &samples));
    fail_unless_equals_int64(priming, 0);
    fail_unless_equals_int64(samples, 3000);
    gst_event_unref(fact);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkencoderdelay_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkencoderdelay", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_measures_the_priming);
    tcase_add_test(tc, test_the_encoder_is_set_once);
    tcase_add_test(tc, test_skipping_the_priming_puts_the_sound_at_its_time);
    tcase_add_test(tc, test_a_skipped_priming_is_none_left);
    return s;
}

GST_CHECK_MAIN(gkencoderdelay);
