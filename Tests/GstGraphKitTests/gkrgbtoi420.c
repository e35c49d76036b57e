/*
 * gkrgbtoi420 (Sources/GstGraphKit/gkrgbtoi420) alone in GStreamer's harness: every output
 * sample against the arithmetic done here in double precision, for the matrix and range the
 * output caps name (or, when downstream names none, GStreamer's default for the size, as the
 * element documents); I420 and NV12 passed through untouched; times and flags kept; output
 * frames from a pool; what it refuses.
 */
#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include "common.h"

typedef struct {
    const char *name;
    int r, g, b; /* byte offsets in a pixel */
} Format;
static const Format formats[] = { { "BGRA", 2, 1, 0 }, { "RGBA", 0, 1, 2 }, { "BGRx", 2, 1, 0 }, { "RGBx", 0, 1, 2 } };

typedef struct {
    GstVideoColorMatrix matrix;
    double kr, kb; /* the standards' own numbers, not GStreamer's */
} Matrix;
static const Matrix bt601 = { GST_VIDEO_COLOR_MATRIX_BT601, 0.299, 0.114 };
static const Matrix bt709 = { GST_VIDEO_COLOR_MATRIX_BT709, 0.2126, 0.0722 };
static const Matrix bt2020 = { GST_VIDEO_COLOR_MATRIX_BT2020, 0.2627, 0.0593 };

/* A w×h frame whose rows are `stride` bytes apart (a GstVideoMeta says so when they are padded):
 * black, white and the primaries first, then a spread of values. */
static GstBuffer *rgb_frame(const Format *f, int w, int h, int stride) {
    GstBuffer *buffer = gst_buffer_new_allocate(NULL, (gsize)stride * h, NULL);
    GstMapInfo map;
    fail_unless(gst_buffer_map(buffer, &map, GST_MAP_WRITE));
    static const guint8 first[] = { 0, 0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 128, 64, 200, 9 };
    memset(map.data, 0xee, map.size);  /* padding that must not be read as pixels */
    for (int y = 0; y < h; y++)
        for (int i = 0; i < w * 4; i++) {
            const guint32 n = (guint32)(y * w * 4 + i);
            map.data[y * stride + i] = n < sizeof first ? first[n] : (guint8)((n * 2654435761u) >> 11);
        }
    gst_buffer_unmap(buffer, &map);
    if (stride != w * 4) {
        gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
        gint strides[GST_VIDEO_MAX_PLANES] = { stride };
        gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, gst_video_format_from_string(f->name), w, h, 1,
                                       offset, strides);
    }
    return buffer;
}

typedef struct {
    int luma, chroma; /* the largest difference from the exact value, rounded */
} Worst;

/* Compares an I420 frame with the exact arithmetic: Y' = offset + scale (Kr R + Kg G + Kb B)
 * per pixel; Cb, Cr from each 2x2 block's mean (an odd last column or row repeated). */
static Worst compare(const guint8 *rgb, int stride, const Format *f, const Matrix *m, gboolean full, GstVideoFrame *out) {
    const int w = GST_VIDEO_FRAME_WIDTH(out), h = GST_VIDEO_FRAME_HEIGHT(out);
    const double kg = 1 - m->kr - m->kb;
    const double ys = full ? 1.0 : 219.0 / 255, cs = full ? 1.0 : 224.0 / 255, yo = full ? 0 : 16;
    Worst worst = { 0, 0 };
#define PIXEL(x, y, c) ((double)rgb[(y) * stride + (x) * 4 + (c)])
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const double exact = yo + ys * (m->kr * PIXEL(x, y, f->r) + kg * PIXEL(x, y, f->g) + m->kb * PIXEL(x, y, f->b));
            const guint8 got = ((guint8 *)GST_VIDEO_FRAME_COMP_DATA(out, 0))[y * GST_VIDEO_FRAME_COMP_STRIDE(out, 0) + x];
            worst.luma = MAX(worst.luma, abs(got - (int)lround(exact)));
        }
    for (int cy = 0; cy < (h + 1) / 2; cy++)
        for (int cx = 0; cx < (w + 1) / 2; cx++) {
            double r = 0, g = 0, b = 0;
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    const int x = MIN(2 * cx + dx, w - 1), y = MIN(2 * cy + dy, h - 1);
                    r += PIXEL(x, y, f->r) / 4;
                    g += PIXEL(x, y, f->g) / 4;
                    b += PIXEL(x, y, f->b) / 4;
                }
            const double luma = m->kr * r + kg * g + m->kb * b;
            const double cb = 128 + cs * (b - luma) / (2 * (1 - m->kb)), cr = 128 + cs * (r - luma) / (2 * (1 - m->kr));
            const guint8 u = ((guint8 *)GST_VIDEO_FRAME_COMP_DATA(out, 1))[cy * GST_VIDEO_FRAME_COMP_STRIDE(out, 1) + cx];
            const guint8 v = ((guint8 *)GST_VIDEO_FRAME_COMP_DATA(out, 2))[cy * GST_VIDEO_FRAME_COMP_STRIDE(out, 2) + cx];
            worst.chroma = MAX(worst.chroma, abs(u - (int)lround(CLAMP(cb, 0, 255))));
            worst.chroma = MAX(worst.chroma, abs(v - (int)lround(CLAMP(cr, 0, 255))));
        }
#undef PIXEL
    return worst;
}

/* One frame through the element, downstream asking for `downstream` (I420 caps); checks that
 * the output caps name `expected` and `full` range, and every sample against them. */
static void convert_and_check(const Format *f, int w, int h, int padding, const char *downstream, const Matrix *expected,
                              gboolean full) {
    GstHarness *hs = gst_harness_new("gkrgbtoi420");
    char *in = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1", f->name, w, h);
    gst_harness_set_sink_caps_str(hs, downstream);
    gst_harness_set_src_caps_str(hs, in);
    const int stride = w * 4 + padding;
    GstBuffer *input = rgb_frame(f, w, h, stride);
    GstMapInfo rgb;
    fail_unless(gst_buffer_map(input, &rgb, GST_MAP_READ));
    GstBuffer *output = gst_harness_push_and_pull(hs, gst_buffer_ref(input));
    fail_unless(output != NULL);

    GstCaps *caps = gk_check_output_caps(hs);
    GstVideoInfo info;
    fail_unless(gst_video_info_from_caps(&info, caps));
    fail_unless_equals_string(gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&info)), "I420");
    fail_unless_equals_int(GST_VIDEO_INFO_WIDTH(&info), w);
    fail_unless_equals_int(GST_VIDEO_INFO_HEIGHT(&info), h);
    fail_unless_equals_int(info.colorimetry.matrix, expected->matrix);
    fail_unless_equals_int(info.colorimetry.range, full ? GST_VIDEO_COLOR_RANGE_0_255 : GST_VIDEO_COLOR_RANGE_16_235);

    GstVideoFrame frame;
    fail_unless(gst_video_frame_map(&frame, &info, output, GST_MAP_READ));
    const Worst worst = compare(rgb.data, stride, f, expected, full, &frame);
    fail_unless(worst.luma <= 1 && worst.chroma <= 1, "%s %dx%d+%d into %s: luma off by %d, chroma by %d", f->name, w, h, padding,
                downstream, worst.luma, worst.chroma);
    gst_video_frame_unmap(&frame);
    gst_buffer_unmap(input, &rgb);
    gst_buffer_unref(input);
    gst_buffer_unref(output);
    gst_caps_unref(caps);
    g_free(in);
    gst_harness_teardown(hs);
}

GST_START_TEST(test_from_the_plugin_file)
{
    gk_check_from_plugin_file("gkrgbtoi420");
}
GST_END_TEST;

/* Each matrix and range downstream asks for, each format, odd sizes and padded rows: every
 * sample within one step of the exact value. (__i__: the matrix, and the range.) */
GST_START_TEST(test_every_sample_is_the_exact_value_within_one_step)
{
    const Matrix *matrices[] = { &bt601, &bt709, &bt2020 };
    const Matrix *m = matrices[__i__ / 2];
    const gboolean full = __i__ % 2;
    GstVideoColorimetry c = { full ? GST_VIDEO_COLOR_RANGE_0_255 : GST_VIDEO_COLOR_RANGE_16_235, m->matrix,
                              GST_VIDEO_TRANSFER_BT709, GST_VIDEO_COLOR_PRIMARIES_BT709 };
    char *colorimetry = gst_video_colorimetry_to_string(&c);
    char *downstream = g_strdup_printf("video/x-raw,format=I420,colorimetry=%s", colorimetry);
    static const int sizes[][3] = { { 1, 1, 0 }, { 2, 2, 0 }, { 5, 3, 12 }, { 33, 7, 4 }, { 64, 4, 0 } };
    for (guint f = 0; f < G_N_ELEMENTS(formats); f++)
        for (guint s = 0; s < G_N_ELEMENTS(sizes); s++)
            convert_and_check(&formats[f], sizes[s][0], sizes[s][1], sizes[s][2], downstream, m, full);
    g_free(downstream);
    g_free(colorimetry);
}
GST_END_TEST;

/* Downstream names no colorimetry: GStreamer's default for the size, BT.709 from 720 lines up,
 * BT.601 below, limited range; written in the output caps and used. */
GST_START_TEST(test_default_matrix_by_size)
{
    convert_and_check(&formats[0], 1280, 720, 0, "video/x-raw,format=I420", &bt709, FALSE);
    convert_and_check(&formats[1], 640, 480, 0, "video/x-raw,format=I420", &bt601, FALSE);
}
GST_END_TEST;

/* I420 and NV12 in: the very buffer comes out, under the same caps. */
GST_START_TEST(test_yuv_passes_through)
{
    const char *formats_in[] = { "I420", "NV12" };
    for (guint i = 0; i < G_N_ELEMENTS(formats_in); i++) {
        GstHarness *h = gst_harness_new("gkrgbtoi420");
        char *caps = g_strdup_printf("video/x-raw,format=%s,width=64,height=48,framerate=30/1,colorimetry=bt601", formats_in[i]);
        gst_harness_set_src_caps_str(h, caps);
        GstBuffer *in = gst_harness_create_buffer(h, 64 * 48 * 3 / 2);
        GstBuffer *out = gst_harness_push_and_pull(h, gst_buffer_ref(in));
        fail_unless(out == in, "%s was copied", formats_in[i]);
        GstCaps *got = gk_check_output_caps(h), *want = gst_caps_from_string(caps);
        fail_unless(gst_caps_is_equal(got, want), "%" GST_PTR_FORMAT, got);
        gst_caps_unref(got);
        gst_caps_unref(want);
        gst_buffer_unref(in);
        gst_buffer_unref(out);
        g_free(caps);
        gst_harness_teardown(h);
    }
}
GST_END_TEST;

/* A converted frame keeps its time stamps, duration, offsets and flags. */
GST_START_TEST(test_keeps_times_and_flags)
{
    GstHarness *h = gst_harness_new("gkrgbtoi420");
    gst_harness_set_src_caps_str(h, "video/x-raw,format=BGRx,width=32,height=16,framerate=30/1");
    for (int i = 0; i < 3; i++) {
        GstBuffer *in = rgb_frame(&formats[2], 32, 16, 32 * 4);
        GST_BUFFER_PTS(in) = GST_SECOND + i * GST_SECOND / 30;
        GST_BUFFER_DTS(in) = GST_BUFFER_PTS(in);
        GST_BUFFER_DURATION(in) = GST_SECOND / 30;
        GST_BUFFER_OFFSET(in) = i;
        GST_BUFFER_OFFSET_END(in) = i + 1;
        if (i == 1) GST_BUFFER_FLAG_SET(in, GST_BUFFER_FLAG_DISCONT);
        GstBuffer *out = gst_harness_push_and_pull(h, in);
        fail_unless_equals_uint64(GST_BUFFER_PTS(out), GST_SECOND + i * GST_SECOND / 30);
        fail_unless_equals_uint64(GST_BUFFER_DTS(out), GST_SECOND + i * GST_SECOND / 30);
        fail_unless_equals_uint64(GST_BUFFER_DURATION(out), GST_SECOND / 30);
        fail_unless_equals_uint64(GST_BUFFER_OFFSET(out), i);
        fail_unless_equals_uint64(GST_BUFFER_OFFSET_END(out), i + 1);
        fail_unless_equals_int(GST_BUFFER_FLAG_IS_SET(out, GST_BUFFER_FLAG_DISCONT), i == 1);
        gst_buffer_unref(out);
    }
    gst_harness_teardown(h);
}
GST_END_TEST;

static GQuark seen_quark(void) { return g_quark_from_static_string("gk-check-seen"); }

/* Output frames come from a pool, used again once downstream lets them go: 30 frames pulled and
 * released one by one take at most 2 buffers (a pool keeps a buffer's qdata, so a buffer made
 * anew, even at a freed one's address, has none). */
GST_START_TEST(test_output_frames_come_from_a_pool)
{
    GstHarness *h = gst_harness_new("gkrgbtoi420");
    gst_harness_set_src_caps_str(h, "video/x-raw,format=RGBA,width=320,height=240,framerate=30/1");
    int made = 0;
    for (int i = 0; i < 30; i++) {
        GstBuffer *out = gst_harness_push_and_pull(h, rgb_frame(&formats[1], 320, 240, 320 * 4));
        fail_unless(out->pool != NULL, "frame %d is not from a pool", i);
        if (!gst_mini_object_get_qdata(GST_MINI_OBJECT(out), seen_quark())) {
            made++;
            gst_mini_object_set_qdata(GST_MINI_OBJECT(out), seen_quark(), GINT_TO_POINTER(1), NULL);
        }
        gst_buffer_unref(out);
    }
    fail_unless(made <= 2, "%d output buffers made for 30 frames", made);
    gst_harness_teardown(h);
}
GST_END_TEST;

/* Packed RGB becomes I420 only: a downstream that takes only NV12 (or RGB) gets nothing. */
GST_START_TEST(test_refuses_rgb_to_other_formats)
{
    const char *downstream[] = { "video/x-raw,format=NV12", "video/x-raw,format=BGRA" };
    for (guint i = 0; i < G_N_ELEMENTS(downstream); i++) {
        GstHarness *h = gst_harness_new("gkrgbtoi420");
        gst_harness_set_sink_caps_str(h, downstream[i]);
        gst_harness_set_src_caps_str(h, "video/x-raw,format=RGBA,width=32,height=16,framerate=30/1");
        fail_unless_equals_int(gst_harness_push(h, rgb_frame(&formats[1], 32, 16, 32 * 4)), GST_FLOW_NOT_NEGOTIATED);
        gst_harness_teardown(h);
    }
}
GST_END_TEST;

/* The pad templates say what it takes and gives. */
GST_START_TEST(test_pad_templates)
{
    GstElementFactory *factory = gst_element_factory_find("gkrgbtoi420");
    fail_unless(factory != NULL);
    fail_unless_equals_int(gst_element_factory_get_num_pad_templates(factory), 2);
    GstCaps *sink = NULL, *src = NULL;
    for (const GList *t = gst_element_factory_get_static_pad_templates(factory); t; t = t->next) {
        GstStaticPadTemplate *pt = t->data;
        fail_unless_equals_int(pt->presence, GST_PAD_ALWAYS);
        if (pt->direction == GST_PAD_SINK) sink = gst_static_caps_get(&pt->static_caps);
        else src = gst_static_caps_get(&pt->static_caps);
    }
    GstCaps *want_sink = gst_caps_from_string("video/x-raw,format={BGRA,RGBA,BGRx,RGBx}; video/x-raw,format={I420,NV12}");
    GstCaps *want_src = gst_caps_from_string("video/x-raw,format={I420,NV12}");
    fail_unless(sink && gst_caps_is_equal(sink, want_sink), "sink %" GST_PTR_FORMAT, sink);
    fail_unless(src && gst_caps_is_equal(src, want_src), "src %" GST_PTR_FORMAT, src);
    gst_caps_unref(sink);
    gst_caps_unref(src);
    gst_caps_unref(want_sink);
    gst_caps_unref(want_src);
    gst_object_unref(factory);
}
GST_END_TEST;

static Suite *gkrgbtoi420_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gkrgbtoi420", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_loop_test(tc, test_every_sample_is_the_exact_value_within_one_step, 0, 6);
    tcase_add_test(tc, test_default_matrix_by_size);
    tcase_add_test(tc, test_yuv_passes_through);
    tcase_add_test(tc, test_keeps_times_and_flags);
    tcase_add_test(tc, test_output_frames_come_from_a_pool);
    tcase_add_test(tc, test_refuses_rgb_to_other_formats);
    tcase_add_test(tc, test_pad_templates);
    return s;
}

GST_CHECK_MAIN(gkrgbtoi420);
