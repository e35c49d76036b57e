#include <string.h>
#include "CGraphKitGlue.h"

/* Picture sizes are checked before any video decoder is asked to decode them (issue 73, class
 * 1). A stream's size is a claim: an MP4's sample entry, a Matroska track, a parser's reading of
 * an SPS (which takes the container's word over its own), a JPEG frame's header. A decoder told
 * of a size it refuses fails its caps, and decodebin then tries the next decoder of the stream:
 * for HEVC that was libde265dec, which corrupts the heap on such a claim (munmap_chunk(): invalid
 * pointer), for H.264 nothing, which was reported as a decoder not installed. And a JPEG decoder
 * believes its frame's header: a few-KB frame claiming 37786x37786 took gigabytes.
 *
 * So every video decoder made in this process, in any bin (decodebin's, a discoverer's, a node's)
 * gets a probe on its input, through an emission hook on GstBin's element-added: sizes in caps,
 * and each JPEG frame's SOF, are put to the check GraphKit installs (FrameSizeLimit, in Swift:
 * the rule and its words live there). A refused stream reaches its decoder neither as caps nor
 * as a buffer (so the decoder allocates nothing and no other decoder is tried), and its first
 * buffer posts the error from the decoder, once decodebin has taken it on (an error posted while
 * decodebin still tries an element may be dropped). Declarations in CGraphKitGlue.h. */

static GkFrameSizeCheck size_check;

typedef struct {
    gboolean jpeg;    /* the stream is JPEG: each frame's own header is read */
    gboolean posted;  /* the refusal has been posted */
    gchar *refusal;   /* why the stream is refused, or NULL */
} Guard;

static void guard_free(gpointer data) {
    Guard *g = data;
    g_free(g->refusal);
    g_free(g);
}

/* A JPEG frame's size from its SOF marker segment (any of the 13 kinds), walking the marker
 * segments from SOI; FALSE for bytes that are not a JPEG frame or end before the SOF. Each step
 * moves forward, so the walk ends within the bytes. */
static gboolean jpeg_frame_size(const guint8 *d, gsize n, guint *width, guint *height) {
    if (n < 4 || d[0] != 0xFF || d[1] != 0xD8) return FALSE;
    gsize i = 2;
    while (i + 4 <= n) {
        if (d[i] != 0xFF) return FALSE;
        const guint8 m = d[i + 1];
        if (m == 0xFF) { i += 1; continue; }                                     /* fill */
        if (m == 0x01 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7)) { i += 2; continue; }  /* no length */
        if (m == 0xD9 || m == 0xDA) return FALSE;                                /* EOI, SOS: no SOF */
        const gsize length = ((gsize)d[i + 2] << 8) | d[i + 3];
        if (length < 2) return FALSE;
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
            if (i + 9 > n) return FALSE;
            *height = ((guint)d[i + 5] << 8) | d[i + 6];
            *width = ((guint)d[i + 7] << 8) | d[i + 8];
            return TRUE;
        }
        i += 2 + length;
    }
    return FALSE;
}

static gchar *refusal_of(int width, int height, long frame_bytes, const gchar *what) {
    char message[1024];
    if (width <= 0 || height <= 0 || size_check == NULL) return NULL;
    if (!size_check(width, height, frame_bytes, what, message, sizeof message)) return NULL;
    return g_strdup(message);
}

/* A JPEG frame's own claim, put to the check with the frame's bytes. */
static void check_jpeg_frame(Guard *g, GstBuffer *buffer) {
    GstMapInfo map;
    if (buffer == NULL || !gst_buffer_map(buffer, &map, GST_MAP_READ)) return;
    guint width = 0, height = 0;
    if (jpeg_frame_size(map.data, map.size, &width, &height))
        g->refusal = refusal_of((int)width, (int)height, (long)map.size, "image/jpeg");
    gst_buffer_unmap(buffer, &map);
}

static GstPadProbeReturn guard_input(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    Guard *g = data;
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) != GST_EVENT_CAPS) return GST_PAD_PROBE_OK;
        if (g->refusal) return GST_PAD_PROBE_DROP;
        GstCaps *caps = NULL;
        gst_event_parse_caps(event, &caps);
        if (caps == NULL || gst_caps_get_size(caps) == 0) return GST_PAD_PROBE_OK;
        const GstStructure *s = gst_caps_get_structure(caps, 0);
        const gchar *name = gst_structure_get_name(s);
        g->jpeg = g_strcmp0(name, "image/jpeg") == 0;
        int width = 0, height = 0;
        if (gst_structure_get_int(s, "width", &width) && gst_structure_get_int(s, "height", &height))
            g->refusal = refusal_of(width, height, -1, name);
        return g->refusal ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
    }
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        if (g->refusal == NULL && g->jpeg) check_jpeg_frame(g, GST_PAD_PROBE_INFO_BUFFER(info));
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        for (guint i = 0; list && g->refusal == NULL && g->jpeg && i < gst_buffer_list_length(list); i++)
            check_jpeg_frame(g, gst_buffer_list_get(list, i));
    } else {
        return GST_PAD_PROBE_OK;
    }
    if (g->refusal == NULL) return GST_PAD_PROBE_OK;
    if (!g->posted) {
        g->posted = TRUE;
        GstElement *decoder = gst_pad_get_parent_element(pad);
        if (decoder) {
            gk_element_post_error(decoder, 3, GST_STREAM_ERROR_FAILED, g->refusal, NULL);
            gst_object_unref(decoder);
        }
    }
    return GST_PAD_PROBE_DROP;
}

static gboolean is_video_decoder(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory == NULL) return FALSE;
    const gchar *klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
    return klass && strstr(klass, "Decoder") && (strstr(klass, "Video") || strstr(klass, "Image"));
}

static gboolean guard_new_decoder(GSignalInvocationHint *hint, guint count, const GValue *values, gpointer data) {
    (void)hint; (void)data;
    if (count < 2) return TRUE;
    GstElement *element = g_value_get_object(&values[1]);
    if (element == NULL || !is_video_decoder(element)) return TRUE;
    static GQuark guarded;
    if (!guarded) guarded = g_quark_from_static_string("graphkit-size-guard");
    if (g_object_get_qdata(G_OBJECT(element), guarded)) return TRUE;  /* moved from bin to bin */
    g_object_set_qdata(G_OBJECT(element), guarded, GINT_TO_POINTER(1));
    GstIterator *it = gst_element_iterate_sink_pads(element);
    GValue item = G_VALUE_INIT;
    while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
        GstPad *pad = g_value_get_object(&item);
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, guard_input,
                          g_new0(Guard, 1), guard_free);
        g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    return TRUE;
}

void gk_guard_video_decoders(GkFrameSizeCheck check) {
    static gsize once = 0;
    if (!g_once_init_enter(&once)) return;
    size_check = check;
    gpointer bin_class = g_type_class_ref(GST_TYPE_BIN);
    g_signal_add_emission_hook(g_signal_lookup("element-added", GST_TYPE_BIN), 0, guard_new_decoder, NULL, NULL);
    g_type_class_unref(bin_class);
    /* No silent fallback to a decoder that is not safe on hostile input: libde265dec is taken
     * only where libavcodec's HEVC decoder is not installed. */
    GstPluginFeature *de265 = GST_PLUGIN_FEATURE(gst_element_factory_find("libde265dec"));
    GstElementFactory *libav = gst_element_factory_find("avdec_h265");
    if (de265 && libav) gst_plugin_feature_set_rank(de265, GST_RANK_NONE);
    if (de265) gst_object_unref(de265);
    if (libav) gst_object_unref(libav);
    g_once_init_leave(&once, 1);
}
