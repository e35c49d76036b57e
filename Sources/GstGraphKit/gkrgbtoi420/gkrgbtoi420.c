/*
 * gkrgbtoi420: packed RGB (BGRA, RGBA, BGRx, RGBx) to I420 for the encoders, in one pass over
 * the pixels; I420 and NV12 pass through untouched.
 *
 * Why not videoconvert: GStreamer 1.22's videoconvert takes its generic path for these formats
 * (unpack to AYUV64, matrix, chroma resampler, pack): 3.4 ms for a 1280x720 frame on one core,
 * a fifth of the CPU of a 720p H.264 encode at x264's veryfast preset (perf, BENCHMARKS.md).
 * The kernel (kernel.c) does the same arithmetic in fixed point, 2 rows at a time: Y per pixel,
 * and per 2x2 block one chroma sample, the block's mean, as videoconvert gives for these
 * formats. The matrix (BT.601, BT.709, BT.2020) and range (limited or full) are the output
 * caps' colorimetry, which downstream sees; with none given, GStreamer's default for the frame
 * size (BT.709 from 720 lines up, BT.601 below), so the encoder's colour description says what
 * was done.
 *
 * Example launch line:
 *   gst-launch-1.0 videotestsrc num-buffers=60 ! video/x-raw,format=BGRA,width=1280,height=720 !
 *     gkrgbtoi420 ! video/x-raw,colorimetry=bt601 ! gkx264enc ! mp4mux ! filesink location=out.mp4
 */
#include <string.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include "../common/pool.h"
#include <gst/video/gstvideofilter.h>
#include "kernel.h"
#include "../common/tsan.h"

typedef struct {
    GstVideoFilter parent;
    gk_rgb_to_i420_plan plan;
} GkRgbToI420;

typedef struct {
    GstVideoFilterClass parent_class;
} GkRgbToI420Class;

GType gk_rgb_to_i420_get_type(void);
G_DEFINE_TYPE(GkRgbToI420, gk_rgb_to_i420, GST_TYPE_VIDEO_FILTER)

#define RGB_FORMATS "{ BGRA, RGBA, BGRx, RGBx }"
#define YUV_FORMATS "{ I420, NV12 }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string)" RGB_FORMATS "; video/x-raw, format=(string)" YUV_FORMATS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string)" YUV_FORMATS));

static gboolean is_rgb(const char *format) {
    return format && (!strcmp(format, "BGRA") || !strcmp(format, "RGBA") || !strcmp(format, "BGRx") || !strcmp(format, "RGBx"));
}
static gboolean is_yuv(const char *format) { return format && (!strcmp(format, "I420") || !strcmp(format, "NV12")); }
static gboolean is_i420(const char *format) { return format && !strcmp(format, "I420"); }

/* Appends to `list` each format of the structure's format field (one string or a list) that
 * `wanted` accepts. */
static void collect_formats(const GstStructure *s, gboolean (*wanted)(const char *), GValue *list) {
    const GValue *f = gst_structure_get_value(s, "format");
    if (!f) return;
    if (G_VALUE_HOLDS_STRING(f)) {
        if (wanted(g_value_get_string(f))) gst_value_list_append_value(list, f);
        return;
    }
    if (GST_VALUE_HOLDS_LIST(f)) {
        for (guint i = 0; i < gst_value_list_get_size(f); i++) {
            const GValue *item = gst_value_list_get_value(f, i);
            if (G_VALUE_HOLDS_STRING(item) && wanted(g_value_get_string(item))) gst_value_list_append_value(list, item);
        }
    }
}

static void append_with_formats(GstCaps *out, const GstStructure *s, GValue *formats, gboolean drop_colour) {
    if (gst_value_list_get_size(formats) == 0) return;
    GstStructure *copy = gst_structure_copy(s);
    if (gst_value_list_get_size(formats) == 1) gst_structure_set_value(copy, "format", gst_value_list_get_value(formats, 0));
    else gst_structure_set_value(copy, "format", formats);
    if (drop_colour) gst_structure_remove_fields(copy, "colorimetry", "chroma-site", NULL);
    gst_caps_append_structure(out, copy);
}

static void set_strings(GValue *list, const char *const *names) {
    for (; *names; names++) {
        GValue v = G_VALUE_INIT;
        g_value_init(&v, G_TYPE_STRING);
        g_value_set_static_string(&v, *names);
        gst_value_list_append_value(list, &v);
        g_value_unset(&v);
    }
}

/* Across the element: a YUV format maps to itself (passed through, first, so that it is
 * preferred); RGB on the sink side maps to I420 on the source side, and I420 on the source side
 * to each RGB format on the sink side, without the colour fields (set_info reads them). */
static GstCaps *transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps, GstCaps *filter) {
    GstCaps *out = gst_caps_new_empty();
    for (guint i = 0; i < gst_caps_get_size(caps); i++) {
        const GstStructure *s = gst_caps_get_structure(caps, i);
        if (!gst_structure_has_field(s, "format")) {
            /* Any format here: any the other side takes. */
            GstStructure *copy = gst_structure_copy(s);
            gst_structure_remove_fields(copy, "colorimetry", "chroma-site", NULL);
            gst_caps_append_structure(out, copy);
            continue;
        }
        GValue same = G_VALUE_INIT, other = G_VALUE_INIT, found = G_VALUE_INIT;
        g_value_init(&same, GST_TYPE_LIST);
        g_value_init(&other, GST_TYPE_LIST);
        g_value_init(&found, GST_TYPE_LIST);
        collect_formats(s, is_yuv, &same);
        if (direction == GST_PAD_SINK) {
            collect_formats(s, is_rgb, &found);
            if (gst_value_list_get_size(&found) > 0) set_strings(&other, (const char *const[]){ "I420", NULL });
        } else {
            collect_formats(s, is_i420, &found);
            if (gst_value_list_get_size(&found) > 0) set_strings(&other, (const char *const[]){ "BGRA", "RGBA", "BGRx", "RGBx", NULL });
        }
        append_with_formats(out, s, &same, FALSE);
        append_with_formats(out, s, &other, TRUE);
        g_value_unset(&same);
        g_value_unset(&other);
        g_value_unset(&found);
    }
    out = gst_caps_simplify(out);
    if (filter) {
        GstCaps *t = gst_caps_intersect_full(filter, out, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(out);
        out = t;
    }
    (void)trans;
    return out;
}

/* An RGB input's output gets its colorimetry written down (the one downstream asks for, else
 * the size's default), so that the encoder describes what the kernel did. */
static GstCaps *fixate_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps, GstCaps *othercaps) {
    othercaps = GST_BASE_TRANSFORM_CLASS(gk_rgb_to_i420_parent_class)->fixate_caps(trans, direction, caps, othercaps);
    if (direction != GST_PAD_SINK || gst_caps_is_empty(othercaps)) return othercaps;
    othercaps = gst_caps_make_writable(othercaps);
    GstStructure *s = gst_caps_get_structure(othercaps, 0);
    const char *in = gst_structure_get_string(gst_caps_get_structure(caps, 0), "format");
    if (!is_rgb(in)) return othercaps;
    if (!gst_structure_has_field(s, "colorimetry")) {
        /* Caps fixed by transform_caps skip the peer: ask it whether it wants a colorimetry. */
        GstCaps *peer = gst_pad_peer_query_caps(GST_BASE_TRANSFORM_SRC_PAD(trans), othercaps);
        if (peer && !gst_caps_is_empty(peer)) {
            peer = gst_caps_fixate(peer);
            const char *wanted = gst_structure_get_string(gst_caps_get_structure(peer, 0), "colorimetry");
            if (wanted) gst_structure_set(s, "colorimetry", G_TYPE_STRING, wanted, NULL);
        }
        if (peer) gst_caps_unref(peer);
    }
    if (!gst_structure_has_field(s, "colorimetry")) {
        GstVideoInfo info;
        if (gst_video_info_from_caps(&info, othercaps)) {
            char *c = gst_video_colorimetry_to_string(&info.colorimetry);
            if (c) gst_structure_set(s, "colorimetry", G_TYPE_STRING, c, NULL);
            g_free(c);
        }
    }
    return othercaps;
}

/* Output frames from a pool (common/pool.h says why). */
static gboolean decide_allocation(GstBaseTransform *trans, GstQuery *query) {
    if (!gk_choose_output_pool(query)) return FALSE;
    return GST_BASE_TRANSFORM_CLASS(gk_rgb_to_i420_parent_class)->decide_allocation(trans, query);
}

static gboolean set_info(GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in_info, GstCaps *outcaps, GstVideoInfo *out_info) {
    GkRgbToI420 *self = (GkRgbToI420 *)filter;
    (void)incaps;
    (void)outcaps;
    GstVideoFormat in = GST_VIDEO_INFO_FORMAT(in_info), out = GST_VIDEO_INFO_FORMAT(out_info);
    if (in == out) {
        gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(filter), TRUE);
        return TRUE;
    }
    if (out != GST_VIDEO_FORMAT_I420 || in_info->width != out_info->width || in_info->height != out_info->height) return FALSE;
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(filter), FALSE);
    const GstVideoFormatInfo *f = in_info->finfo;
    /* Byte offsets of R, G and B in a pixel, from the format's own description. */
    int r = (int)f->poffset[0], g = (int)f->poffset[1], b = (int)f->poffset[2];
    gdouble kr = 0.2126, kb = 0.0722;  /* BT.709 where the caps name no YUV matrix */
    gst_video_color_matrix_get_Kr_Kb(out_info->colorimetry.matrix, &kr, &kb);
    gk_rgb_to_i420_plan_make(&self->plan, kr, kb, out_info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255, r, g, b);
    return TRUE;
}

static GstFlowReturn transform_frame(GstVideoFilter *filter, GstVideoFrame *in, GstVideoFrame *out) {
    GkRgbToI420 *self = (GkRgbToI420 *)filter;
    GK_BUFFER_RECEIVED(in->buffer);
    GK_BUFFER_RECEIVED(out->buffer);  /* from a pool, last written on another thread */
    gk_rgb_to_i420(&self->plan, GST_VIDEO_FRAME_PLANE_DATA(in, 0), GST_VIDEO_FRAME_PLANE_STRIDE(in, 0),
                   GST_VIDEO_FRAME_WIDTH(in), GST_VIDEO_FRAME_HEIGHT(in),
                   GST_VIDEO_FRAME_PLANE_DATA(out, 0), GST_VIDEO_FRAME_PLANE_STRIDE(out, 0),
                   GST_VIDEO_FRAME_PLANE_DATA(out, 1), GST_VIDEO_FRAME_PLANE_STRIDE(out, 1),
                   GST_VIDEO_FRAME_PLANE_DATA(out, 2), GST_VIDEO_FRAME_PLANE_STRIDE(out, 2));
    GK_BUFFER_HANDED_ON(out->buffer);
    GK_BUFFER_HANDED_ON(in->buffer);
    return GST_FLOW_OK;
}

static void gk_rgb_to_i420_class_init(GkRgbToI420Class *klass) {
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
    GstVideoFilterClass *video = GST_VIDEO_FILTER_CLASS(klass);
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit RGB to I420", "Filter/Converter/Video",
                                          "Packed RGB to I420 in one pass, for the encoders; I420 and NV12 pass through", "GraphKit");
    base->transform_caps = transform_caps;
    base->fixate_caps = fixate_caps;
    base->decide_allocation = decide_allocation;
    base->passthrough_on_same_caps = TRUE;
    video->set_info = set_info;
    video->transform_frame = transform_frame;
}

static void gk_rgb_to_i420_init(GkRgbToI420 *self) { (void)self; }

/* Rank none: only a pipeline that names it uses it (encode.h264 does); autoplugging
 * keeps choosing videoconvert. */
GST_ELEMENT_REGISTER_DEFINE(gkrgbtoi420, "gkrgbtoi420", GST_RANK_NONE, gk_rgb_to_i420_get_type())
