/*
 * gkwhipsink (Sources/GstGraphKit/gkwhipsink) without a network: its pads and properties, and
 * that it refuses to start without a URL it can use, saying so. The WHIP exchange itself is
 * tested against an endpoint in Tests/NodesTests/Sinks/WHIPSinkNodeTests.swift.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkwhipsink"); }
GST_END_TEST;

/* A pad of each kind, the webrtcbin inside; the token can be set and never read back. */
GST_START_TEST(test_pads_and_properties)
{
    GstElement *e = gst_element_factory_make("gkwhipsink", NULL);
    fail_unless(e != NULL);
    GstPad *video = gst_element_request_pad_simple(e, "video");
    fail_unless(video != NULL);
    GstPad *audio = gst_element_request_pad_simple(e, "audio");
    fail_unless(audio != NULL);
    GstElement *webrtc = gst_bin_get_by_name(GST_BIN(e), "webrtc");
    fail_unless(webrtc != NULL);
    gst_object_unref(webrtc);
    GParamSpec *token = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "token");
    fail_unless(token != NULL && (token->flags & G_PARAM_WRITABLE) && !(token->flags & G_PARAM_READABLE), "the token is readable");
    g_object_set(e, "token", "secret", "timeout", 3u, NULL);
    guint timeout = 0;
    g_object_get(e, "timeout", &timeout, NULL);
    fail_unless_equals_int(timeout, 3);
    fail_unless(GST_OBJECT_FLAG_IS_SET(e, GST_ELEMENT_FLAG_SINK), "the pipeline would not wait for its end of stream");
    gst_object_unref(video);
    gst_object_unref(audio);
    gst_object_unref(e);
}
GST_END_TEST;

/* A URL that is not http(s): the element does not start, and its error says why. */
GST_START_TEST(test_refuses_to_start_without_a_usable_url)
{
    GstElement *pipeline = gst_pipeline_new(NULL);
    GstElement *e = gst_element_factory_make("gkwhipsink", NULL);
    g_object_set(e, "url", "ftp://127.0.0.1/whip", NULL);
    gst_bin_add(GST_BIN(pipeline), e);
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m != NULL, "no error");
    GError *error = NULL;
    gst_message_parse_error(m, &error, NULL);
    fail_unless(strstr(error->message, "WHIP URL") != NULL, "%s", error->message);
    g_error_free(error);
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
}
GST_END_TEST;

static Suite *gkwhipsink_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkwhipsink", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_pads_and_properties);
    tcase_add_test(tc, test_refuses_to_start_without_a_usable_url);
    return s;
}

GST_CHECK_MAIN(gkwhipsink);
