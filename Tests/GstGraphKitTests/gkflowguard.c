/*
 * gkflowguard (Sources/GstGraphKit/gkflowguard) alone in GStreamer's harness: buffers pass; what
 * the peer answers (an error, flushing, nothing linked) reaches upstream as OK and is counted;
 * waiting for a key frame drops headers and delta units until the first other buffer, which
 * goes on marked discontinuous.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkflowguard"); }
GST_END_TEST;

static GstBuffer *buffer(GstBufferFlags flags) {
    GstBuffer *b = gst_buffer_new_allocate(NULL, 16, NULL);
    GST_BUFFER_FLAG_SET(b, flags);
    return b;
}

static GstFlowReturn refuse(GstPad *pad, GstObject *parent, GstBuffer *b) {
    (void)pad; (void)parent;
    gst_buffer_unref(b);
    return GST_FLOW_ERROR;
}

GST_START_TEST(test_what_the_peer_answers_is_taken_as_ok)
{
    GstHarness *h = gst_harness_new("gkflowguard");
    gst_harness_set_src_caps_str(h, "video/x-flv");
    fail_unless_equals_int(gst_harness_push(h, buffer(0)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 1);
    /* The peer answers an error: the guard answers OK, and counts it. */
    gst_pad_set_chain_function(h->sinkpad, refuse);
    fail_unless_equals_int(gst_harness_push(h, buffer(0)), GST_FLOW_OK);
    /* Nothing linked (the sink removed while it is replaced): OK too. */
    GstPad *src = gst_element_get_static_pad(h->element, "src");
    GstPad *peer = gst_pad_get_peer(src);
    gst_pad_unlink(src, peer);
    fail_unless_equals_int(gst_harness_push(h, buffer(0)), GST_FLOW_OK);
    gint64 dropped = 0;
    g_object_get(h->element, "dropped", &dropped, NULL);
    fail_unless_equals_int64(dropped, 2);
    fail_unless(gst_pad_link(src, peer) == GST_PAD_LINK_OK);
    gst_object_unref(peer);
    gst_object_unref(src);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_waiting_for_a_key_frame)
{
    GstHarness *h = gst_harness_new("gkflowguard");
    gst_harness_set_src_caps_str(h, "video/x-flv");
    g_object_set(h->element, "wait-for-keyframe", TRUE, NULL);
    fail_unless_equals_int(gst_harness_push(h, buffer(GST_BUFFER_FLAG_DELTA_UNIT)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, buffer(GST_BUFFER_FLAG_HEADER)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 0);
    fail_unless_equals_int(gst_harness_push(h, buffer(0)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, buffer(GST_BUFFER_FLAG_DELTA_UNIT)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 2);
    GstBuffer *key = gst_harness_pull(h);
    fail_unless(GST_BUFFER_FLAG_IS_SET(key, GST_BUFFER_FLAG_DISCONT));
    gst_buffer_unref(key);
    gboolean waiting = TRUE;
    g_object_get(h->element, "wait-for-keyframe", &waiting, NULL);
    fail_if(waiting);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* An FLV tag as flvmux pushes it: type, data size, time and stream, `data`, the tag's size. */
static GstBuffer *tag(guint8 type, guint8 first) {
    guint8 bytes[11 + 4 + 4] = { type, 0, 0, 4 };
    bytes[11] = first;
    return gst_buffer_new_memdup(bytes, sizeof bytes);
}

/* In FLV the sound's tags are not delta units: only a video key frame's tag ends the wait. */
GST_START_TEST(test_waiting_for_a_key_frame_in_flv)
{
    GstHarness *h = gst_harness_new("gkflowguard");
    gst_harness_set_src_caps_str(h, "video/x-flv");
    g_object_set(h->element, "wait-for-keyframe", TRUE, NULL);
    fail_unless_equals_int(gst_harness_push(h, tag(8, 0xaf)), GST_FLOW_OK);  /* AAC */
    GstBuffer *delta = tag(9, 0x27);                                          /* inter frame, AVC */
    GST_BUFFER_FLAG_SET(delta, GST_BUFFER_FLAG_DELTA_UNIT);
    fail_unless_equals_int(gst_harness_push(h, delta), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 0);
    fail_unless_equals_int(gst_harness_push(h, tag(9, 0x17)), GST_FLOW_OK);  /* key frame, AVC */
    fail_unless_equals_int(gst_harness_push(h, tag(8, 0xaf)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 2);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Holding end of stream: it does not go on, and the guard says one came; released, the next one does. */
GST_START_TEST(test_holding_end_of_stream)
{
    GstHarness *h = gst_harness_new("gkflowguard");
    gst_harness_set_src_caps_str(h, "video/x-h264");
    g_object_set(h->element, "hold-eos", TRUE, NULL);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    gboolean held = FALSE;
    g_object_get(h->element, "eos-held", &held, NULL);
    fail_unless(held);
    GstEvent *e;
    while ((e = gst_harness_try_pull_event(h)) != NULL) {
        fail_if(GST_EVENT_TYPE(e) == GST_EVENT_EOS, "an end of stream went on while held");
        gst_event_unref(e);
    }
    /* Let go, the end it held goes on. */
    g_object_set(h->element, "hold-eos", FALSE, NULL);
    gboolean ended_now = FALSE;
    while ((e = gst_harness_try_pull_event(h)) != NULL) {
        ended_now |= GST_EVENT_TYPE(e) == GST_EVENT_EOS;
        gst_event_unref(e);
    }
    fail_unless(ended_now, "the end held was not sent on when let go");
    /* A new session begins with its stream-start, which takes the end off the pad. */
    fail_unless(gst_harness_push_event(h, gst_event_new_stream_start("session-2")));
    fail_unless(gst_harness_push(h, gst_buffer_new_allocate(NULL, 8, NULL)) == GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    gboolean ended = FALSE;
    while ((e = gst_harness_try_pull_event(h)) != NULL) {
        ended |= GST_EVENT_TYPE(e) == GST_EVENT_EOS;
        gst_event_unref(e);
    }
    fail_unless(ended);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkflowguard_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkflowguard", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_what_the_peer_answers_is_taken_as_ok);
    tcase_add_test(tc, test_waiting_for_a_key_frame);
    tcase_add_test(tc, test_waiting_for_a_key_frame_in_flv);
    tcase_add_test(tc, test_holding_end_of_stream);
    return s;
}

GST_CHECK_MAIN(gkflowguard);
