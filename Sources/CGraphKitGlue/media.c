// Reading a media file's streams without playing it: GStreamer's discoverer, for Asset.
#include "CGraphKitGlue.h"
#include <gst/pbutils/pbutils.h>
#include <string.h>

static void copy_text(char *to, size_t size, const char *from) {
    if (size == 0)
        return;
    g_strlcpy(to, from ? from : "", size);
}

int gk_discover(const char *uri, guint64 timeout_ns, guint64 *duration_ns, GkStreamInfo *streams, int max,
                char *error, size_t error_len) {
    GError *err = NULL;
    GstDiscoverer *discoverer = gst_discoverer_new(timeout_ns, &err);
    if (discoverer == NULL) {
        copy_text(error, error_len, err ? err->message : "cannot make a discoverer");
        g_clear_error(&err);
        return -1;
    }
    GstDiscovererInfo *info = gst_discoverer_discover_uri(discoverer, uri, &err);
    GstDiscovererResult result = info ? gst_discoverer_info_get_result(info) : GST_DISCOVERER_ERROR;
    int count = 0;
    if (result == GST_DISCOVERER_MISSING_PLUGINS) {
        const gchar **details = info ? gst_discoverer_info_get_missing_elements_installer_details(info) : NULL;
        gchar *text = NULL;
        if (details && details[0]) {
            /* gstreamer|1.0|app|description|decoder-...: the human part is field 4. */
            gchar **fields = g_strsplit(details[0], "|", 5);
            text = g_strdup(fields[0] && fields[1] && fields[2] && fields[3] ? fields[3] : details[0]);
            g_strfreev(fields);
        }
        copy_text(error, error_len, text ? text : "a GStreamer plugin is missing");
        g_free(text);
        count = -2;
    } else if (result == GST_DISCOVERER_TIMEOUT) {
        copy_text(error, error_len, "reading its streams timed out");
        count = -1;
    } else if (result != GST_DISCOVERER_OK) {
        copy_text(error, error_len, err ? err->message : "GStreamer cannot read it");
        count = -1;
    } else {
        *duration_ns = gst_discoverer_info_get_duration(info);
        GList *list = gst_discoverer_info_get_stream_list(info);
        for (GList *l = list; l != NULL && count < max; l = l->next) {
            GstDiscovererStreamInfo *s = l->data;
            GkStreamInfo *out = &streams[count];
            memset(out, 0, sizeof *out);
            if (GST_IS_DISCOVERER_AUDIO_INFO(s)) {
                out->kind = 1;
                out->rate = (int)gst_discoverer_audio_info_get_sample_rate(GST_DISCOVERER_AUDIO_INFO(s));
                out->channels = (int)gst_discoverer_audio_info_get_channels(GST_DISCOVERER_AUDIO_INFO(s));
            } else if (GST_IS_DISCOVERER_VIDEO_INFO(s)) {
                GstDiscovererVideoInfo *v = GST_DISCOVERER_VIDEO_INFO(s);
                out->kind = gst_discoverer_video_info_is_image(v) ? 0 : 2;
                out->width = (int)gst_discoverer_video_info_get_width(v);
                out->height = (int)gst_discoverer_video_info_get_height(v);
                out->fps_n = (int)gst_discoverer_video_info_get_framerate_num(v);
                out->fps_d = (int)gst_discoverer_video_info_get_framerate_denom(v);
            } else if (GST_IS_DISCOVERER_SUBTITLE_INFO(s)) {
                out->kind = 3;
            } else {
                continue; /* a container: its streams follow in the list */
            }
            GstCaps *caps = gst_discoverer_stream_info_get_caps(s);
            if (caps) {
                gchar *desc = gst_pb_utils_get_codec_description(caps);
                copy_text(out->codec, sizeof out->codec, desc);
                g_free(desc);
                gchar *text = gst_caps_to_string(caps);
                copy_text(out->caps, sizeof out->caps, text);
                g_free(text);
                gst_caps_unref(caps);
            }
            count++;
        }
        gst_discoverer_stream_info_list_free(list);
    }
    if (info)
        gst_discoverer_info_unref(info);
    g_clear_error(&err);
    g_object_unref(discoverer);
    return count;
}

void gk_bin_unblock_app_sinks(GstBin *bin) {
    GstIterator *it = gst_bin_iterate_recurse(bin);
    GValue item = G_VALUE_INIT;
    gboolean done = FALSE;
    while (!done) {
        switch (gst_iterator_next(it, &item)) {
        case GST_ITERATOR_OK: {
            GstElement *element = g_value_get_object(&item);
            GstElementFactory *factory = gst_element_get_factory(element);
            if (factory && g_strcmp0(GST_OBJECT_NAME(factory), "appsink") == 0) {
                GstPad *pad = gst_element_get_static_pad(element, "sink");
                if (pad) {
                    gst_pad_send_event(pad, gst_event_new_flush_start());
                    gst_object_unref(pad);
                }
            }
            g_value_reset(&item);
            break;
        }
        case GST_ITERATOR_RESYNC:
            gst_iterator_resync(it);
            break;
        default:
            done = TRUE;
            break;
        }
    }
    g_value_unset(&item);
    gst_iterator_free(it);
}

/* --- What an element is, for messages ------------------------------------------------------- */

const char *gk_object_factory_name(GstObject *object) {
    if (object == NULL || !GST_IS_ELEMENT(object))
        return NULL;
    GstElementFactory *factory = gst_element_get_factory(GST_ELEMENT(object));
    return factory ? GST_OBJECT_NAME(factory) : NULL;
}
