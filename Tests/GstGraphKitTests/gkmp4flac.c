/*
 * gkmp4flac (Sources/GstGraphKit/gkmp4flac) alone in GStreamer's harness: a FLAC stream's frames
 * go on under stand-in Opus caps of its rate and channels, its header buffers do not, and its
 * header (with what the encoder rewrites at the end, after a byte segment) is the `header`
 * property; other streams pass untouched.
 */
#include "common.h"

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gkmp4flac"); }
GST_END_TEST;

/* A STREAMINFO block as a native stream has it (4-byte header, 34 bytes): 4096-sample blocks,
 * 44.1 kHz, `channels`, 16 bits, sample count and MD5 unknown (0). */
static GstBuffer *streaminfo(int channels) {
    guint8 b[38] = { 0x00, 0x00, 0x00, 0x22, 0x10, 0x00, 0x10, 0x00 };
    guint32 rate = 44100;
    b[4 + 10] = rate >> 12;
    b[4 + 11] = (rate >> 4) & 0xFF;
    b[4 + 12] = (guint8)((rate & 0x0F) << 4 | (channels - 1) << 1 | 0);
    b[4 + 13] = (16 - 1) << 4;
    return gst_buffer_new_memdup(b, sizeof b);
}

static GstBuffer *bytes(const char *data, gsize size) { return gst_buffer_new_memdup(data, size); }

/* A FLAC frame's first bytes (the sync code, fixed block size), then filler. */
static GstBuffer *frame(GstClockTime pts, guint8 fill) {
    guint8 b[32];
    memset(b, fill, sizeof b);
    b[0] = 0xFF;
    b[1] = 0xF8;
    GstBuffer *buffer = gst_buffer_new_memdup(b, sizeof b);
    GST_BUFFER_PTS(buffer) = GST_BUFFER_DTS(buffer) = pts;
    GST_BUFFER_DURATION(buffer) = 4096 * GST_SECOND / 44100;
    return buffer;
}

static GstBuffer *header_property(GstHarness *h) {
    GstBuffer *header = NULL;
    g_object_get(h->element, "header", &header, NULL);
    return header;
}

static void start_flac(GstHarness *h, int channels) {
    gchar *caps = g_strdup_printf("audio/x-flac, framed=(boolean)true, rate=(int)44100, channels=(int)%d", channels);
    gst_harness_set_src_caps_str(h, caps);
    g_free(caps);
}

GST_START_TEST(test_frames_go_on_under_opus_caps_and_the_header_stays)
{
    GstHarness *h = gst_harness_new("gkmp4flac");
    start_flac(h, 2);
    GstCaps *out = gk_check_output_caps(h);
    GstStructure *s = gst_caps_get_structure(out, 0);
    fail_unless(gst_structure_has_name(s, "audio/x-opus"), "%" GST_PTR_FORMAT, out);
    gint rate = 0, channels = 0, family = -1;
    fail_unless(gst_structure_get_int(s, "rate", &rate) && rate == 44100);
    fail_unless(gst_structure_get_int(s, "channels", &channels) && channels == 2);
    fail_unless(gst_structure_get_int(s, "channel-mapping-family", &family) && family == 0);
    gst_caps_unref(out);
    fail_unless(header_property(h) == NULL, "a header before the first frame");

    fail_unless_equals_int(gst_harness_push(h, bytes("fLaC", 4)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, streaminfo(2)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, bytes("\x84\x00\x00\x04" "abcd", 8)), GST_FLOW_OK);  /* a last block */
    fail_unless_equals_int(gst_harness_push(h, frame(0, 1)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, frame(4096 * GST_SECOND / 44100, 2)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 2);
    GstBuffer *first = gst_harness_pull(h);
    guint8 sync[2];
    gst_buffer_extract(first, 0, sync, 2);
    fail_unless(sync[0] == 0xFF && sync[1] == 0xF8 && GST_BUFFER_PTS(first) == 0);
    gst_buffer_unref(first);

    GstBuffer *header = header_property(h);
    fail_unless(header != NULL);
    fail_unless_equals_int(gst_buffer_get_size(header), 4 + 38 + 8);
    fail_unless(gst_buffer_memcmp(header, 0, "fLaC", 4) == 0);
    fail_unless(gst_buffer_memcmp(header, 42, "\x84\x00\x00\x04" "abcd", 8) == 0);
    gst_buffer_unref(header);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* flacenc rewrites STREAMINFO at the end where downstream says it seeks in bytes: a byte segment,
 * then the bytes (here the MD5, at byte 26 of the stream). They edit the header, go no further. */
GST_START_TEST(test_the_encoders_rewrite_edits_the_header)
{
    GstHarness *h = gst_harness_new("gkmp4flac");
    start_flac(h, 1);
    GstQuery *seeking = gst_query_new_seeking(GST_FORMAT_BYTES);
    fail_unless(gst_pad_peer_query(h->srcpad, seeking));
    gboolean seekable = FALSE;
    gst_query_parse_seeking(seeking, NULL, &seekable, NULL, NULL);
    fail_unless(seekable, "a FLAC stream's encoder is not told it can rewrite its header");
    gst_query_unref(seeking);

    gst_harness_push(h, bytes("fLaC", 4));
    gst_harness_push(h, streaminfo(1));
    gst_harness_push(h, frame(0, 1));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_BYTES);
    segment.start = 26;
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    const char md5[] = "0123456789abcdef";
    fail_unless_equals_int(gst_harness_push(h, bytes(md5, 16)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_buffers_received(h), 1);
    /* The byte segment went no further than the element. */
    GstEvent *event;
    while ((event = gst_harness_try_pull_event(h)) != NULL) {
        if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
            const GstSegment *passed = NULL;
            gst_event_parse_segment(event, &passed);
            fail_unless(passed->format == GST_FORMAT_TIME, "a byte segment reached the muxer");
        }
        gst_event_unref(event);
    }
    GstBuffer *header = header_property(h);
    fail_unless(header != NULL);
    fail_unless(gst_buffer_memcmp(header, 26, md5, 16) == 0, "the MD5 written at the end is not in the header");
    gst_buffer_unref(header);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Past stereo: channel mapping family 255, one stream a channel, none coupled (the caps mp4mux's
 * Opus path reads without a stream header). */
GST_START_TEST(test_six_channels_take_family_255)
{
    GstHarness *h = gst_harness_new("gkmp4flac");
    start_flac(h, 6);
    GstCaps *out = gk_check_output_caps(h);
    GstStructure *s = gst_caps_get_structure(out, 0);
    gint family = -1, streams = 0, coupled = -1;
    fail_unless(gst_structure_get_int(s, "channel-mapping-family", &family) && family == 255);
    fail_unless(gst_structure_get_int(s, "stream-count", &streams) && streams == 6);
    fail_unless(gst_structure_get_int(s, "coupled-count", &coupled) && coupled == 0);
    const GValue *mapping = gst_structure_get_value(s, "channel-mapping");
    fail_unless(mapping != NULL && gst_value_array_get_size(mapping) == 6);
    for (guint i = 0; i < 6; i++) fail_unless_equals_int(g_value_get_int(gst_value_array_get_value(mapping, i)), i);
    gst_caps_unref(out);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* No header in the stream (a demuxer that states it in the caps only): the caps' streamheader, in
 * Ogg's first-packet form as flacenc and flacparse give it, becomes a native header. */
GST_START_TEST(test_the_caps_header_serves_when_none_came_in_the_stream)
{
    GstHarness *h = gst_harness_new("gkmp4flac");
    GstBuffer *info = streaminfo(2);
    GstMapInfo map;
    gst_buffer_map(info, &map, GST_MAP_READ);
    guint8 ogg[9 + 4 + 38];
    memcpy(ogg, "\x7f" "FLAC\x01\x00\x00\x01" "fLaC", 13);
    memcpy(ogg + 13, map.data, 38);
    gst_buffer_unmap(info, &map);
    gst_buffer_unref(info);
    GstCaps *caps = gst_caps_from_string("audio/x-flac, framed=(boolean)true, rate=(int)44100, channels=(int)2");
    GValue array = G_VALUE_INIT, value = G_VALUE_INIT;
    g_value_init(&array, GST_TYPE_ARRAY);
    g_value_init(&value, GST_TYPE_BUFFER);
    GstBuffer *packet = gst_buffer_new_memdup(ogg, sizeof ogg);
    gst_value_set_buffer(&value, packet);
    gst_buffer_unref(packet);
    gst_value_array_append_value(&array, &value);
    gst_structure_set_value(gst_caps_get_structure(caps, 0), "streamheader", &array);
    g_value_unset(&value);
    g_value_unset(&array);
    gst_harness_set_src_caps(h, caps);
    fail_unless_equals_int(gst_harness_push(h, frame(0, 1)), GST_FLOW_OK);
    GstBuffer *header = header_property(h);
    fail_unless(header != NULL);
    fail_unless_equals_int(gst_buffer_get_size(header), 4 + 38);
    fail_unless(gst_buffer_memcmp(header, 0, "fLaC\x00\x00\x00\x22", 8) == 0);
    gst_buffer_unref(header);
    gst_harness_teardown(h);
}
GST_END_TEST;

GST_START_TEST(test_other_streams_pass_untouched)
{
    GstHarness *h = gst_harness_new("gkmp4flac");
    gst_harness_set_src_caps_str(h, "audio/mpeg, mpegversion=(int)4, stream-format=(string)raw, rate=(int)48000, channels=(int)2");
    GstCaps *out = gk_check_output_caps(h);
    fail_unless(gst_structure_has_name(gst_caps_get_structure(out, 0), "audio/mpeg"));
    gst_caps_unref(out);
    GstBuffer *in = bytes("not FLAC at all", 15);
    GST_BUFFER_PTS(in) = 0;
    fail_unless_equals_int(gst_harness_push(h, in), GST_FLOW_OK);
    GstBuffer *passed = gst_harness_pull(h);
    fail_unless(gst_buffer_memcmp(passed, 0, "not FLAC at all", 15) == 0);
    gst_buffer_unref(passed);
    fail_unless(header_property(h) == NULL);
    GstQuery *seeking = gst_query_new_seeking(GST_FORMAT_BYTES);
    gboolean seekable = FALSE;
    if (gst_pad_peer_query(h->srcpad, seeking)) gst_query_parse_seeking(seeking, NULL, &seekable, NULL, NULL);
    fail_unless(!seekable, "a stream that is not FLAC was told the output seeks in bytes");
    gst_query_unref(seeking);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* After the frames began, a buffer that is not a frame (and no byte segment before it) is an
 * error: it would be written as a sample no decoder reads. */
GST_START_TEST(test_a_stray_buffer_after_the_frames_fails)
{
    GstHarness *h = gst_harness_new("gkmp4flac");
    GstBus *bus = gk_check_bus(h);
    start_flac(h, 2);
    gst_harness_push(h, bytes("fLaC", 4));
    gst_harness_push(h, streaminfo(2));
    fail_unless_equals_int(gst_harness_push(h, frame(0, 1)), GST_FLOW_OK);
    fail_unless_equals_int(gst_harness_push(h, bytes("junk", 4)), GST_FLOW_ERROR);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m != NULL, "no error posted");
    GError *error = NULL;
    gst_message_parse_error(m, &error, NULL);
    fail_unless(strstr(error->message, "a buffer of 4 bytes in a FLAC stream after its frames began is not a FLAC frame") != NULL, "%s", error->message);
    g_error_free(error);
    gst_message_unref(m);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkmp4flac_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkmp4flac", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_frames_go_on_under_opus_caps_and_the_header_stays);
    tcase_add_test(tc, test_the_encoders_rewrite_edits_the_header);
    tcase_add_test(tc, test_six_channels_take_family_255);
    tcase_add_test(tc, test_the_caps_header_serves_when_none_came_in_the_stream);
    tcase_add_test(tc, test_other_streams_pass_untouched);
    tcase_add_test(tc, test_a_stray_buffer_after_the_frames_fails);
    return s;
}

GST_CHECK_MAIN(gkmp4flac);
