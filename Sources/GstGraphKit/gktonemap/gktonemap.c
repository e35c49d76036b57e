/*
 * gktonemap: HDR video (BT.2100 HLG or PQ, BT.2020 or BT.709 primaries) to SDR, 8-bit I420 in
 * BT.709, limited range, for outputs that cannot carry HDR (H.264 exports, thumbnails, previews).
 * SDR input (any other transfer) passes through untouched.
 *
 * Why an element of GraphKit's own: GStreamer 1.22's videoconvert converts transfer functions
 * but does not tone-map (an HLG picture comes out washed out, a PQ one dark with its highlights
 * clipped), and no element of 1.22 does. The method (kernel.c says it in full): to linear light
 * (HLG with BT.2100's OOTF for a 1000-nit display; PQ with its EOTF), reference white (BT.2408:
 * 203 nits) to SDR white, highlights above the knee rolled off up to the source's peak, BT.2020
 * to BT.709 primaries in linear light, out-of-gamut colours desaturated toward their own
 * luminance rather than clipped, BT.709's OETF and matrix. The source's peak for PQ is the
 * mastering display's maximum luminance when the caps carry it (mastering-display-info), else
 * the `peak` property.
 *
 * Input: I420_10LE, P010_10LE (10-bit, as decoders of HEVC Main 10 give) and I420, NV12 (8-bit),
 * whose caps' colorimetry names the transfer. Output: I420, colorimetry bt709.
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=hlg.mov ! decodebin ! gktonemap ! x264enc ! mp4mux ! filesink location=sdr.mp4
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
    gk_tonemap_plan *plan;
    /* properties, under the object lock */
    gdouble reference_white, peak, knee;
    /* the source's peak the running plan uses (from the caps' mastering display or `peak`) */
    gdouble source_peak;
} GkToneMap;

typedef struct {
    GstVideoFilterClass parent_class;
} GkToneMapClass;

GType gk_tone_map_get_type(void);
G_DEFINE_TYPE(GkToneMap, gk_tone_map, GST_TYPE_VIDEO_FILTER)

enum { PROP_0, PROP_REFERENCE_WHITE, PROP_PEAK, PROP_KNEE, PROP_SOURCE_PEAK };

#define DEFAULT_REFERENCE_WHITE 203.0
#define DEFAULT_PEAK 1000.0
#define DEFAULT_KNEE 0.9

#define IN_FORMATS "{ I420_10LE, P010_10LE, I420, NV12 }"
#define SDR_FORMATS "{ I420, NV12 }"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string)" IN_FORMATS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string)" SDR_FORMATS));

/* Whether a colorimetry names a transfer this element maps: HLG or PQ. */
static gboolean is_hdr_transfer(GstVideoTransferFunction t) {
    return t == GST_VIDEO_TRANSFER_ARIB_STD_B67 || t == GST_VIDEO_TRANSFER_SMPTE2084;
}

/* -1: no colorimetry in the structure (or not one string); 0: SDR; 1: HDR. */
static int hdr_of(const GstStructure *s) {
    const char *c = gst_structure_get_string(s, "colorimetry");
    GstVideoColorimetry colorimetry;
    if (!c || !gst_video_colorimetry_from_string(&colorimetry, c)) return -1;
    return is_hdr_transfer(colorimetry.transfer) ? 1 : 0;
}

static gboolean is_sdr_format(const char *f) { return f && (!strcmp(f, "I420") || !strcmp(f, "NV12")); }

/* The structure with only the 8-bit formats of its format field, or NULL when it has none. */
static GstStructure *with_sdr_formats(const GstStructure *s) {
    const GValue *f = gst_structure_get_value(s, "format");
    GstStructure *copy = gst_structure_copy(s);
    if (!f) {
        GValue list = G_VALUE_INIT, item = G_VALUE_INIT;
        g_value_init(&list, GST_TYPE_LIST);
        g_value_init(&item, G_TYPE_STRING);
        g_value_set_static_string(&item, "I420");
        gst_value_list_append_value(&list, &item);
        g_value_set_static_string(&item, "NV12");
        gst_value_list_append_value(&list, &item);
        gst_structure_take_value(copy, "format", &list);
        g_value_unset(&item);
        return copy;
    }
    if (G_VALUE_HOLDS_STRING(f)) {
        if (is_sdr_format(g_value_get_string(f))) return copy;
        gst_structure_free(copy);
        return NULL;
    }
    if (GST_VALUE_HOLDS_LIST(f)) {
        GValue list = G_VALUE_INIT;
        g_value_init(&list, GST_TYPE_LIST);
        for (guint i = 0; i < gst_value_list_get_size(f); i++) {
            const GValue *item = gst_value_list_get_value(f, i);
            if (G_VALUE_HOLDS_STRING(item) && is_sdr_format(g_value_get_string(item))) gst_value_list_append_value(&list, item);
        }
        if (gst_value_list_get_size(&list) == 0) {
            g_value_unset(&list);
            gst_structure_free(copy);
            return NULL;
        }
        gst_structure_take_value(copy, "format", &list);
        return copy;
    }
    gst_structure_free(copy);
    return NULL;
}

/* Across the element. Downstream of an HDR input: I420 in bt709, without the HDR fields. Of an
 * SDR input: the same caps (passthrough; 8-bit formats only). Of an input whose colorimetry is not
 * known yet: either. Upstream of I420 in bt709 (or unstated): any input format with any colour;
 * of an 8-bit format: itself (passthrough). */
static GstCaps *transform_caps(GstBaseTransform *trans, GstPadDirection direction, GstCaps *caps, GstCaps *filter) {
    GstCaps *out = gst_caps_new_empty();
    for (guint i = 0; i < gst_caps_get_size(caps); i++) {
        const GstStructure *s = gst_caps_get_structure(caps, i);
        const int hdr = hdr_of(s);
        if (direction == GST_PAD_SINK) {
            if (hdr != 1) {
                GstStructure *same = with_sdr_formats(s);
                if (same) gst_caps_append_structure(out, same);
            }
            if (hdr != 0) {
                GstStructure *sdr = gst_structure_copy(s);
                gst_structure_remove_fields(sdr, "colorimetry", "chroma-site", "mastering-display-info", "content-light-level", NULL);
                gst_structure_set(sdr, "format", G_TYPE_STRING, "I420", "colorimetry", G_TYPE_STRING, "bt709", NULL);
                gst_caps_append_structure(out, sdr);
            }
        } else {
            if (hdr != 1) {
                GstStructure *same = with_sdr_formats(s);
                if (same) gst_caps_append_structure(out, same);
            }
            const GValue *f = gst_structure_get_value(s, "format");
            gboolean i420 = !f || (G_VALUE_HOLDS_STRING(f) && !strcmp(g_value_get_string(f), "I420"));
            if (f && GST_VALUE_HOLDS_LIST(f))
                for (guint k = 0; k < gst_value_list_get_size(f); k++) {
                    const GValue *item = gst_value_list_get_value(f, k);
                    if (G_VALUE_HOLDS_STRING(item) && !strcmp(g_value_get_string(item), "I420")) i420 = TRUE;
                }
            const char *c = gst_structure_get_string(s, "colorimetry");
            if (i420 && (!gst_structure_has_field(s, "colorimetry") || (c && !strcmp(c, "bt709")))) {
                GstStructure *any = gst_structure_copy(s);
                gst_structure_remove_fields(any, "colorimetry", "chroma-site", NULL);
                GstCaps *tmpl = gst_static_pad_template_get_caps(&sink_template);
                gst_structure_set_value(any, "format", gst_structure_get_value(gst_caps_get_structure(tmpl, 0), "format"));
                gst_caps_unref(tmpl);
                gst_caps_append_structure(out, any);
            }
        }
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

/* Output frames from a pool (common/pool.h says why). */
static gboolean decide_allocation(GstBaseTransform *trans, GstQuery *query) {
    if (!gk_choose_output_pool(query)) return FALSE;
    return GST_BASE_TRANSFORM_CLASS(gk_tone_map_parent_class)->decide_allocation(trans, query);
}

static gboolean set_info(GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in_info, GstCaps *outcaps, GstVideoInfo *out_info) {
    GkToneMap *self = (GkToneMap *)filter;
    (void)outcaps;
    const GstVideoColorimetry *c = &in_info->colorimetry;
    if (!is_hdr_transfer(c->transfer)) {
        if (GST_VIDEO_INFO_FORMAT(in_info) != GST_VIDEO_INFO_FORMAT(out_info)) {
            GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("SDR video passes through gktonemap as it is; it cannot convert its format."),
                              ("%" GST_PTR_FORMAT " to %" GST_PTR_FORMAT, incaps, outcaps));
            return FALSE;
        }
        gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(filter), TRUE);
        return TRUE;
    }
    if (GST_VIDEO_INFO_FORMAT(out_info) != GST_VIDEO_FORMAT_I420 || in_info->width != out_info->width ||
        in_info->height != out_info->height)
        return FALSE;
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(filter), FALSE);
    gk_tonemap_layout layout;
    switch (GST_VIDEO_INFO_FORMAT(in_info)) {
    case GST_VIDEO_FORMAT_I420: layout = GK_TONEMAP_I420; break;
    case GST_VIDEO_FORMAT_NV12: layout = GK_TONEMAP_NV12; break;
    case GST_VIDEO_FORMAT_I420_10LE: layout = GK_TONEMAP_I420_10LE; break;
    case GST_VIDEO_FORMAT_P010_10LE: layout = GK_TONEMAP_P010_10LE; break;
    default: return FALSE;
    }
    gk_tonemap_settings settings = { 0 };
    settings.transfer = c->transfer == GST_VIDEO_TRANSFER_ARIB_STD_B67 ? GK_TONEMAP_HLG : GK_TONEMAP_PQ;
    settings.kr = 0.2627, settings.kb = 0.0593;  /* BT.2020 where the caps name no YUV matrix */
    gst_video_color_matrix_get_Kr_Kb(c->matrix, &settings.kr, &settings.kb);
    settings.full_range = c->range == GST_VIDEO_COLOR_RANGE_0_255;
    settings.bt2020_primaries = c->primaries != GST_VIDEO_COLOR_PRIMARIES_BT709;
    GST_OBJECT_LOCK(self);
    settings.reference_white = self->reference_white;
    settings.source_peak = self->peak;
    settings.knee = self->knee;
    GST_OBJECT_UNLOCK(self);
    GstVideoMasteringDisplayInfo mastering;
    if (gst_video_mastering_display_info_from_caps(&mastering, incaps) && mastering.max_display_mastering_luminance > 0)
        settings.source_peak = mastering.max_display_mastering_luminance / 10000.0;  /* in units of 0.0001 cd/m² */
    GST_OBJECT_LOCK(self);
    self->source_peak = settings.transfer == GK_TONEMAP_HLG ? 1000.0 : settings.source_peak;
    GST_OBJECT_UNLOCK(self);
    if (!gk_tonemap_plan_make(self->plan, &settings, layout, in_info->width)) {
        GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("Out of memory for a row of the frame."), (NULL));
        return FALSE;
    }
    GST_INFO_OBJECT(self, "%s, %s primaries, source peak %.0f nits, reference white %.0f nits, knee %.2f",
                    settings.transfer == GK_TONEMAP_HLG ? "HLG" : "PQ", settings.bt2020_primaries ? "BT.2020" : "BT.709",
                    settings.source_peak, settings.reference_white, settings.knee);
    return TRUE;
}

static GstFlowReturn transform_frame(GstVideoFilter *filter, GstVideoFrame *in, GstVideoFrame *out) {
    GkToneMap *self = (GkToneMap *)filter;
    GK_BUFFER_RECEIVED(in->buffer);
    GK_BUFFER_RECEIVED(out->buffer);
    const gboolean planar = GST_VIDEO_FRAME_N_PLANES(in) == 3;
    const uint8_t *const src[3] = { GST_VIDEO_FRAME_PLANE_DATA(in, 0), GST_VIDEO_FRAME_PLANE_DATA(in, 1),
                                    planar ? GST_VIDEO_FRAME_PLANE_DATA(in, 2) : NULL };
    const int stride[3] = { GST_VIDEO_FRAME_PLANE_STRIDE(in, 0), GST_VIDEO_FRAME_PLANE_STRIDE(in, 1),
                            planar ? GST_VIDEO_FRAME_PLANE_STRIDE(in, 2) : 0 };
    gk_tonemap_frame(self->plan, src, stride, GST_VIDEO_FRAME_WIDTH(in), GST_VIDEO_FRAME_HEIGHT(in),
                     GST_VIDEO_FRAME_PLANE_DATA(out, 0), GST_VIDEO_FRAME_PLANE_STRIDE(out, 0),
                     GST_VIDEO_FRAME_PLANE_DATA(out, 1), GST_VIDEO_FRAME_PLANE_STRIDE(out, 1),
                     GST_VIDEO_FRAME_PLANE_DATA(out, 2), GST_VIDEO_FRAME_PLANE_STRIDE(out, 2));
    GK_BUFFER_HANDED_ON(out->buffer);
    GK_BUFFER_HANDED_ON(in->buffer);
    return GST_FLOW_OK;
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkToneMap *self = (GkToneMap *)object;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_REFERENCE_WHITE: self->reference_white = g_value_get_double(value); break;
    case PROP_PEAK: self->peak = g_value_get_double(value); break;
    case PROP_KNEE: self->knee = g_value_get_double(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkToneMap *self = (GkToneMap *)object;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_REFERENCE_WHITE: g_value_set_double(value, self->reference_white); break;
    case PROP_PEAK: g_value_set_double(value, self->peak); break;
    case PROP_KNEE: g_value_set_double(value, self->knee); break;
    case PROP_SOURCE_PEAK: g_value_set_double(value, self->source_peak); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void finalize(GObject *object) {
    GkToneMap *self = (GkToneMap *)object;
    gk_tonemap_plan_clear(self->plan);
    g_free(self->plan);
    G_OBJECT_CLASS(gk_tone_map_parent_class)->finalize(object);
}

static void gk_tone_map_class_init(GkToneMapClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass *base = GST_BASE_TRANSFORM_CLASS(klass);
    GstVideoFilterClass *video = GST_VIDEO_FILTER_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    object->finalize = finalize;
    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
    g_object_class_install_property(object, PROP_REFERENCE_WHITE,
        g_param_spec_double("reference-white", "Reference white", "Nits of the HDR picture that become SDR white (BT.2408: 203)",
                            80, 1000, DEFAULT_REFERENCE_WHITE, rw));
    g_object_class_install_property(object, PROP_PEAK,
        g_param_spec_double("peak", "Peak", "PQ: the source's brightest nits when its caps carry no mastering display",
                            100, 10000, DEFAULT_PEAK, rw));
    g_object_class_install_property(object, PROP_KNEE,
        g_param_spec_double("knee", "Knee", "The fraction of reference white where the highlights' roll-off starts",
                            0.5, 0.99, DEFAULT_KNEE, rw));
    g_object_class_install_property(object, PROP_SOURCE_PEAK,
        g_param_spec_double("source-peak", "Source peak", "The source peak the stream is mapped from (nits; HLG: 1000)",
                            0, 10000, 0, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit tone mapping", "Filter/Converter/Video",
                                          "HDR (HLG, PQ) to SDR BT.709 I420; SDR passes through", "GraphKit");
    base->transform_caps = transform_caps;
    base->decide_allocation = decide_allocation;
    base->passthrough_on_same_caps = TRUE;
    video->set_info = set_info;
    video->transform_frame = transform_frame;
}

static void gk_tone_map_init(GkToneMap *self) {
    self->plan = g_new0(gk_tonemap_plan, 1);
    self->reference_white = DEFAULT_REFERENCE_WHITE;
    self->peak = DEFAULT_PEAK;
    self->knee = DEFAULT_KNEE;
}

/* Rank none: only a pipeline that names it uses it (effect.toneMap does). */
GST_ELEMENT_REGISTER_DEFINE(gktonemap, "gktonemap", GST_RANK_NONE, gk_tone_map_get_type())
