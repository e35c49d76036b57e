/*
 * gkavdec (Sources/GstGraphKit/gkavdec) alone in GStreamer's harness: H.264 and HEVC made here
 * (x264enc, x265enc, with B-frames) decode to the same pictures as avdec_h264's and avdec_h265's,
 * bit for bit, in presentation order, every frame out at the end of the stream; handed on
 * uncopied (one read-only memory and a video meta) to a downstream that reads video metas, in
 * GStreamer's own layout to one that does not; a flush drops what was pending; a damaged stream
 * is an error or a concealed picture, never a crash.
 */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include <gst/app/gstappsink.h>
#include "common.h"

#define FRAMES 75
#define WIDTH 318 /* not a multiple of 16: the decoder crops its padded picture */
#define HEIGHT 178

typedef struct {
    GstCaps *caps;
    GPtrArray *buffers; /* in decode order */
} Stream;

static const struct {
    const char *encode;
    const char *reference;
} codecs[] = {
    { "x264enc speed-preset=veryfast bframes=3 key-int-max=30 ! h264parse ! video/x-h264,stream-format=avc,alignment=au",
      "avdec_h264" },
    { "x264enc speed-preset=veryfast bframes=3 key-int-max=30 ! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au",
      "avdec_h264" },
    { "x265enc speed-preset=veryfast key-int-max=30 option-string=bframes=3 ! h265parse ! "
      "video/x-h265,stream-format=hvc1,alignment=au",
      "avdec_h265" },
};

/* FRAMES frames of a moving ball, encoded by `encode` (a gst-launch-1.0 fragment). */
static Stream make_stream(const char *encode) {
    char *line = g_strdup_printf("videotestsrc num-buffers=%d pattern=ball ! video/x-raw,format=I420,width=%d,height=%d,"
                                 "framerate=30/1 ! %s ! appsink name=out sync=false", FRAMES, WIDTH, HEIGHT, encode);
    GError *error = NULL;
    GstElement *pipeline = gst_parse_launch(line, &error);
    fail_unless(pipeline != NULL && error == NULL, "%s: %s", line, error ? error->message : "no pipeline");
    g_free(line);
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "out");
    fail_unless_equals_int(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_ASYNC);
    Stream s = { NULL, g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref) };
    GstSample *sample;
    while ((sample = gst_app_sink_pull_sample(GST_APP_SINK(sink))) != NULL) {
        if (!s.caps) s.caps = gst_caps_ref(gst_sample_get_caps(sample));
        g_ptr_array_add(s.buffers, gst_buffer_ref(gst_sample_get_buffer(sample)));
        gst_sample_unref(sample);
    }
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(sink);
    gst_object_unref(pipeline);
    fail_unless_equals_int(s.buffers->len, FRAMES);
    return s;
}

static void free_stream(Stream *s) {
    gst_caps_unref(s->caps);
    g_ptr_array_unref(s->buffers);
}

static GstHarness *decoder(const char *element, const Stream *s, gboolean reads_meta) {
    GstHarness *h = gst_harness_new(element);
    if (reads_meta) gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    gst_harness_set_src_caps(h, gst_caps_ref(s->caps));
    return h;
}

/* Pushes buffers [from, to) of `s`; returns the first flow that was not OK (or OK). */
static GstFlowReturn push(GstHarness *h, const Stream *s, guint from, guint to) {
    for (guint i = from; i < to; i++) {
        const GstFlowReturn ret = gst_harness_push(h, gst_buffer_ref(g_ptr_array_index(s->buffers, i)));
        if (ret != GST_FLOW_OK) return ret;
    }
    return GST_FLOW_OK;
}

/* Everything the element has sent so far, in order. */
static GPtrArray *pull_all(GstHarness *h) {
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h)) != NULL) g_ptr_array_add(out, b);
    return out;
}

/* The stream decoded whole by `element`: the pictures, in the order they came out. */
static GPtrArray *decode(const char *element, const Stream *s, gboolean reads_meta, GstVideoInfo *info) {
    GstHarness *h = decoder(element, s, reads_meta);
    fail_unless_equals_int(push(h, s, 0, s->buffers->len), GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    GPtrArray *out = pull_all(h);
    GstCaps *caps = gk_check_output_caps(h);
    fail_unless(gst_video_info_from_caps(info, caps));
    gst_caps_unref(caps);
    gst_harness_teardown(h);
    return out;
}

/* The visible pixels of two pictures of `info` are the same, whatever their layouts. */
static gboolean same_picture(const GstVideoInfo *info, GstBuffer *a, GstBuffer *b) {
    GstVideoFrame x, y;
    fail_unless(gst_video_frame_map(&x, (GstVideoInfo *)info, a, GST_MAP_READ));
    fail_unless(gst_video_frame_map(&y, (GstVideoInfo *)info, b, GST_MAP_READ));
    gboolean same = TRUE;
    for (guint c = 0; c < GST_VIDEO_INFO_N_COMPONENTS(info) && same; c++) {
        const guint plane = GST_VIDEO_INFO_COMP_PLANE(info, c);
        const gint row = GST_VIDEO_FRAME_COMP_WIDTH(&x, c) * GST_VIDEO_FRAME_COMP_PSTRIDE(&x, c);
        for (gint r = 0; r < GST_VIDEO_FRAME_COMP_HEIGHT(&x, c) && same; r++) {
            const guint8 *p = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&x, plane) + r * GST_VIDEO_FRAME_PLANE_STRIDE(&x, plane);
            const guint8 *q = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&y, plane) + r * GST_VIDEO_FRAME_PLANE_STRIDE(&y, plane);
            same = memcmp(p, q, (gsize)row) == 0;
        }
    }
    gst_video_frame_unmap(&x);
    gst_video_frame_unmap(&y);
    return same;
}

static gint compare_times(gconstpointer a, gconstpointer b) {
    const GstClockTime x = *(const GstClockTime *)a, y = *(const GstClockTime *)b;
    return x < y ? -1 : x > y;
}

/* The stream's presentation times, sorted: what must come out, in that order. */
static GArray *presentation_times(const Stream *s, guint from) {
    GArray *t = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    for (guint i = from; i < s->buffers->len; i++) g_array_append_val(t, GST_BUFFER_PTS((GstBuffer *)g_ptr_array_index(s->buffers, i)));
    g_array_sort(t, compare_times);
    return t;
}

GST_START_TEST(test_from_the_plugin_file)
{
    gk_check_from_plugin_file("gkavdec");
}
GST_END_TEST;

/* Every frame comes out once the stream ends, in presentation order, with the reference
 * decoder's pixels; the stream has B-frames (times out of order in decode order). */
GST_START_TEST(test_decodes_like_libav_in_order)
{
    Stream s = make_stream(codecs[__i__].encode);
    gboolean reordered = FALSE;
    for (guint i = 1; i < s.buffers->len; i++)
        reordered |= GST_BUFFER_PTS((GstBuffer *)g_ptr_array_index(s.buffers, i)) < GST_BUFFER_PTS((GstBuffer *)g_ptr_array_index(s.buffers, i - 1));
    fail_unless(reordered, "the encoder made no B-frames");
    GstVideoInfo ours_info, their_info;
    GPtrArray *theirs = decode(codecs[__i__].reference, &s, FALSE, &their_info);
    for (int reads_meta = 0; reads_meta < 2; reads_meta++) {
        GPtrArray *ours = decode("gkavdec", &s, reads_meta, &ours_info);
        fail_unless_equals_int(ours->len, FRAMES);
        fail_unless_equals_int(theirs->len, FRAMES);
        fail_unless_equals_string(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&ours_info)), "I420");
        fail_unless_equals_int(GST_VIDEO_INFO_WIDTH(&ours_info), WIDTH);
        fail_unless_equals_int(GST_VIDEO_INFO_HEIGHT(&ours_info), HEIGHT);
        GArray *times = presentation_times(&s, 0);
        for (guint i = 0; i < ours->len; i++) {
            GstBuffer *b = g_ptr_array_index(ours, i);
            fail_unless_equals_uint64(GST_BUFFER_PTS(b), g_array_index(times, GstClockTime, i));
            fail_unless_equals_uint64(GST_BUFFER_PTS(b), GST_BUFFER_PTS((GstBuffer *)g_ptr_array_index(theirs, i)));
            fail_unless(same_picture(&ours_info, b, g_ptr_array_index(theirs, i)), "frame %u differs from %s's", i,
                        codecs[__i__].reference);
            if (reads_meta) {
                /* Uncopied: libavcodec's block, read-only, its layout in the meta. */
                fail_unless_equals_int(gst_buffer_n_memory(b), 1);
                fail_unless(GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(b, 0)));
                fail_unless(gst_buffer_get_video_meta(b) != NULL);
            } else {
                fail_unless_equals_uint64(gst_buffer_get_size(b), GST_VIDEO_INFO_SIZE(&ours_info));
            }
        }
        g_array_unref(times);
        g_ptr_array_unref(ours);
    }
    g_ptr_array_unref(theirs);
    free_stream(&s);
}
GST_END_TEST;

/* A reader that writes into a shared picture writes into a copy: the decoder's stays as it was. */
GST_START_TEST(test_a_writer_gets_a_copy)
{
    Stream s = make_stream(codecs[0].encode);
    GstHarness *h = decoder("gkavdec", &s, TRUE);
    fail_unless_equals_int(push(h, &s, 0, 20), GST_FLOW_OK);
    GstBuffer *shared = gst_harness_pull(h);
    GstMapInfo before, after;
    fail_unless(gst_buffer_map(shared, &before, GST_MAP_READ));
    const guint8 first = before.data[0];
    GstBuffer *mine = gst_buffer_make_writable(gst_buffer_ref(shared));
    fail_unless(gst_buffer_map(mine, &after, GST_MAP_WRITE));
    fail_unless(after.data != before.data, "the write map did not copy the decoder's picture");
    after.data[0] = (guint8)(first + 1);
    gst_buffer_unmap(mine, &after);
    fail_unless_equals_int(before.data[0], first);
    gst_buffer_unmap(shared, &before);
    gst_buffer_unref(mine);
    gst_buffer_unref(shared);
    gst_harness_teardown(h);
    free_stream(&s);
}
GST_END_TEST;

/* A flush (a seek) drops the pictures pending; decoding goes on from the next keyframe with
 * exactly the frames from there, the reference's pixels. */
GST_START_TEST(test_flush_then_go_on_from_a_keyframe)
{
    Stream s = make_stream(codecs[0].encode);
    GstVideoInfo info;
    GPtrArray *whole = decode("gkavdec", &s, TRUE, &info);
    guint key = 0;
    for (guint i = 20; i < s.buffers->len && !key; i++)
        if (!GST_BUFFER_FLAG_IS_SET((GstBuffer *)g_ptr_array_index(s.buffers, i), GST_BUFFER_FLAG_DELTA_UNIT)) key = i;
    fail_unless(key > 0, "no keyframe after the 20th frame");

    GstHarness *h = decoder("gkavdec", &s, TRUE);
    fail_unless_equals_int(push(h, &s, 0, key + 10), GST_FLOW_OK);
    g_ptr_array_unref(pull_all(h));
    fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
    fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    fail_unless_equals_int(push(h, &s, key, s.buffers->len), GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    GPtrArray *after = pull_all(h);
    GArray *times = presentation_times(&s, key);
    fail_unless_equals_int(after->len, times->len);
    const guint skipped = whole->len - after->len;
    for (guint i = 0; i < after->len; i++) {
        GstBuffer *b = g_ptr_array_index(after, i);
        fail_unless_equals_uint64(GST_BUFFER_PTS(b), g_array_index(times, GstClockTime, i));
        fail_unless(same_picture(&info, b, g_ptr_array_index(whole, skipped + i)));
    }
    g_array_unref(times);
    g_ptr_array_unref(after);
    g_ptr_array_unref(whole);
    gst_harness_teardown(h);
    free_stream(&s);
}
GST_END_TEST;

/* A new stream mid-way (other caps: HEVC after H.264): the first's pictures all come out, then
 * the second's, from a decoder opened for it. And the latency says what libavcodec holds back. */
GST_START_TEST(test_a_new_stream_mid_way)
{
    Stream h264 = make_stream(codecs[0].encode), hevc = make_stream(codecs[2].encode);
    GstHarness *h = decoder("gkavdec", &h264, TRUE);
    fail_unless_equals_int(push(h, &h264, 0, h264.buffers->len), GST_FLOW_OK);
    fail_unless(gst_harness_query_latency(h) > 0, "no latency for a stream with B-frames");
    gst_harness_set_src_caps(h, gst_caps_ref(hevc.caps));
    fail_unless_equals_int(push(h, &hevc, 0, hevc.buffers->len), GST_FLOW_OK);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    GPtrArray *out = pull_all(h);
    fail_unless_equals_int(out->len, 2 * FRAMES);
    g_ptr_array_unref(out);
    gst_harness_teardown(h);
    free_stream(&h264);
    free_stream(&hevc);
}
GST_END_TEST;

/* The end of a stream with nothing in it, and a stream ended twice (after a flush), end cleanly. */
GST_START_TEST(test_end_of_stream_without_frames)
{
    Stream s = make_stream(codecs[0].encode);
    GstHarness *h = decoder("gkavdec", &s, TRUE);
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    fail_unless_equals_int(gst_harness_buffers_in_queue(h), 0);
    gst_harness_teardown(h);
    free_stream(&s);
}
GST_END_TEST;

/* Bytes that are no stream at all: an element error and a flow error, with max-errors 0 (the
 * default, -1 as avdec_h264's, conceals and goes on: the next test); never a crash. */
GST_START_TEST(test_garbage_is_an_error_not_a_crash)
{
    Stream s = make_stream(codecs[__i__].encode);
    GstHarness *h = decoder("gkavdec", &s, TRUE);
    g_object_set(h->element, "max-errors", 0, NULL);
    GstBus *bus = gk_check_bus(h);
    GRand *rand = g_rand_new_with_seed(51);
    GstFlowReturn ret = GST_FLOW_OK;
    for (int i = 0; i < 40 && ret == GST_FLOW_OK; i++) {
        const gsize size = 16 + g_rand_int_range(rand, 0, 4000);
        guint8 *bytes = g_malloc(size);
        for (gsize j = 0; j < size; j++) bytes[j] = (guint8)g_rand_int(rand);
        if (i % 2 == 0) bytes[0] = bytes[1] = bytes[2] = 0, bytes[3] = 1; /* looks like a NAL unit's start */
        GstBuffer *b = gst_buffer_new_wrapped(bytes, size);
        GST_BUFFER_PTS(b) = (GstClockTime)i * GST_SECOND / 30;
        ret = gst_harness_push(h, b);
    }
    gst_harness_push_event(h, gst_event_new_eos());
    GstMessage *error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(ret == GST_FLOW_ERROR, "flow %s", gst_flow_get_name(ret));
    fail_unless(error != NULL, "a flow error without an element error");
    if (error) gst_message_unref(error);
    g_rand_free(rand);
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
    free_stream(&s);
}
GST_END_TEST;

/* A real stream with bytes flipped and packets cut short: what decodes comes out, in order
 * (a late picture of a frame shown past is dropped, not given a time out of order), for twenty
 * ways of damaging it. */
static void decode_damaged(Stream s, guint32 seed) {
    GstHarness *h = decoder("gkavdec", &s, TRUE);
    GRand *rand = g_rand_new_with_seed(seed);
    for (guint i = 0; i < s.buffers->len; i++) {
        GstBuffer *b = gst_buffer_copy_deep(g_ptr_array_index(s.buffers, i));
        GstMapInfo map;
        fail_unless(gst_buffer_map(b, &map, GST_MAP_WRITE));
        if (i > 0 && map.size > 16) {
            for (int k = 0; k < 8; k++) map.data[8 + g_rand_int_range(rand, 0, (gint32)map.size - 8)] ^= 0xff;
        }
        gst_buffer_unmap(b, &map);
        if (i % 7 == 3) gst_buffer_resize(b, 0, (gssize)(gst_buffer_get_size(b) / 2));
        const GstFlowReturn ret = gst_harness_push(h, b);
        fail_unless(ret == GST_FLOW_OK || ret == GST_FLOW_ERROR);
        if (ret != GST_FLOW_OK) break;
    }
    gst_harness_push_event(h, gst_event_new_eos());
    GPtrArray *out = pull_all(h);
    GstClockTime last = GST_CLOCK_TIME_NONE;
    for (guint i = 0; i < out->len; i++) {
        const GstClockTime pts = GST_BUFFER_PTS((GstBuffer *)g_ptr_array_index(out, i));
        fail_unless(GST_CLOCK_TIME_IS_VALID(pts), "seed %u: picture %u without a time", seed, i);
        fail_unless(!GST_CLOCK_TIME_IS_VALID(last) || pts > last, "seed %u: picture %u at %" GST_TIME_FORMAT " after %" GST_TIME_FORMAT,
                    seed, i, GST_TIME_ARGS(pts), GST_TIME_ARGS(last));
        last = pts;
    }
    g_ptr_array_unref(out);
    g_rand_free(rand);
    gst_harness_teardown(h);
}

GST_START_TEST(test_damaged_stream_decodes_what_it_can)
{
    Stream s = make_stream(codecs[__i__].encode);
    for (guint32 seed = 40; seed < 60; seed++) decode_damaged(s, seed);
    free_stream(&s);
}
GST_END_TEST;

/* An empty packet is nothing to decode: every other frame still comes out (libavcodec takes an
 * empty packet as the stream's end, and would forget its pictures so far). */
GST_START_TEST(test_an_empty_packet_is_skipped)
{
    Stream s = make_stream(codecs[__i__].encode);
    GstHarness *h = decoder("gkavdec", &s, TRUE);
    for (guint i = 0; i < s.buffers->len; i++) {
        if (i == 5) {
            GstBuffer *empty = gst_buffer_new();
            GST_BUFFER_PTS(empty) = 5 * GST_SECOND / 30 + 1;
            fail_unless(gst_harness_push(h, empty) == GST_FLOW_OK);
        }
        fail_unless(gst_harness_push(h, gst_buffer_ref(g_ptr_array_index(s.buffers, i))) == GST_FLOW_OK);
    }
    gst_harness_push_event(h, gst_event_new_eos());
    GPtrArray *out = pull_all(h);
    fail_unless_equals_int(out->len, s.buffers->len);
    g_ptr_array_unref(out);
    gst_harness_teardown(h);
    free_stream(&s);
}
GST_END_TEST;

/* codec_data no decoder would read (a megabyte and more) is refused, saying why. */
GST_START_TEST(test_refuses_absurd_codec_data)
{
    GstHarness *h = gst_harness_new("gkavdec");
    GstBus *bus = gk_check_bus(h);
    GstBuffer *huge = gst_buffer_new_allocate(NULL, (1 << 20) + 1, NULL);
    gst_buffer_memset(huge, 0, 1, (1 << 20) + 1);
    GstCaps *caps = gst_caps_new_simple("video/x-h264", "stream-format", G_TYPE_STRING, "avc", "alignment", G_TYPE_STRING, "au",
                                        "codec_data", GST_TYPE_BUFFER, huge, NULL);
    gst_buffer_unref(huge);
    gst_harness_set_src_caps(h, caps);
    GstBuffer *b = gst_buffer_new_allocate(NULL, 64, NULL);
    gst_buffer_memset(b, 0, 0, 64);
    fail_unless(gst_harness_push(h, b) != GST_FLOW_OK);
    GstMessage *error = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(error != NULL);
    GError *e = NULL;
    gst_message_parse_error(error, &e, NULL);
    fail_unless(strstr(e->message, "too large") != NULL, "%s", e->message);
    g_error_free(e);
    gst_message_unref(error);
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}
GST_END_TEST;

static Suite *gkavdec_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkavdec", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_loop_test(tc, test_decodes_like_libav_in_order, 0, G_N_ELEMENTS(codecs));
    tcase_add_test(tc, test_a_writer_gets_a_copy);
    tcase_add_test(tc, test_flush_then_go_on_from_a_keyframe);
    tcase_add_test(tc, test_a_new_stream_mid_way);
    tcase_add_test(tc, test_end_of_stream_without_frames);
    tcase_add_loop_test(tc, test_garbage_is_an_error_not_a_crash, 0, G_N_ELEMENTS(codecs));
    tcase_add_loop_test(tc, test_damaged_stream_decodes_what_it_can, 0, G_N_ELEMENTS(codecs));
    tcase_add_loop_test(tc, test_an_empty_packet_is_skipped, 0, G_N_ELEMENTS(codecs));
    tcase_add_test(tc, test_refuses_absurd_codec_data);
    return s;
}

GST_CHECK_MAIN(gkavdec);
