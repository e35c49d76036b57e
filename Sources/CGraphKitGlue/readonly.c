#include <string.h>
#include <gst/video/video.h>
#include "CGraphKitGlue.h"

/* Decoding for readers only (the `decode` node's readOnlyFrames): decodebin takes the graphkit
 * plugin's gkavdec before any other decoder it can use, and the frames' readers say that they
 * read a video meta, so gkavdec hands its pictures on uncopied. Declarations in CGraphKitGlue.h. */

#define SHARING_DECODER "gkavdec"

/* decodebin's own order (gst_playback_utils_compare_factories_func): parsers first, then rank. */
static gint parsers_first(gconstpointer a, gconstpointer b) {
    const gboolean pa = gst_element_factory_list_is_type((GstElementFactory *)a, GST_ELEMENT_FACTORY_TYPE_PARSER);
    const gboolean pb = gst_element_factory_list_is_type((GstElementFactory *)b, GST_ELEMENT_FACTORY_TYPE_PARSER);
    if (pa != pb) return pa ? -1 : 1;
    return gst_plugin_feature_rank_compare_func(a, b);
}

/* Whether gkavdec hands on the pictures of a parsed stream of `caps`: 8, 10 or 12 bits (gray 8
 * only), as its output formats are; for another (9 bits, 14, gray 10) the usual decoder stays,
 * since a decoder decodebin has taken cannot give the stream back. */
static gboolean sharing_decoder_takes(const GstCaps *caps) {
    const GstStructure *s = gst_caps_get_structure(caps, 0);
    guint luma = 8, chroma = 8;
    gst_structure_get_uint(s, "bit-depth-luma", &luma);
    gst_structure_get_uint(s, "bit-depth-chroma", &chroma);
    const gchar *sampling = gst_structure_get_string(s, "chroma-format");
    if (luma != chroma || (luma != 8 && luma != 10 && luma != 12)) return FALSE;
    return !(sampling && strcmp(sampling, "4:0:0") == 0 && luma != 8);
}

/* decodebin's autoplug-factories: its default list for `caps`, with gkavdec (rank none, so never
 * in it) put before the first element that is not a parser, when it takes `caps`: a parser still
 * comes first, and the decoder gets the parsed stream. */
static GValueArray *sharing_decoder_first(GstElement *bin, GstPad *pad, GstCaps *caps, gpointer data) {
    (void)bin; (void)pad; (void)data;
    GList *all = gst_element_factory_list_get_elements(GST_ELEMENT_FACTORY_TYPE_DECODABLE, GST_RANK_MARGINAL);
    all = g_list_sort(all, parsers_first);
    GList *takers = gst_element_factory_list_filter(all, caps, GST_PAD_SINK, gst_caps_is_fixed(caps));
    GstElementFactory *sharing = gst_element_factory_find(SHARING_DECODER);
    gboolean insert = FALSE;
    if (sharing && sharing_decoder_takes(caps)) {
        GList *one = g_list_append(NULL, sharing);
        GList *fits = gst_element_factory_list_filter(one, caps, GST_PAD_SINK, gst_caps_is_fixed(caps));
        insert = fits != NULL;
        gst_plugin_feature_list_free(fits);
        g_list_free(one);
    }
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    GValueArray *result = g_value_array_new(g_list_length(takers) + 1);
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_OBJECT);
    for (GList *l = takers; l; l = l->next) {
        if (insert && !gst_element_factory_list_is_type(l->data, GST_ELEMENT_FACTORY_TYPE_PARSER)) {
            g_value_set_object(&v, sharing);
            g_value_array_append(result, &v);
            insert = FALSE;
        }
        g_value_set_object(&v, l->data);
        g_value_array_append(result, &v);
    }
    if (insert) {
        g_value_set_object(&v, sharing);
        g_value_array_append(result, &v);
    }
    g_value_unset(&v);
    G_GNUC_END_IGNORE_DEPRECATIONS
    if (sharing) gst_object_unref(sharing);
    gst_plugin_feature_list_free(takers);
    gst_plugin_feature_list_free(all);
    return result;
}

gulong gk_decodebin_prefer_sharing_decoder(GstElement *decodebin) {
    return g_signal_connect_data(decodebin, "autoplug-factories", G_CALLBACK(sharing_decoder_first), NULL, NULL, 0);
}

/* An allocation query going downstream from the pad is answered here: video metas are read, no
 * pool is offered. */
static GstPadProbeReturn answer_allocation(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad; (void)data;
    GstQuery *query = GST_PAD_PROBE_INFO_QUERY(info);
    if (!query || GST_QUERY_TYPE(query) != GST_QUERY_ALLOCATION || !(GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_PUSH))
        return GST_PAD_PROBE_OK;
    if (!gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL))
        gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    return GST_PAD_PROBE_HANDLED;
}

gulong gk_pad_answer_allocation_reading_video_meta(GstPad *pad) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM, answer_allocation, NULL, NULL);
}
