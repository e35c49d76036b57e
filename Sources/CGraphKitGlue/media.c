// What media holds, for messages and for nodes that read it: a file's streams without playing it
// (GStreamer's discoverer, for Asset), where a stream's format was refused and what would have
// been taken, and the channel mask audio caps lack.
#include "CGraphKitGlue.h"
#include <gst/pbutils/pbutils.h>
#include <gst/audio/audio.h>
#include <gst/video/video.h>
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
                if (out->kind == 2 && gst_caps_get_size(caps) > 0) {
                    GstStructure *st = gst_caps_get_structure(caps, 0);
                    guint depth = 0;
                    copy_text(out->colorimetry, sizeof out->colorimetry, gst_structure_get_string(st, "colorimetry"));
                    copy_text(out->chroma, sizeof out->chroma, gst_structure_get_string(st, "chroma-format"));
                    copy_text(out->mastering, sizeof out->mastering, gst_structure_get_string(st, "mastering-display-info"));
                    copy_text(out->light, sizeof out->light, gst_structure_get_string(st, "content-light-level"));
                    if (gst_structure_get_uint(st, "bit-depth-luma", &depth))
                        out->bit_depth = (int)depth;
                }
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

/* --- Where a stream's format was refused, and what would have been taken ------------------- */

static gboolean is_raw(const GstCaps *caps) {
    if (caps == NULL || gst_caps_get_size(caps) == 0)
        return FALSE;
    const gchar *name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
    return g_str_equal(name, "audio/x-raw") || g_str_equal(name, "video/x-raw");
}

/* A source pad whose caps its peer refused: the pad holds them as a sticky event, and the peer
 * took no caps at all. (Whether the event is still pending is not asked: an EOS pushed after the
 * failure can mark it sent, and the bus is read later, on another thread.) */
static GstCaps *refused_caps(GstPad *pad) {
    GstCaps *found = NULL;
    GstEvent *sticky = gst_pad_get_sticky_event(pad, GST_EVENT_CAPS, 0);
    GstPad *peer = gst_pad_get_peer(pad);
    if (sticky != NULL && peer != NULL) {
        GstCaps *caps = NULL, *taken = gst_pad_get_current_caps(peer);
        gst_event_parse_caps(sticky, &caps);
        if (taken == NULL && is_raw(caps))
            found = gst_caps_ref(caps);
        if (taken) gst_caps_unref(taken);
    }
    if (sticky) gst_event_unref(sticky);
    if (peer) gst_object_unref(peer);
    return found;
}

static gboolean was_tried(GstPad *pad, GstPad *const *tried, guint n_tried) {
    for (guint i = 0; i < n_tried; i++)
        if (tried[i] == pad)
            return TRUE;
    return FALSE;
}

GstCaps *gk_bin_find_refused_caps(GstBin *bin, GstPad *const *tried, guint n_tried, GstElement **owner, GstPad **where) {
    GstCaps *found = NULL;
    *owner = NULL;
    *where = NULL;
    GstIterator *elements = gst_bin_iterate_recurse(bin);
    GValue item = G_VALUE_INIT;
    gboolean done = FALSE;
    while (!done) {
        switch (gst_iterator_next(elements, &item)) {
        case GST_ITERATOR_OK: {
            GstElement *element = g_value_get_object(&item);
            GstIterator *pads = gst_element_iterate_src_pads(element);
            GValue padItem = G_VALUE_INIT;
            while (found == NULL && gst_iterator_next(pads, &padItem) == GST_ITERATOR_OK) {
                GstPad *pad = g_value_get_object(&padItem);
                if (!was_tried(pad, tried, n_tried) && (found = refused_caps(pad)) != NULL) {
                    *owner = gst_object_ref(element);
                    *where = gst_object_ref(pad);
                }
                g_value_reset(&padItem);
            }
            g_value_unset(&padItem);
            gst_iterator_free(pads);
            g_value_reset(&item);
            if (found) done = TRUE;
            break;
        }
        case GST_ITERATOR_RESYNC:
            gst_iterator_resync(elements);
            break;
        default:
            done = TRUE;
        }
    }
    g_value_unset(&item);
    gst_iterator_free(elements);
    return found;
}

/* Whether some structure of `accepted` takes `value` for `field` (one without the field takes
 * any value of it). */
static gboolean field_taken(const GstCaps *accepted, const gchar *field, const GValue *value) {
    for (guint i = 0; i < gst_caps_get_size(accepted); i++) {
        const GValue *allowed = gst_structure_get_value(gst_caps_get_structure(accepted, i), field);
        if (allowed == NULL || gst_value_intersect(NULL, value, allowed))
            return TRUE;
    }
    return FALSE;
}

int gk_caps_field_refused(const GstCaps *offered, const GstCaps *accepted, const char *field) {
    if (offered == NULL || accepted == NULL || gst_caps_get_size(offered) == 0 || gst_caps_is_any(accepted))
        return 0;
    const GValue *value = gst_structure_get_value(gst_caps_get_structure(offered, 0), field);
    if (value == NULL)
        return 0;
    return gst_caps_is_empty(accepted) || !field_taken(accepted, field, value);
}

int gk_caps_int_field(const GstCaps *caps, const char *field, int *value) {
    if (caps == NULL || gst_caps_get_size(caps) == 0)
        return 0;
    return gst_structure_get_int(gst_caps_get_structure(caps, 0), field, value);
}

int gk_caps_field_span(const GstCaps *caps, const char *field, int *low, int *high) {
    gboolean any = FALSE;
    *low = G_MAXINT;
    *high = G_MININT;
    for (guint i = 0; i < gst_caps_get_size(caps); i++) {
        const GValue *v = gst_structure_get_value(gst_caps_get_structure(caps, i), field);
        int lo, hi;
        if (v == NULL) {
            lo = 1;
            hi = G_MAXINT;
        } else if (G_VALUE_HOLDS_INT(v)) {
            lo = hi = g_value_get_int(v);
        } else if (GST_VALUE_HOLDS_INT_RANGE(v)) {
            lo = gst_value_get_int_range_min(v);
            hi = gst_value_get_int_range_max(v);
        } else if (GST_VALUE_HOLDS_LIST(v) && gst_value_list_get_size(v) > 0) {
            lo = G_MAXINT;
            hi = G_MININT;
            for (guint j = 0; j < gst_value_list_get_size(v); j++) {
                const GValue *item = gst_value_list_get_value(v, j);
                if (!G_VALUE_HOLDS_INT(item)) continue;
                lo = MIN(lo, g_value_get_int(item));
                hi = MAX(hi, g_value_get_int(item));
            }
            if (lo > hi) continue;
        } else {
            continue;
        }
        *low = MIN(*low, lo);
        *high = MAX(*high, hi);
        any = TRUE;
    }
    return any;
}

/* --- A channel mask for audio whose caps give none ------------------------------------------ */

static GstPadProbeReturn complete_channel_mask(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event == NULL || GST_EVENT_TYPE(event) != GST_EVENT_CAPS)
        return GST_PAD_PROBE_OK;
    GstCaps *caps = NULL;
    gst_event_parse_caps(event, &caps);
    const GstStructure *s = caps && gst_caps_get_size(caps) > 0 ? gst_caps_get_structure(caps, 0) : NULL;
    gint channels = 0;
    if (s == NULL || !gst_structure_has_name(s, "audio/x-raw") || !gst_structure_get_int(s, "channels", &channels) ||
        channels <= 2 || gst_structure_has_field(s, "channel-mask"))
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    /* GStreamer's usual layout for the count (as its converter assumes up to 8), else none:
     * unpositioned channels, which is what the file says. */
    guint64 mask = channels <= 64 ? gst_audio_channel_get_fallback_mask(channels) : 0;
    GstCaps *completed = gst_caps_copy(caps);
    gst_caps_set_simple(completed, "channel-mask", GST_TYPE_BITMASK, mask, NULL);
    GstEvent *replacement = gst_event_new_caps(completed);
    gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
    gst_caps_unref(completed);
    gst_event_unref(event);
    info->data = replacement;
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_complete_channel_mask(GstPad *pad) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, complete_channel_mask, NULL, NULL);
}

/* --- Encoded samples handed to Swift as they reach a sink, on the running-time clock --------- */

typedef struct {
    GkSampleFn sample;
    GkEventFn event;
    void *context;
    GDestroyNotify destroy;
    GstSegment segment;
} SampleWatch;

static void sample_watch_free(gpointer data) {
    SampleWatch *w = data;
    if (w->destroy) w->destroy(w->context);
    g_free(w);
}

/* A buffer's time on the running-time clock: GST_CLOCK_STIME_NONE when it has none or lies
 * before the segment (a time before the clock's start is negative, as a B-frame's decode time
 * can be). */
static gint64 running(const GstSegment *segment, GstClockTime t) {
    if (!GST_CLOCK_TIME_IS_VALID(t)) return GST_CLOCK_STIME_NONE;
    guint64 magnitude = 0;
    int sign = gst_segment_to_running_time_full(segment, GST_FORMAT_TIME, t, &magnitude);
    if (sign == 0) return GST_CLOCK_STIME_NONE;
    return sign > 0 ? (gint64)magnitude : -(gint64)magnitude;
}

static void watch_buffer(SampleWatch *w, GstBuffer *buffer) {
    w->sample(w->context, buffer, running(&w->segment, GST_BUFFER_PTS(buffer)), running(&w->segment, GST_BUFFER_DTS(buffer)));
}

static GstPadProbeReturn sample_watch(GstPadProbeInfo *info, SampleWatch *w) {
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        watch_buffer(w, GST_PAD_PROBE_INFO_BUFFER(info));
        return GST_PAD_PROBE_OK;
    }
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        for (guint i = 0; i < gst_buffer_list_length(list); i++) watch_buffer(w, gst_buffer_list_get(list, i));
        return GST_PAD_PROBE_OK;
    }
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_SEGMENT:
        gst_event_copy_segment(event, &w->segment);
        break;
    case GST_EVENT_FLUSH_STOP:
        gst_segment_init(&w->segment, GST_FORMAT_TIME);
        w->event(w->context, 2, NULL);
        break;
    case GST_EVENT_CAPS: {
        GstCaps *caps = NULL;
        gst_event_parse_caps(event, &caps);
        w->event(w->context, 0, caps);
        break;
    }
    case GST_EVENT_EOS:
        w->event(w->context, 1, NULL);
        break;
    default:
        break;
    }
    return GST_PAD_PROBE_OK;
}

/* The watch's callbacks run on a streaming thread; entry and exit marked as every probe's are
 * (for ThreadSanitizer: the watch was made on the building thread). */
static GstPadProbeReturn sample_watch_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    gk_callback_enter(pad);
    GstPadProbeReturn r = sample_watch(info, data);
    gk_callback_leave(pad);
    return r;
}

gulong gk_pad_watch_samples(GstPad *pad, GkSampleFn sample, GkEventFn event, void *context, GDestroyNotify destroy) {
    SampleWatch *w = g_new0(SampleWatch, 1);
    w->sample = sample;
    w->event = event;
    w->context = context;
    w->destroy = destroy;
    gst_segment_init(&w->segment, GST_FORMAT_TIME);
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
                             sample_watch_probe, w, sample_watch_free);
}

gsize gk_caps_stream_header(const GstCaps *caps, guint index, guint8 *out, gsize capacity) {
    if (caps == NULL || gst_caps_get_size(caps) == 0)
        return 0;
    const GValue *headers = gst_structure_get_value(gst_caps_get_structure(caps, 0), "streamheader");
    if (headers == NULL || !GST_VALUE_HOLDS_ARRAY(headers) || index >= gst_value_array_get_size(headers))
        return 0;
    const GValue *v = gst_value_array_get_value(headers, index);
    if (!GST_VALUE_HOLDS_BUFFER(v))
        return 0;
    GstBuffer *b = gst_value_get_buffer(v);
    gsize size = gst_buffer_get_size(b);
    if (out != NULL && capacity > 0)
        gst_buffer_extract(b, 0, out, MIN(size, capacity));
    return size;
}

gboolean gk_caps_colour(const GstCaps *caps, gint *primaries, gint *transfer, gint *matrix, gint *full_range) {
    if (caps == NULL || gst_caps_get_size(caps) == 0)
        return FALSE;
    const gchar *text = gst_structure_get_string(gst_caps_get_structure(caps, 0), "colorimetry");
    GstVideoColorimetry c;
    if (text == NULL || !gst_video_colorimetry_from_string(&c, text))
        return FALSE;
    *primaries = (gint)gst_video_color_primaries_to_iso(c.primaries);
    *transfer = (gint)gst_video_transfer_function_to_iso(c.transfer);
    *matrix = (gint)gst_video_color_matrix_to_iso(c.matrix);
    *full_range = c.range == GST_VIDEO_COLOR_RANGE_0_255;
    return *primaries != 2 || *transfer != 2 || *matrix != 2;
}

static void put_u16(guint8 *out, guint v) { out[0] = (guint8)(v >> 8); out[1] = (guint8)v; }
static void put_u32(guint8 *out, guint32 v) { put_u16(out, v >> 16); put_u16(out + 2, v & 0xFFFF); }

gboolean gk_caps_mastering_display(const GstCaps *caps, guint8 *out24) {
    GstVideoMasteringDisplayInfo info;
    if (caps == NULL || gst_caps_get_size(caps) == 0 || !gst_video_mastering_display_info_from_caps(&info, caps))
        return FALSE;
    /* GStreamer lists red, green, blue; the SEI and the box green, blue, red. */
    static const int order[3] = {1, 2, 0};
    for (int i = 0; i < 3; i++) {
        put_u16(out24 + 4 * i, info.display_primaries[order[i]].x);
        put_u16(out24 + 4 * i + 2, info.display_primaries[order[i]].y);
    }
    put_u16(out24 + 12, info.white_point.x);
    put_u16(out24 + 14, info.white_point.y);
    put_u32(out24 + 16, info.max_display_mastering_luminance);
    put_u32(out24 + 20, info.min_display_mastering_luminance);
    return TRUE;
}

gboolean gk_caps_content_light(const GstCaps *caps, guint8 *out4) {
    GstVideoContentLightLevel level;
    if (caps == NULL || gst_caps_get_size(caps) == 0 || !gst_video_content_light_level_from_caps(&level, caps))
        return FALSE;
    put_u16(out4, level.max_content_light_level);
    put_u16(out4 + 2, level.max_frame_average_light_level);
    return TRUE;
}

gsize gk_caps_codec_data(const GstCaps *caps, guint8 *out, gsize capacity) {
    if (caps == NULL || gst_caps_get_size(caps) == 0)
        return 0;
    const GValue *v = gst_structure_get_value(gst_caps_get_structure(caps, 0), "codec_data");
    if (v == NULL || !GST_VALUE_HOLDS_BUFFER(v))
        return 0;
    GstBuffer *b = gst_value_get_buffer(v);
    gsize size = gst_buffer_get_size(b);
    if (out != NULL && capacity > 0)
        gst_buffer_extract(b, 0, out, MIN(size, capacity));
    return size;
}
