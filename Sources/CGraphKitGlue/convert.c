/*
 * gkrgbtoi420: packed RGB (BGRA, RGBA, BGRx, RGBx) to I420 for the encoders, in one pass over
 * the pixels; I420 and NV12 pass through untouched.
 *
 * Why not videoconvert: GStreamer 1.22's videoconvert takes its generic path for these formats
 * (unpack to AYUV64, matrix, chroma resampler, pack): 3.4 ms for a 1280x720 frame on one core,
 * a fifth of the CPU of a 720p H.264 encode at x264's veryfast preset (perf, BENCHMARKS.md).
 * This kernel does the same arithmetic in fixed point, 2 rows at a time: Y per pixel, and per
 * 2x2 block one chroma sample, the block's mean, as videoconvert gives for these formats. The
 * matrix (BT.601, BT.709, BT.2020) and range (limited or full) are the
 * output caps' colorimetry, which downstream sees; with none given, GStreamer's default for
 * the frame size (BT.709 from 720 lines up, BT.601 below), so the encoder's colour description
 * says what was done.
 */
#include <math.h>
#include <string.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideofilter.h>
#include "CGraphKitGlue.h"

/* ---- the kernel ---- */

void gk_rgb_to_i420_plan_make(gk_rgb_to_i420_plan *plan, double kr, double kb, int full_range,
                              int r_offset, int g_offset, int b_offset) {
    const double kg = 1.0 - kr - kb;
    const double ys = full_range ? 1.0 : 219.0 / 255.0, cs = full_range ? 1.0 : 224.0 / 255.0;
    const double one = 1 << 16;
    /* Y' = off + ys (kr R + kg G + kb B); Cb = 128 + cs (B - Y)/(2(1 - kb)); Cr likewise. */
    plan->y[0] = (int32_t)lrint(ys * kr * one);
    plan->y[1] = (int32_t)lrint(ys * kg * one);
    plan->y[2] = (int32_t)lrint(ys * kb * one);
    const double cb = cs / (2.0 * (1.0 - kb)), cr = cs / (2.0 * (1.0 - kr));
    plan->u[0] = (int32_t)lrint(-kr * cb * one);
    plan->u[1] = (int32_t)lrint(-kg * cb * one);
    plan->u[2] = (int32_t)lrint((1.0 - kb) * cb * one);
    plan->v[0] = (int32_t)lrint((1.0 - kr) * cr * one);
    plan->v[1] = (int32_t)lrint(-kg * cr * one);
    plan->v[2] = (int32_t)lrint(-kb * cr * one);
    plan->y_offset = full_range ? 0 : 16;
    plan->r = r_offset;
    plan->g = g_offset;
    plan->b = b_offset;
}

static inline uint8_t clamp8(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

/* The rows are read as 32-bit pixels and split with shifts (R, G and B at bit 8 × their byte
 * offset, little-endian), which compilers turn into vector code; byte loads at a stride of 4
 * they do not. Each function is compiled twice, for AVX2 and for the baseline, and the AVX2
 * one is called where the CPU has it. */
#define GK_ROWS(SUFFIX, TARGET)                                                                         \
TARGET static void luma_row_##SUFFIX(const gk_rgb_to_i420_plan *p, const uint32_t *src, uint8_t *dst, int width) { \
    const int32_t yr = p->y[0], yg = p->y[1], yb = p->y[2];                                             \
    const int32_t add = (p->y_offset << 16) + (1 << 15);                                                \
    const int rs = 8 * p->r, gs = 8 * p->g, bs = 8 * p->b;                                              \
    for (int x = 0; x < width; x++) {                                                                   \
        const uint32_t px = src[x];                                                                     \
        const int32_t r = (int32_t)((px >> rs) & 255), g = (int32_t)((px >> gs) & 255), b = (int32_t)((px >> bs) & 255); \
        /* Never above 255 nor below 0 (the coefficients are positive and sum to at most 1). */      \
        dst[x] = (uint8_t)((yr * r + yg * g + yb * b + add) >> 16);                                     \
    }                                                                                                   \
}                                                                                                       \
TARGET static void chroma_row_##SUFFIX(const gk_rgb_to_i420_plan *p, const uint32_t *row0, const uint32_t *row1, \
                                       uint8_t *u, uint8_t *v, int width) {                             \
    const int32_t ur = p->u[0], ug = p->u[1], ub = p->u[2], vr = p->v[0], vg = p->v[1], vb = p->v[2];   \
    const int rs = 8 * p->r, gs = 8 * p->g, bs = 8 * p->b;                                              \
    const int32_t add = (128 << 18) + (1 << 17);                                                        \
    const int pairs = width / 2;                                                                        \
    for (int cx = 0; cx < pairs; cx++) {                                                                \
        const uint32_t a0 = row0[2 * cx], a1 = row0[2 * cx + 1], b0 = row1[2 * cx], b1 = row1[2 * cx + 1]; \
        const int32_t r = (int32_t)(((a0 >> rs) & 255) + ((a1 >> rs) & 255) + ((b0 >> rs) & 255) + ((b1 >> rs) & 255)); \
        const int32_t g = (int32_t)(((a0 >> gs) & 255) + ((a1 >> gs) & 255) + ((b0 >> gs) & 255) + ((b1 >> gs) & 255)); \
        const int32_t b = (int32_t)(((a0 >> bs) & 255) + ((a1 >> bs) & 255) + ((b0 >> bs) & 255) + ((b1 >> bs) & 255)); \
        u[cx] = clamp8((ur * r + ug * g + ub * b + add) >> 18);                                         \
        v[cx] = clamp8((vr * r + vg * g + vb * b + add) >> 18);                                         \
    }                                                                                                   \
    if (width & 1) {  /* the last column's pixel twice */                                              \
        const uint32_t a0 = row0[width - 1], b0 = row1[width - 1];                                      \
        const int32_t r = (int32_t)(2 * (((a0 >> rs) & 255) + ((b0 >> rs) & 255)));                   \
        const int32_t g = (int32_t)(2 * (((a0 >> gs) & 255) + ((b0 >> gs) & 255)));                   \
        const int32_t b = (int32_t)(2 * (((a0 >> bs) & 255) + ((b0 >> bs) & 255)));                   \
        u[pairs] = clamp8((ur * r + ug * g + ub * b + add) >> 18);                                      \
        v[pairs] = clamp8((vr * r + vg * g + vb * b + add) >> 18);                                      \
    }                                                                                                   \
}                                                                                                       \
TARGET static void convert_##SUFFIX(const gk_rgb_to_i420_plan *plan, const uint8_t *src, int src_stride, int width, int height, \
                                    uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride) { \
    for (int row = 0; row < height; row += 2) {                                                         \
        const uint32_t *row0 = (const uint32_t *)(src + (size_t)row * src_stride);                     \
        const uint32_t *row1 = row + 1 < height ? (const uint32_t *)(src + (size_t)(row + 1) * src_stride) : row0; \
        luma_row_##SUFFIX(plan, row0, y + (size_t)row * y_stride, width);                               \
        if (row + 1 < height) luma_row_##SUFFIX(plan, row1, y + (size_t)(row + 1) * y_stride, width);   \
        chroma_row_##SUFFIX(plan, row0, row1, u + (size_t)(row / 2) * u_stride, v + (size_t)(row / 2) * v_stride, width); \
    }                                                                                                   \
}

GK_ROWS(baseline, )
GK_ROWS(avx2, __attribute__((target("avx2"))))

/* `src` rows are 4-byte aligned (GStreamer's packed RGB frames always are). */
void gk_rgb_to_i420(const gk_rgb_to_i420_plan *plan, const uint8_t *src, int src_stride, int width, int height,
                    uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride) {
    /* A read of libgcc's CPU model, filled at start-up: nothing to cache. */
    if (__builtin_cpu_supports("avx2")) convert_avx2(plan, src, src_stride, width, height, y, y_stride, u, u_stride, v, v_stride);
    else convert_baseline(plan, src, src_stride, width, height, y, y_stride, u, u_stride, v, v_stride);
}

/* ---- the element ---- */

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

/* Output frames come from a pool, reused as the encoder lets them go. Without one (gkx264enc,
 * like x264enc, offers none) GstBaseTransform allocates every frame afresh, and the kernel pays
 * for zeroing new pages: 4% of a 720p encode's CPU, measured. */
static gboolean decide_allocation(GstBaseTransform *trans, GstQuery *query) {
    GstCaps *caps = NULL;
    gst_query_parse_allocation(query, &caps, NULL);
    GstVideoInfo info;
    if (!caps || !gst_video_info_from_caps(&info, caps)) return FALSE;
    GstBufferPool *pool = NULL;
    guint size = (guint)info.size, min = 0, max = 0;
    const gboolean offered = gst_query_get_n_allocation_pools(query) > 0;
    if (offered) {
        gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
        size = MAX(size, (guint)info.size);
    }
    if (!pool) pool = gst_video_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, min, max);
    if (gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL))
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_set_config(pool, config);
    if (offered) gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
    else gst_query_add_allocation_pool(query, pool, size, min, max);
    gst_object_unref(pool);
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
    gk_rgb_to_i420(&self->plan, GST_VIDEO_FRAME_PLANE_DATA(in, 0), GST_VIDEO_FRAME_PLANE_STRIDE(in, 0),
                   GST_VIDEO_FRAME_WIDTH(in), GST_VIDEO_FRAME_HEIGHT(in),
                   GST_VIDEO_FRAME_PLANE_DATA(out, 0), GST_VIDEO_FRAME_PLANE_STRIDE(out, 0),
                   GST_VIDEO_FRAME_PLANE_DATA(out, 1), GST_VIDEO_FRAME_PLANE_STRIDE(out, 1),
                   GST_VIDEO_FRAME_PLANE_DATA(out, 2), GST_VIDEO_FRAME_PLANE_STRIDE(out, 2));
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

void gk_register_elements(void) {
    gst_element_register(NULL, "gkrgbtoi420", GST_RANK_NONE, gk_rgb_to_i420_get_type());
    gst_element_register(NULL, "gkx264enc", GST_RANK_NONE, gk_x264_enc_get_type());
}
