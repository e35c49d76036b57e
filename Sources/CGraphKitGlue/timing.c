#include <string.h>
#include <gst/audio/audio.h>
#include "CGraphKitGlue.h"
#include "GstGraphKit.h"

/* Stream timing: what a writer's pad sees go by, and what decodebin's own elements need where
 * GraphKit cannot put an element of its own (inside decodebin). The other workarounds are
 * elements of the graphkit plugin (Sources/GstGraphKit). Declarations and contracts in
 * CGraphKitGlue.h. */

#define ENCODER_DELAY_EVENT "graphkit-encoder-delay"

typedef struct {
    GkStreamFactFn fn;
    void *context;
    GDestroyNotify destroy;
} FactWatch;

static void fact_watch_free(gpointer data) {
    FactWatch *w = data;
    if (w->destroy) w->destroy(w->context);
    g_free(w);
}

static GstPadProbeReturn watch_facts(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    FactWatch *w = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    gk_callback_enter(pad);
    if (event != NULL && GST_EVENT_TYPE(event) == GST_EVENT_TAG) {
        GstTagList *tags = NULL;
        gchar *orientation = NULL;
        gst_event_parse_tag(event, &tags);
        if (tags != NULL && gst_tag_list_get_string(tags, GST_TAG_IMAGE_ORIENTATION, &orientation)) {
            w->fn(w->context, 0, orientation, 0, 0, 0);
            g_free(orientation);
        }
    } else if (event != NULL && GST_EVENT_TYPE(event) == GST_EVENT_CUSTOM_DOWNSTREAM) {
        const GstStructure *s = gst_event_get_structure(event);
        gint64 priming = 0, samples = 0;
        gint rate = 0;
        if (s != NULL && gst_structure_has_name(s, ENCODER_DELAY_EVENT) &&
            gst_structure_get_int64(s, "priming", &priming) && gst_structure_get_int64(s, "samples", &samples) &&
            gst_structure_get_int(s, "rate", &rate))
            w->fn(w->context, 1, NULL, priming, samples, rate);
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_watch_stream_facts(GstPad *pad, GkStreamFactFn fn, void *context, GDestroyNotify destroy) {
    FactWatch *w = g_new0(FactWatch, 1);
    w->fn = fn;
    w->context = context;
    w->destroy = destroy;
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, watch_facts, w, fact_watch_free);
}

/* --- MP3 encoder delay from ffmpeg's Info tag ----------------------------------------------
 * GStreamer 1.22's mpegaudioparse reads the encoder delay and padding from a LAME tag only when
 * its encoder string starts "LAME"; ffmpeg's (libmp3lame through libavcodec) says "Lavc" in the
 * same layout, so its MP3s decode with the delay and padding left in. ffmpeg's MP3 writer puts
 * the stream's encoder name there ("Lavc60.31", say), "Lavf lame" for a bitexact libmp3lame and
 * "Lavf" when it has none: a file remuxed with -c:a copy (cover art added, tags edited). The
 * first frame's tag is relabelled on its way into the parser, which then trims them as it does
 * for LAME's. */

static GstPadProbeReturn relabel_lavc(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    gint *done = data;
    if (!(info->type & GST_PAD_PROBE_TYPE_BUFFER) || __atomic_load_n(done, __ATOMIC_RELAXED))
        return GST_PAD_PROBE_OK;
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    if (buffer == NULL)
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    /* Sources/GstGraphKit/common/mp3tag.c: no element can go inside decodebin, before the
     * parser it plugs. */
    gboolean seen = FALSE;
    info->data = gk_mp3_relabel_ffmpeg_tag(buffer, &seen);
    if (seen) __atomic_store_n(done, 1, __ATOMIC_RELAXED);
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

/* GStreamer 1.22's audio decoders assert (a GLib critical on stderr) when gapless trimming
 * takes a whole frame, which the MP3 parser's does for every tagged MP3: the frame is dropped
 * as it should be. That one message is not shown; every other goes to GLib's handler. */
static void quiet_whole_frame_clip(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)data;
    if (message != NULL && strstr(message, "gst_audio_decoder_allocate_output_buffer: assertion 'size > 0' failed") != NULL)
        return;
    g_log_default_handler(domain, level, message, NULL);
}

/* Two of GStreamer's own assertions that guard nothing GraphKit relies on; each other message
 * goes to GLib's handler.
 * - A flushing seek of a run that writes a file reaches the muxer on its way upstream, and
 *   GStreamer 1.22's aggregator (mp4mux's base) applies it to its output's segment, which is in
 *   bytes, before passing it on to its inputs: gst_segment_do_seek asserts and leaves that
 *   segment as it was (a muxer's output is bytes: nothing reads it in time), and the seek goes on
 *   to the demuxers as it should.
 * - rtspsrc (1.22), when an RTSP server's interleaved data cannot be parsed, ends its streams
 *   with events stamped with the seek's sequence number, and no seek was made: the event keeps
 *   its own number (gst_event_set_seqnum asserts), the run fails naming the server (fuzz-rtsp). */
static void quiet_core_known(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)data;
    if (message != NULL && (strstr(message, "gst_segment_do_seek: assertion 'segment->format == format' failed") != NULL
                            || strstr(message, "gst_event_set_seqnum: assertion 'seqnum != GST_SEQNUM_INVALID' failed") != NULL))
        return;
    g_log_default_handler(domain, level, message, NULL);
}

/* rtmp2's AMF reader asserts (a GLib critical, in no log domain) on a server's malformed AMF:
 * a reply cut short, a field of the wrong type. The connection then fails, and sink.rtmp says
 * why; what a peer sent is not GraphKit's user's business on a terminal. Messages of
 * gst_amf_ functions are not shown; every other goes to GLib's handler. */
static void quiet_peer_amf(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
    (void)data;
    if (message != NULL && strncmp(message, "gst_amf_", 8) == 0)
        return;
    g_log_default_handler(domain, level, message, NULL);
}

void gk_quiet_known_criticals(void) {
    g_log_set_handler(NULL, G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION, quiet_peer_amf, NULL);
    g_log_set_handler("GStreamer-Audio", G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
                      quiet_whole_frame_clip, NULL);
    g_log_set_handler("GStreamer", G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
                      quiet_core_known, NULL);
}

/* A transport stream pushed in time (a live source: SRT, UDP) is timed by its own PTS: tsdemux
 * otherwise maps them through the PCR and the packets' arrival, and a burst (a sender catching
 * up, as a listener does once its caller connects) bent an SRT stream's audio times back by up
 * to 52 ms (measured: a file sent by sink.srt, received by source.srt and muxed, failed the MP4
 * writer's rising-times check). A file, pulled, has no such segment and keeps tsdemux's PCR
 * handling (its seeking relies on it). */
static GstPadProbeReturn time_ts_by_pts(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event == NULL || GST_EVENT_TYPE(event) != GST_EVENT_SEGMENT)
        return GST_PAD_PROBE_OK;
    const GstSegment *segment = NULL;
    gst_event_parse_segment(event, &segment);
    if (segment != NULL && segment->format == GST_FORMAT_TIME) {
        GstObject *demuxer = gst_pad_get_parent(pad);
        if (demuxer != NULL) {
            g_object_set(demuxer, "ignore-pcr", TRUE, NULL);
            gst_object_unref(demuxer);
        }
    }
    return GST_PAD_PROBE_REMOVE;
}

static void on_ts_demuxer_added(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin; (void)sub; (void)data;
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory == NULL || g_strcmp0(GST_OBJECT_NAME(factory), "tsdemux") != 0)
        return;
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink != NULL) {
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, time_ts_by_pts, NULL, NULL);
        gst_object_unref(sink);
    }
}

gulong gk_decodebin_time_live_ts_by_pts(GstElement *decodebin) {
    return g_signal_connect(decodebin, "deep-element-added", G_CALLBACK(on_ts_demuxer_added), NULL);
}

static void on_deep_element_added(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin; (void)sub; (void)data;
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory == NULL || g_strcmp0(GST_OBJECT_NAME(factory), "mpegaudioparse") != 0)
        return;
    gk_callback_enter(element);
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink != NULL) {
        /* Pulled or pushed, the first buffer the parser gets starts at its first frame. */
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_PULL | GST_PAD_PROBE_TYPE_PUSH,
                          relabel_lavc, g_new0(gint, 1), g_free);
        gst_object_unref(sink);
    }
    gk_callback_leave(element);
}

gulong gk_decodebin_read_lavc_mp3_delay(GstElement *decodebin) {
    return g_signal_connect(decodebin, "deep-element-added", G_CALLBACK(on_deep_element_added), NULL);
}

/* --- An MP4's index on its way into the demuxer, and trimming decoded audio ------------------ */

typedef struct {
    GkIndexFn fn;
    void *context;
    GDestroyNotify destroy;
} IndexWatch;

static void index_watch_free(gpointer data) {
    IndexWatch *w = data;
    if (w->destroy) w->destroy(w->context);
}
static void index_watch_unref(gpointer data) { g_atomic_rc_box_release_full(data, index_watch_free); }

static GstPadProbeReturn see_index(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    IndexWatch *w = data;
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    if (buffer == NULL || gst_buffer_get_size(buffer) < 8)
        return GST_PAD_PROBE_OK;
    guint8 head[8];
    gst_buffer_extract(buffer, 0, head, 8);
    /* qtdemux pulls the whole index at once: a buffer that is exactly one moov box. */
    if (memcmp(head + 4, "moov", 4) != 0 || GST_READ_UINT32_BE(head) != gst_buffer_get_size(buffer))
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    buffer = gst_buffer_make_writable(buffer);
    GstMapInfo map;
    if (gst_buffer_map(buffer, &map, GST_MAP_READWRITE)) {
        w->fn(w->context, map.data, map.size);
        gst_buffer_unmap(buffer, &map);
    }
    info->data = buffer;
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

static void watch_demuxer_index(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin; (void)sub;
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory == NULL || g_strcmp0(GST_OBJECT_NAME(factory), "qtdemux") != 0)
        return;
    gk_callback_enter(element);
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink != NULL) {
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_PULL, see_index,
                          g_atomic_rc_box_acquire(data), index_watch_unref);
        gst_object_unref(sink);
    }
    gk_callback_leave(element);
}

gulong gk_decodebin_watch_mp4_index(GstElement *decodebin, GkIndexFn fn, void *context, GDestroyNotify destroy) {
    IndexWatch *w = g_atomic_rc_box_new0(IndexWatch);
    w->fn = fn;
    w->context = context;
    w->destroy = destroy;
    return g_signal_connect_data(decodebin, "deep-element-added", G_CALLBACK(watch_demuxer_index), w,
                                 (GClosureNotify)index_watch_unref, 0);
}

/* --- What the installed GStreamer does (asked once, at start-up) ------------------------------ */

static gboolean catch_orientation(GstPad *pad, GstObject *parent, GstEvent *event) {
    (void)parent;
    if (GST_EVENT_TYPE(event) == GST_EVENT_TAG) {
        GstTagList *tags = NULL;
        gchar *value = NULL;
        gst_event_parse_tag(event, &tags);
        if (tags != NULL && gst_tag_list_get_string(tags, GST_TAG_IMAGE_ORIENTATION, &value))
            g_object_set_data_full(G_OBJECT(pad), "orientation", value, g_free); /* frees the one before */
    }
    gst_event_unref(event);
    return TRUE;
}

static GstFlowReturn drop_buffer(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    (void)pad; (void)parent;
    gst_buffer_unref(buffer);
    return GST_FLOW_OK;
}

int gk_videoflip_passes_orientation(void) {
    GstElement *flip = gst_element_factory_make("videoflip", NULL);
    if (flip == NULL) return -1;
    gst_util_set_object_arg(G_OBJECT(flip), "video-direction", "auto");
    GstPad *sink = gst_element_get_static_pad(flip, "sink"), *src = gst_element_get_static_pad(flip, "src");
    GstPad *catcher = gst_pad_new("catcher", GST_PAD_SINK);
    gst_pad_set_event_function(catcher, catch_orientation);
    gst_pad_set_chain_function(catcher, drop_buffer);
    gst_pad_set_active(catcher, TRUE);
    int result = -1;
    if (gst_pad_link(src, catcher) == GST_PAD_LINK_OK && gst_element_set_state(flip, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE) {
        GstSegment segment;
        gst_segment_init(&segment, GST_FORMAT_TIME);
        GstCaps *caps = gst_caps_from_string("video/x-raw, format=(string)I420, width=(int)16, height=(int)16, framerate=(fraction)1/1");
        gst_pad_send_event(sink, gst_event_new_stream_start("graphkit-videoflip-probe"));
        gst_pad_send_event(sink, gst_event_new_caps(caps));
        gst_pad_send_event(sink, gst_event_new_segment(&segment));
        gst_pad_send_event(sink, gst_event_new_tag(gst_tag_list_new(GST_TAG_IMAGE_ORIENTATION, "rotate-90", NULL)));
        GstBuffer *frame = gst_buffer_new_allocate(NULL, 16 * 16 * 3 / 2, NULL);
        gst_buffer_memset(frame, 0, 0x80, 16 * 16 * 3 / 2);
        GST_BUFFER_PTS(frame) = 0;
        GST_BUFFER_DURATION(frame) = GST_SECOND;
        gst_pad_chain(sink, frame);
        const gchar *seen = g_object_get_data(G_OBJECT(catcher), "orientation");
        /* No tag at all is upright too: nothing downstream would turn the picture again. */
        result = g_strcmp0(seen, "rotate-90") == 0 ? 1 : 0;
        gst_caps_unref(caps);
    }
    gst_element_set_state(flip, GST_STATE_NULL);
    gst_pad_unlink(src, catcher);
    gst_object_unref(catcher);
    gst_object_unref(sink);
    gst_object_unref(src);
    gst_object_unref(flip);
    return result;
}

int gk_element_move_into(GstElement *holder, const char *property, GstElement *element) {
    gst_object_ref(element);
    GstObject *parent = gst_object_get_parent(GST_OBJECT(element));
    if (parent != NULL) {
        gst_bin_remove(GST_BIN(parent), element);
        gst_object_unref(parent);
    }
    g_object_set(holder, property, element, NULL);
    GstObject *now = gst_object_get_parent(GST_OBJECT(element));
    int ok = now == GST_OBJECT(holder);
    if (now) gst_object_unref(now);
    gst_object_unref(element);
    return ok;
}

/* --- Gapless marks from the demuxer, where GraphKit trims itself ------------------------------
 * GStreamer 1.24+'s qtdemux marks gapless AAC for trimming itself: a GstAudioClippingMeta on the
 * first and last buffers, which the decoder applies. GraphKit's decode trims an MP4's sound track
 * to the sample itself (gkaudiotrim, from the index it read, the same figures on every version);
 * with both, the priming would go twice. Decided by what the demuxer does, per buffer: where
 * GraphKit's trim is on (its timescale set) and a buffer into an audio decoder carries such a
 * mark, the mark is taken off, so the decoder gives every sample and gkaudiotrim alone cuts. On
 * GStreamer 1.22, whose qtdemux marks nothing, no buffer is touched; where GraphKit trims nothing
 * (no edit list, no gapless tag; Ogg Opus), GStreamer's marks are left to do their work. */

GstBuffer *gk_buffer_without_clipping(GstBuffer *buffer, GstElement *trim) {
    if (gst_buffer_get_audio_clipping_meta(buffer) == NULL)
        return buffer;
    gint timescale = 0;
    g_object_get(trim, "timescale", &timescale, NULL);
    if (timescale <= 0)
        return buffer;
    buffer = gst_buffer_make_writable(buffer);
    GstAudioClippingMeta *meta;
    while ((meta = gst_buffer_get_audio_clipping_meta(buffer)) != NULL)
        gst_buffer_remove_meta(buffer, (GstMeta *)meta);
    return buffer;
}

static GstPadProbeReturn drop_clipping(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    if (buffer == NULL || gst_buffer_get_audio_clipping_meta(buffer) == NULL)
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    info->data = gk_buffer_without_clipping(buffer, data);
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

static void watch_audio_decoders(GstBin *bin, GstBin *sub, GstElement *element, gpointer data) {
    (void)bin; (void)sub;
    GstElementFactory *factory = gst_element_get_factory(element);
    const gchar *klass = factory ? gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) : NULL;
    if (klass == NULL || strstr(klass, "Decoder") == NULL || strstr(klass, "Audio") == NULL)
        return;
    gk_callback_enter(element);
    GstPad *sink = gst_element_get_static_pad(element, "sink");
    if (sink != NULL) {
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, drop_clipping, gst_object_ref(data), gst_object_unref);
        gst_object_unref(sink);
    }
    gk_callback_leave(element);
}

gulong gk_decodebin_leave_trimming_to(GstElement *decodebin, GstElement *trim) {
    return g_signal_connect_data(decodebin, "deep-element-added", G_CALLBACK(watch_audio_decoders), gst_object_ref(trim),
                                 (GClosureNotify)(void (*)(void))gst_object_unref, 0);
}

/* --- Streams nobody takes are not decoded ------------------------------------------------------ */

typedef struct {
    int audio, video; /* whether decoded audio, video is wanted */
} DecodeOnly;

/* decodebin's autoplug-continue: TRUE plugs on (parser, decoder), FALSE exposes the pad as it is.
 * A stream of a kind nobody takes stops at its encoded caps; a container (caps a demuxer takes,
 * however named: video/quicktime, audio/x-wav) is always opened. */
static gboolean continue_plugging(GstElement *bin, GstPad *pad, GstCaps *caps, gpointer data) {
    (void)bin; (void)pad;
    const DecodeOnly *d = data;
    if (caps == NULL || gst_caps_is_empty(caps) || gst_caps_is_any(caps))
        return TRUE;
    const gchar *name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
    gboolean audio = g_str_has_prefix(name, "audio/"), video = g_str_has_prefix(name, "video/") || g_str_has_prefix(name, "image/");
    if ((!audio && !video) || (audio && d->audio) || (video && d->video))
        return TRUE;
    GList *demuxers = gst_element_factory_list_get_elements(GST_ELEMENT_FACTORY_TYPE_DEMUXER, GST_RANK_MARGINAL);
    GList *takers = gst_element_factory_list_filter(demuxers, caps, GST_PAD_SINK, FALSE);
    gboolean container = takers != NULL;
    gst_plugin_feature_list_free(takers);
    gst_plugin_feature_list_free(demuxers);
    return container;
}

gulong gk_decodebin_decode_only(GstElement *decodebin, int audio, int video) {
    DecodeOnly *d = g_new0(DecodeOnly, 1);
    d->audio = audio;
    d->video = video;
    return g_signal_connect_data(decodebin, "autoplug-continue", G_CALLBACK(continue_plugging), d,
                                 (GClosureNotify)(void (*)(void))g_free, 0);
}

/* --- x265enc's decode times on a stream shorter than its B-frame delay ----------------------- */

typedef struct {
    gboolean seen;    /* the stream's first buffer came */
    gint64 shift;     /* ns added to each DTS; 0 for a stream whose times are sound */
} DecodeTimeMend;

static GstPadProbeReturn mend_x265_decode_times(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    DecodeTimeMend *m = data;
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_FLUSH || info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP || GST_EVENT_TYPE(event) == GST_EVENT_STREAM_START) {
            m->seen = FALSE;
            m->shift = 0;
        }
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        GstClockTime pts = GST_BUFFER_PTS(b), dts = GST_BUFFER_DTS(b);
        if (!m->seen && GST_CLOCK_TIME_IS_VALID(pts) && GST_CLOCK_TIME_IS_VALID(dts)) {
            m->seen = TRUE;
            /* Compared as signed: x265's DTS may be negative, stored as a huge unsigned time. */
            gint64 lead = (gint64)(pts - dts);
            GstClockTime frame = GST_BUFFER_DURATION_IS_VALID(b) && GST_BUFFER_DURATION(b) > 0 ? GST_BUFFER_DURATION(b) : GST_SECOND / 25;
            /* x265's own lead is its B-frame delay: two frames at most (with a B-pyramid). */
            gint64 most = MAX((gint64)(16 * frame), (gint64)GST_SECOND);
            if (lead < 0 || lead > most)
                m->shift = (gint64)(pts - 2 * frame - dts);
        }
        if (m->shift != 0 && GST_CLOCK_TIME_IS_VALID(dts)) {
            b = gst_buffer_make_writable(b);
            GST_BUFFER_DTS(b) = (GstClockTime)((guint64)dts + (guint64)m->shift);
            GST_PAD_PROBE_INFO_DATA(info) = b;
        }
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_mend_x265_decode_times(GstPad *pad) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
                             mend_x265_decode_times, g_new0(DecodeTimeMend, 1), g_free);
}
