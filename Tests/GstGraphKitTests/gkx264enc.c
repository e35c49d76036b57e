/*
 * gkx264enc (Sources/GstGraphKit/gkx264enc) alone in GStreamer's harness: I420 frames of a
 * moving picture made here go in; what comes out is checked for its structure (caps, frame
 * count, keyframes, time stamps), never its bytes, which change with x264's version. And what the
 * element is for: each raw frame let go as soon as x264 has copied it, seen on the frame's own
 * reference count, where GStreamer's x264enc holds one for each frame of x264's delay.
 */
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include "common.h"

#define WIDTH 320
#define HEIGHT 240
/* The time the base class shifts every time stamp by (x264enc's too): B-frames' first DTS lie
 * before their first PTS, and GStreamer's times cannot be negative. */
#define SHIFT (GST_SECOND * 60 * 60 * 1000)

static GstClockTime time_of(int frame) { return gst_util_uint64_scale_int(frame, GST_SECOND, 30); }
/* The input frame whose (shifted) time stamp an output buffer has. */
static int frame_at(GstClockTime pts) { return (int)gst_util_uint64_scale_round(pts - SHIFT, 30, GST_SECOND); }

/* An encoder (`element` and its properties, as gst-launch-1.0 writes them) between I420 frames of
 * w×h at 30 fps and a downstream that takes `downstream`. */
static GstHarness *encoder(const char *element, const char *downstream, int w, int h) {
    gchar **words = g_strsplit(element, " ", -1);
    GstHarness *hs = gst_harness_new(words[0]);
    for (int i = 1; words[i]; i++) {
        gchar **pair = g_strsplit(words[i], "=", 2);
        gst_util_set_object_arg(G_OBJECT(hs->element), pair[0], pair[1]);
        g_strfreev(pair);
    }
    g_strfreev(words);
    /* Downstream's first: the encoder reads them when the input's caps arrive. */
    gst_harness_set_sink_caps_str(hs, downstream);
    char *caps = g_strdup_printf("video/x-raw,format=I420,width=%d,height=%d,framerate=30/1", w, h);
    gst_harness_set_src_caps_str(hs, caps);
    g_free(caps);
    return hs;
}

/* Frame i: a gradient scrolling a pixel a frame and a box moving across it, stamped i/30 s. */
static GstBuffer *frame(int i, int w, int h) {
    const int luma = w * h, cw = (w + 1) / 2, chroma = cw * ((h + 1) / 2);
    GstBuffer *buffer = gst_buffer_new_allocate(NULL, (gsize)(luma + 2 * chroma), NULL);
    GstMapInfo map;
    fail_unless(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
    const int box_left = (4 * i) % w, box_top = h / 3;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const gboolean in_box = y >= box_top && y < box_top + 40 && x >= box_left && x < box_left + 40;
            map.data[y * w + x] = in_box ? 235 : (guint8)(16 + (x + y + i) % 200);
        }
    for (int j = 0; j < chroma; j++) {
        map.data[luma + j] = (guint8)(96 + (j % cw + i) % 64);
        map.data[luma + chroma + j] = (guint8)(160 - (j / cw) % 64);
    }
    gst_buffer_unmap(buffer, &map);
    GST_BUFFER_PTS(buffer) = time_of(i);
    GST_BUFFER_DURATION(buffer) = time_of(i + 1) - time_of(i);
    return buffer;
}

static void push_frames(GstHarness *h, int from, int count, int w, int hh) {
    for (int i = from; i < from + count; i++) fail_unless_equals_int(gst_harness_push(h, frame(i, w, hh)), GST_FLOW_OK);
}

static gint compare_times(gconstpointer a, gconstpointer b) {
    const GstClockTime x = *(const GstClockTime *)a, y = *(const GstClockTime *)b;
    return x < y ? -1 : x > y;
}

static gboolean is_keyframe(GstBuffer *b) { return !GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT); }

/* Ends the stream and takes every encoded buffer, in the order they left; *count says how many. */
static GstBuffer **finish(GstHarness *h, int *count) {
    fail_unless(gst_harness_push_event(h, gst_event_new_eos()));
    *count = (int)gst_harness_buffers_in_queue(h);
    GstBuffer **out = g_new0(GstBuffer *, *count + 1);
    for (int i = 0; i < *count; i++) out[i] = gst_harness_pull(h);
    return out;
}

static void free_buffers(GstBuffer **buffers, int count) {
    for (int i = 0; i < count; i++) gst_buffer_unref(buffers[i]);
    g_free(buffers);
}

/* x264's delay in frames, as the element reports it in its latency. */
static int latency_frames(GstHarness *h) {
    return (int)((gst_harness_query_latency(h) * 30 + GST_SECOND / 2) / GST_SECOND);
}

/* Pushes 60 frames, each keeping a reference of ours; returns how many were still held by the
 * encoder (a reference beside ours) once their push had returned. */
static int frames_held_after_push(GstHarness *h) {
    int held = 0;
    for (int i = 0; i < 60; i++) {
        GstBuffer *raw = frame(i, WIDTH, HEIGHT);
        fail_unless_equals_int(gst_harness_push(h, gst_buffer_ref(raw)), GST_FLOW_OK);
        if (GST_MINI_OBJECT_REFCOUNT_VALUE(raw) > 1) held++;
        gst_buffer_unref(raw);
    }
    return held;
}

GST_START_TEST(test_from_the_plugin_file)
{
    gk_check_from_plugin_file("gkx264enc");
}
GST_END_TEST;

/* Every raw frame is let go once its push returns, while x264 still holds its picture (nothing
 * has come out yet for the first frames of its delay); and every frame comes out at the end. */
GST_START_TEST(test_lets_each_frame_go_once_x264_has_copied_it)
{
    GstHarness *h = encoder("gkx264enc speed-preset=veryfast bitrate=1000", "video/x-h264,profile=high", WIDTH, HEIGHT);
    fail_unless_equals_int(frames_held_after_push(h), 0);
    const int delay = latency_frames(h);
    fail_unless(delay >= 10, "x264's delay is %d frames: too short to tell held frames from passing ones", delay);
    fail_unless(gst_harness_buffers_received(h) <= (guint)(60 - delay + 1), "%u out of 60 before the end: no delay",
                gst_harness_buffers_received(h));
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 60);
    free_buffers(out, count);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* The same measure sees GStreamer's x264enc hold a raw frame for each frame of x264's delay: the
 * test above would fail with it. */
GST_START_TEST(test_the_measure_sees_x264enc_hold_its_delay)
{
    GstElementFactory *x264enc = gst_element_factory_find("x264enc");
    fail_unless(x264enc != NULL, "needs GStreamer's x264enc (gstreamer1.0-plugins-ugly, which `make deps` installs)");
    gst_object_unref(x264enc);
    GstHarness *h = encoder("x264enc speed-preset=veryfast bitrate=1000 vbv-buf-capacity=0", "video/x-h264,profile=high", WIDTH,
                            HEIGHT);
    const int held = frames_held_after_push(h);
    fail_unless(held >= 10, "x264enc held only %d raw frames after their push", held);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Every frame comes out, in decoding order with DTS rising and never after its PTS, the PTS
 * those of the input (shifted), keyframes where the interval asks, under the caps downstream
 * asked for: avc with an avcC record, the profile it named. (__i__: B-frames and profile.) */
GST_START_TEST(test_encodes_every_frame_in_order)
{
    static const struct {
        int bframes;
        const char *profile;
    } cases[] = { { 0, "baseline" }, { 0, "high" }, { 2, "main" }, { 2, "high" } };
    const int frames = 60, key_interval = 15;
    char *element = g_strdup_printf("gkx264enc speed-preset=veryfast bitrate=1000 key-int-max=%d bframes=%d", key_interval,
                                    cases[__i__].bframes);
    char *downstream = g_strdup_printf("video/x-h264,profile=%s", cases[__i__].profile);
    GstHarness *h = encoder(element, downstream, WIDTH, HEIGHT);
    push_frames(h, 0, frames, WIDTH, HEIGHT);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, frames);

    GstCaps *caps = gk_check_output_caps(h);
    const GstStructure *s = gst_caps_get_structure(caps, 0);
    fail_unless(gst_structure_has_name(s, "video/x-h264"));
    fail_unless_equals_string(gst_structure_get_string(s, "stream-format"), "avc");
    fail_unless_equals_string(gst_structure_get_string(s, "alignment"), "au");
    /* "baseline" is written as x264 writes it: constrained-baseline. */
    const char *profile = gst_structure_get_string(s, "profile");
    fail_unless(profile && strstr(profile, cases[__i__].profile), "profile %s", profile);
    int w = 0, hh = 0, fn = 0, fd = 0;
    fail_unless(gst_structure_get_int(s, "width", &w) && gst_structure_get_int(s, "height", &hh));
    fail_unless(w == WIDTH && hh == HEIGHT);
    fail_unless(gst_structure_get_fraction(s, "framerate", &fn, &fd) && fn == 30 && fd == 1);
    const GValue *codec_data = gst_structure_get_value(s, "codec_data");
    fail_unless(codec_data != NULL, "avc without codec_data");
    GstBuffer *avcc = gst_value_get_buffer(codec_data);
    guint8 version = 0;
    fail_unless(gst_buffer_extract(avcc, 0, &version, 1) == 1 && version == 1, "not an avcC record");

    GstClockTime earliest = GST_CLOCK_TIME_NONE;
    gboolean reordered = FALSE;
    GArray *pts = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    int last_key = -1;
    for (int i = 0; i < count; i++) {
        const GstClockTime p = GST_BUFFER_PTS(out[i]), d = GST_BUFFER_DTS(out[i]);
        fail_unless(GST_CLOCK_TIME_IS_VALID(p) && GST_CLOCK_TIME_IS_VALID(d), "buffer %d untimed", i);
        fail_unless(d <= p, "buffer %d: DTS after PTS", i);
        if (i > 0) fail_unless(d > GST_BUFFER_DTS(out[i - 1]), "buffer %d: DTS not rising", i);
        if (d < p) reordered = TRUE;
        earliest = MIN(earliest, p);
        g_array_append_val(pts, p);
        if (is_keyframe(out[i])) {
            fail_unless(i - last_key <= key_interval || last_key < 0, "keyframes %d and %d", last_key, i);
            last_key = i;
        }
    }
    fail_unless(is_keyframe(out[0]), "the first frame is no keyframe");
    fail_unless(count - last_key <= key_interval, "no keyframe after %d", last_key);
    fail_unless_equals_uint64(earliest, SHIFT);
    g_array_sort(pts, compare_times);
    for (int i = 0; i < count; i++)
        fail_unless_equals_uint64(g_array_index(pts, GstClockTime, i), SHIFT + time_of(i));
    fail_unless_equals_int(reordered, cases[__i__].bframes > 0);
    g_array_unref(pts);
    gst_caps_unref(caps);
    free_buffers(out, count);
    g_free(element);
    g_free(downstream);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* A keyframe asked for (a force-key-unit event, as a segmenter sends) lands on the frame that
 * follows it, and nowhere else in a picture that has no scene cut. (__i__: no B-frames, two.) */
GST_START_TEST(test_forced_keyframe_lands_where_asked)
{
    char *element = g_strdup_printf("gkx264enc speed-preset=veryfast bitrate=1000 key-int-max=250 bframes=%d", __i__ * 2);
    GstHarness *h = encoder(element, "video/x-h264,profile=high", WIDTH, HEIGHT);
    push_frames(h, 0, 17, WIDTH, HEIGHT);
    fail_unless(gst_harness_push_event(h, gst_video_event_new_downstream_force_key_unit(GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE,
                                                                                      GST_CLOCK_TIME_NONE, TRUE, 1)));
    push_frames(h, 17, 23, WIDTH, HEIGHT);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 40);
    GString *keys = g_string_new(NULL);
    for (int i = 0; i < count; i++)
        if (is_keyframe(out[i])) g_string_append_printf(keys, "%s%d", keys->len ? "," : "", frame_at(GST_BUFFER_PTS(out[i])));
    fail_unless_equals_string(keys->str, "0,17");
    g_string_free(keys, TRUE);
    free_buffers(out, count);
    g_free(element);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Downstream that asks for a byte stream gets one: start codes, the SPS first, no codec_data. */
GST_START_TEST(test_byte_stream_when_asked_for)
{
    GstHarness *h = encoder("gkx264enc speed-preset=veryfast bitrate=1000", "video/x-h264,profile=main,stream-format=byte-stream",
                            WIDTH, HEIGHT);
    push_frames(h, 0, 10, WIDTH, HEIGHT);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 10);
    GstCaps *caps = gk_check_output_caps(h);
    const GstStructure *s = gst_caps_get_structure(caps, 0);
    fail_unless_equals_string(gst_structure_get_string(s, "stream-format"), "byte-stream");
    fail_unless(!gst_structure_has_field(s, "codec_data"));
    for (int i = 0; i < count; i++) {
        guint8 head[5] = { 0 };
        fail_unless_equals_int(gst_buffer_extract(out[i], 0, head, 5), 5);
        fail_unless(!memcmp(head, "\0\0\0\1", 4) || !memcmp(head, "\0\0\1", 3), "buffer %d has no start code", i);
        if (i == 0) fail_unless_equals_int(head[4] & 0x1f, 7);  /* an SPS */
    }
    gst_caps_unref(caps);
    free_buffers(out, count);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* End of stream before any frame: nothing out, the end of stream passed on, no error. */
GST_START_TEST(test_end_of_stream_without_frames)
{
    GstHarness *h = encoder("gkx264enc", "video/x-h264", WIDTH, HEIGHT);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 0);
    gboolean eos = FALSE;
    GstEvent *e;
    while ((e = gst_harness_try_pull_event(h))) {
        eos |= GST_EVENT_TYPE(e) == GST_EVENT_EOS;
        gst_event_unref(e);
    }
    fail_unless(eos, "no end of stream came out");
    free_buffers(out, count);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* The width of the caps on the element's source pad as each encoded buffer leaves. */
static GstPadProbeReturn note_width(GstPad *pad, GstPadProbeInfo *info, gpointer widths) {
    GstCaps *caps = gst_pad_get_current_caps(pad);
    int width = 0;
    gst_structure_get_int(gst_caps_get_structure(caps, 0), "width", &width);
    g_array_append_val((GArray *)widths, width);
    gst_caps_unref(caps);
    return GST_PAD_PROBE_OK;
}

/* New caps mid-stream (another size): the frames of the old size leave first, under the old
 * caps; then the encoder starts again with a keyframe, under new caps. */
GST_START_TEST(test_new_size_mid_stream)
{
    GstHarness *h = encoder("gkx264enc speed-preset=veryfast bitrate=1000 bframes=2", "video/x-h264,profile=high", WIDTH, HEIGHT);
    GArray *widths = g_array_new(FALSE, FALSE, sizeof(int));
    GstPad *src = gst_element_get_static_pad(h->element, "src");
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, note_width, widths, NULL);
    gst_object_unref(src);
    push_frames(h, 0, 20, WIDTH, HEIGHT);
    gst_harness_set_src_caps_str(h, "video/x-raw,format=I420,width=160,height=120,framerate=30/1");
    push_frames(h, 20, 20, 160, 120);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 40);
    for (int i = 0; i < count; i++) fail_unless_equals_int(g_array_index(widths, int, i), i < 20 ? WIDTH : 160);
    fail_unless(is_keyframe(out[20]), "the first frame of the new size is no keyframe");
    free_buffers(out, count);
    g_array_unref(widths);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* A flushing seek while frames are inside x264: they are dropped, x264 starts again, and every
 * frame that follows is encoded, from a keyframe. */
GST_START_TEST(test_flushing_seek)
{
    GstHarness *h = encoder("gkx264enc speed-preset=veryfast bitrate=1000", "video/x-h264,profile=high", WIDTH, HEIGHT);
    push_frames(h, 0, 10, WIDTH, HEIGHT);
    fail_unless(latency_frames(h) > 10, "x264 would not hold the 10 frames the flush drops");
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h))) gst_buffer_unref(b);
    fail_unless(gst_harness_push_event(h, gst_event_new_flush_start()));
    fail_unless(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    fail_unless(gst_harness_push_event(h, gst_event_new_segment(&segment)));
    push_frames(h, 0, 30, WIDTH, HEIGHT);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 30);
    fail_unless(is_keyframe(out[0]));
    free_buffers(out, count);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* A frame size x264 refuses (odd, in 4:2:0): not negotiated, and an error that gives x264's
 * reason and the size. */
GST_START_TEST(test_refuses_an_odd_size_saying_why)
{
    GstHarness *h = encoder("gkx264enc", "video/x-h264", 321, HEIGHT);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    fail_unless_equals_int(gst_harness_push(h, frame(0, 321, HEIGHT)), GST_FLOW_NOT_NEGOTIATED);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    fail_unless(m != NULL, "no error posted");
    GError *error = NULL;
    gst_message_parse_error(m, &error, NULL);
    fail_unless(strstr(error->message, "not divisible by 2") && strstr(error->message, "321x240"), "%s", error->message);
    g_error_free(error);
    gst_message_unref(m);
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}
GST_END_TEST;

static GParamSpec *property(GstHarness *h, const char *name) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(h->element), name);
    fail_unless(spec != NULL, "no property %s", name);
    return spec;
}

/* The properties encode.h264 sets, with x264enc's names, units, ranges and defaults. */
GST_START_TEST(test_properties)
{
    GstHarness *h = gst_harness_new("gkx264enc");
    GParamSpecUInt *bitrate = G_PARAM_SPEC_UINT(property(h, "bitrate"));
    fail_unless(bitrate->minimum == 1 && bitrate->maximum == 2048 * 1024 && bitrate->default_value == 2048);
    fail_unless(G_PARAM_SPEC(bitrate)->flags & GST_PARAM_MUTABLE_PLAYING, "the bit rate cannot change while playing");
    GParamSpecUInt *key_int_max = G_PARAM_SPEC_UINT(property(h, "key-int-max"));
    fail_unless(key_int_max->minimum == 0 && key_int_max->maximum == G_MAXINT && key_int_max->default_value == 0);
    GParamSpecInt *bframes = G_PARAM_SPEC_INT(property(h, "bframes"));
    fail_unless(bframes->minimum == -1 && bframes->maximum == 16 && bframes->default_value == -1);
    GParamSpecUInt *threads = G_PARAM_SPEC_UINT(property(h, "threads"));
    fail_unless(threads->minimum == 0 && threads->maximum == 128 && threads->default_value == 0);
    GParamSpecEnum *preset = G_PARAM_SPEC_ENUM(property(h, "speed-preset"));
    static const char *const presets[] = { "ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower",
                                           "veryslow", "placebo" };
    fail_unless_equals_int(preset->enum_class->n_values, G_N_ELEMENTS(presets));
    for (guint i = 0; i < G_N_ELEMENTS(presets); i++)
        fail_unless_equals_string(g_enum_get_value(preset->enum_class, (gint)i)->value_nick, presets[i]);
    fail_unless_equals_string(g_enum_get_value(preset->enum_class, preset->default_value)->value_nick, "medium");
    GParamSpecFlags *tune = G_PARAM_SPEC_FLAGS(property(h, "tune"));
    fail_unless(tune->default_value == 0);
    fail_unless_equals_int(g_flags_get_value_by_nick(tune->flags_class, "zerolatency")->value, 4);  /* x264enc's */
    fail_unless(G_PARAM_SPEC_BOOLEAN(property(h, "live-zerolatency"))->default_value == FALSE);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* A new bit rate while playing is taken at the next frame, without an error or a new stream. */
GST_START_TEST(test_bitrate_changes_while_playing)
{
    GstHarness *h = encoder("gkx264enc speed-preset=veryfast bitrate=2000", "video/x-h264,profile=high", WIDTH, HEIGHT);
    push_frames(h, 0, 20, WIDTH, HEIGHT);
    g_object_set(h->element, "bitrate", 100u, NULL);
    push_frames(h, 20, 20, WIDTH, HEIGHT);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 40);
    guint bitrate = 0;
    g_object_get(h->element, "bitrate", &bitrate, NULL);
    fail_unless_equals_int(bitrate, 100);
    free_buffers(out, count);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* zerolatency: x264 holds no frame (no lookahead, slices for threads), so each frame comes out as
 * its push returns, and the element says so in its latency. */
GST_START_TEST(test_zerolatency_holds_no_frame)
{
    GstHarness *h = encoder("gkx264enc speed-preset=veryfast bitrate=1000 tune=zerolatency", "video/x-h264,profile=high", WIDTH, HEIGHT);
    push_frames(h, 0, 30, WIDTH, HEIGHT);
    fail_unless_equals_int(latency_frames(h), 0);
    fail_unless_equals_int(gst_harness_buffers_received(h), 30);
    int count;
    GstBuffer **out = finish(h, &count);
    fail_unless_equals_int(count, 30);
    for (int i = 0; i < count; i++) fail_unless_equals_int(frame_at(GST_BUFFER_PTS(out[i])), i);
    free_buffers(out, count);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* x264's latency, in frames at 30 fps, of a gkx264enc (`properties`) fed by a videotestsrc live or
 * not, once 10 frames have gone through. */
static int latency_in_pipeline(const char *properties, gboolean live) {
    char *description = g_strdup_printf("videotestsrc is-live=%s num-buffers=10 ! video/x-raw,format=I420,width=%d,height=%d,framerate=30/1 "
                                        "! gkx264enc name=encoder speed-preset=veryfast %s ! fakesink",
                                        live ? "true" : "false", WIDTH, HEIGHT, properties);
    GError *error = NULL;
    GstElement *pipeline = gst_parse_launch(description, &error);
    g_free(description);
    fail_unless(pipeline != NULL && error == NULL, "%s", error ? error->message : "no pipeline");
    fail_unless(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    fail_unless(m != NULL && GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS, "the pipeline did not end");
    gst_message_unref(m);
    GstElement *encoder = gst_bin_get_by_name(GST_BIN(pipeline), "encoder");
    GstClockTime min = 0, max = 0;
    gst_video_encoder_get_latency(GST_VIDEO_ENCODER(encoder), &min, &max);
    gst_object_unref(encoder);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    return (int)((min * 30 + GST_SECOND / 2) / GST_SECOND);
}

/* live-zerolatency tunes for zero latency only when upstream is live (a camera); a file's
 * frames keep x264's lookahead, and so does a live source without it. */
GST_START_TEST(test_live_zerolatency_follows_upstream)
{
    fail_unless_equals_int(latency_in_pipeline("live-zerolatency=true", TRUE), 0);
    const int file = latency_in_pipeline("live-zerolatency=true", FALSE);
    fail_unless(file >= 10, "a file's frames held %d frames: not x264's lookahead", file);
    const int live = latency_in_pipeline("", TRUE);
    fail_unless(live >= 10, "a live source without live-zerolatency held %d frames", live);
}
GST_END_TEST;

static Suite *gkx264enc_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkx264enc", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_test(tc, test_lets_each_frame_go_once_x264_has_copied_it);
    tcase_add_test(tc, test_the_measure_sees_x264enc_hold_its_delay);
    tcase_add_loop_test(tc, test_encodes_every_frame_in_order, 0, 4);
    tcase_add_loop_test(tc, test_forced_keyframe_lands_where_asked, 0, 2);
    tcase_add_test(tc, test_byte_stream_when_asked_for);
    tcase_add_test(tc, test_end_of_stream_without_frames);
    tcase_add_test(tc, test_new_size_mid_stream);
    tcase_add_test(tc, test_flushing_seek);
    tcase_add_test(tc, test_refuses_an_odd_size_saying_why);
    tcase_add_test(tc, test_properties);
    tcase_add_test(tc, test_bitrate_changes_while_playing);
    tcase_add_test(tc, test_zerolatency_holds_no_frame);
    tcase_add_test(tc, test_live_zerolatency_follows_upstream);
    return s;
}

GST_CHECK_MAIN(gkx264enc);
