#include <string.h>
#include <gst/gst.h>
#include "CGraphKitGlue.h"

/* opusparse (1.22 and 1.26) takes the stream's comment header (OpusTags: its title, artist...)
 * in, in the upstream caps' streamheader or as a packet, and sends caps of its own making on,
 * whose comment header is empty ("GStreamer encoded vorbiscomment", no comments): a muxer
 * writes that, and an Ogg Opus file remuxed lost its tags. The header that comes in with
 * comments is put back in the caps that go out with none. */
static gboolean opus_comments_count(GstBuffer *b, guint32 *count) {
    GstMapInfo map;
    if (b == NULL || !gst_buffer_map(b, &map, GST_MAP_READ))
        return FALSE;
    gboolean ok = FALSE;
    if (map.size >= 16 && memcmp(map.data, "OpusTags", 8) == 0) {
        guint32 vendor = GST_READ_UINT32_LE(map.data + 8);
        if (vendor <= map.size - 16) {
            *count = GST_READ_UINT32_LE(map.data + 12 + vendor);
            ok = TRUE;
        }
    }
    gst_buffer_unmap(b, &map);
    return ok;
}

/* The comment header of a caps event's streamheader (its second buffer), or NULL. */
static GstBuffer *opus_caps_comments(GstEvent *event, const GValue **headers_out) {
    GstCaps *caps = NULL;
    gst_event_parse_caps(event, &caps);
    if (caps == NULL || gst_caps_get_size(caps) == 0)
        return NULL;
    const GValue *headers = gst_structure_get_value(gst_caps_get_structure(caps, 0), "streamheader");
    if (headers == NULL || !GST_VALUE_HOLDS_ARRAY(headers) || gst_value_array_get_size(headers) < 2)
        return NULL;
    const GValue *second = gst_value_array_get_value(headers, 1);
    if (!GST_VALUE_HOLDS_BUFFER(second))
        return NULL;
    if (headers_out != NULL)
        *headers_out = headers;
    return gst_value_get_buffer(second);
}

/* Shared by the parser's two probes (each holds a reference): the comment header kept, and
 * whether the stream's packets have begun (the headers come first: no later buffer is looked at). */
typedef struct { GstBuffer *comments; gboolean past_headers; } OpusComments;

static void opus_comments_clear(gpointer data) {
    OpusComments *k = data;
    if (k->comments != NULL)
        gst_buffer_unref(k->comments);
}

static void opus_comments_release(gpointer data) { g_atomic_rc_box_release_full(data, opus_comments_clear); }

static void opus_comments_keep(OpusComments *k, GstBuffer *b) {
    guint32 count = 0;
    if (k->comments == NULL && opus_comments_count(b, &count) && count > 0)
        k->comments = gst_buffer_ref(b);
}

static GstPadProbeReturn opus_comments_in(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    OpusComments *k = data;
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        guint8 magic[8];
        if (k->comments == NULL && !k->past_headers && b != NULL) {
            if (gst_buffer_extract(b, 0, magic, 8) == 8 && memcmp(magic, "OpusTags", 8) == 0)
                opus_comments_keep(k, b);
            else if (gst_buffer_extract(b, 0, magic, 8) != 8 || memcmp(magic, "OpusHead", 8) != 0)
                k->past_headers = TRUE;
        }
    } else if (GST_PAD_PROBE_INFO_EVENT(info) != NULL && GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) == GST_EVENT_CAPS) {
        GstBuffer *b = opus_caps_comments(GST_PAD_PROBE_INFO_EVENT(info), NULL);
        if (b != NULL)
            opus_comments_keep(k, b);
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn opus_comments_out(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    OpusComments *k = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event == NULL || GST_EVENT_TYPE(event) != GST_EVENT_CAPS || k->comments == NULL)
        return GST_PAD_PROBE_OK;
    const GValue *headers = NULL;
    guint32 count = 0;
    GstBuffer *b = opus_caps_comments(event, &headers);
    if (b == NULL || !opus_comments_count(b, &count) || count > 0)
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    GValue array = G_VALUE_INIT;
    g_value_init(&array, GST_TYPE_ARRAY);
    for (guint i = 0; i < gst_value_array_get_size(headers); i++) {
        GValue v = G_VALUE_INIT;
        g_value_init(&v, GST_TYPE_BUFFER);
        gst_value_set_buffer(&v, i == 1 ? k->comments : gst_value_get_buffer(gst_value_array_get_value(headers, i)));
        gst_value_array_append_and_take_value(&array, &v);
    }
    GstCaps *caps = NULL;
    gst_event_parse_caps(event, &caps);
    GstCaps *fixed = gst_caps_copy(caps);
    gst_structure_take_value(gst_caps_get_structure(fixed, 0), "streamheader", &array);
    info->data = gst_event_new_caps(fixed);
    gst_caps_unref(fixed);
    gst_event_unref(event);
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

void gk_opusparse_keep_comment_header(GstElement *opusparse) {
    GstPad *sink = gst_element_get_static_pad(opusparse, "sink"), *src = gst_element_get_static_pad(opusparse, "src");
    if (sink != NULL && src != NULL) {
        OpusComments *k = g_atomic_rc_box_new0(OpusComments);
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, opus_comments_in,
                          g_atomic_rc_box_acquire(k), opus_comments_release);
        gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, opus_comments_out, k, opus_comments_release);
    }
    if (sink != NULL) gst_object_unref(sink);
    if (src != NULL) gst_object_unref(src);
}
