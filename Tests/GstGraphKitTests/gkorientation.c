/*
 * gkorientation (Sources/GstGraphKit/gkorientation) alone in GStreamer's harness: every tag event
 * says the orientation set (added when the tags had none, replaced when they said another); with
 * "keep" tags pass as they came.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkorientation"); }
GST_END_TEST;

/* The orientation the next tag event downstream says (NULL: none), after pushing `tags`. */
static gchar *orientation_after(const char *property, GstTagList *tags) {
    GstHarness *h = gst_harness_new("gkorientation");
    if (property) gst_util_set_object_arg(G_OBJECT(h->element), "orientation", property);
    gst_harness_set_src_caps_str(h, "video/x-raw, format=(string)I420, width=(int)4, height=(int)4, framerate=(fraction)25/1");
    fail_unless(gst_harness_push_event(h, gst_event_new_tag(tags)));
    GstEvent *event = gk_check_next_event(h, GST_EVENT_TAG);
    fail_unless(event != NULL, "no tag event came out");
    GstTagList *out = NULL;
    gst_event_parse_tag(event, &out);
    gchar *value = NULL;
    if (!gst_tag_list_get_string(out, GST_TAG_IMAGE_ORIENTATION, &value)) value = NULL;
    gst_event_unref(event);
    gst_harness_teardown(h);
    return value;
}

GST_START_TEST(test_states_the_orientation)
{
    gchar *v = orientation_after("flip-rotate-0", gst_tag_list_new(GST_TAG_IMAGE_ORIENTATION, "rotate-0", NULL));
    fail_unless_equals_string(v, "flip-rotate-0");
    g_free(v);
    v = orientation_after("rotate-90", gst_tag_list_new(GST_TAG_TITLE, "a title", NULL));
    fail_unless_equals_string(v, "rotate-90");
    g_free(v);
}
GST_END_TEST;

GST_START_TEST(test_keep_leaves_tags_alone)
{
    gchar *v = orientation_after(NULL, gst_tag_list_new(GST_TAG_IMAGE_ORIENTATION, "rotate-270", NULL));
    fail_unless_equals_string(v, "rotate-270");
    g_free(v);
    v = orientation_after("keep", gst_tag_list_new(GST_TAG_TITLE, "a title", NULL));
    fail_unless(v == NULL, "an orientation was added: %s", v);
}
GST_END_TEST;

static Suite *gkorientation_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkorientation", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_states_the_orientation);
    tcase_add_test(tc, test_keep_leaves_tags_alone);
    return s;
}

GST_CHECK_MAIN(gkorientation);
