#include <string.h>
#include <gst/audio/audio.h>
#include "CGraphKitGlue.h"

/* Stream timing: an audio encoder's measured delay, and what a writer's pad sees go by.
 * Declarations and contracts in CGraphKitGlue.h. */

#define ENCODER_DELAY_EVENT "graphkit-encoder-delay"

/* Shared by the encoder's two probes (each holds a reference). Touched on the encoder's
 * streaming threads: input on the upstream thread, output and EOS on the one the encoder
 * pushes from, which for GstAudioEncoder is the upstream thread too; atomics all the same. */
typedef struct {
    gint64 samples_in;
    gint bpf;
    gint rate;
    gint64 first_pts;   /* -1 until the first output buffer */
    gint64 end_pts;     /* end of the last output buffer */
} DelayCounter;

static void delay_counter_reset(DelayCounter *c) {
    __atomic_store_n(&c->samples_in, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&c->first_pts, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&c->end_pts, -1, __ATOMIC_RELAXED);
}

static void delay_counter_release(gpointer data) { g_atomic_rc_box_release(data); }

static GstPadProbeReturn encoder_input(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    DelayCounter *c = data;
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        gint bpf = __atomic_load_n(&c->bpf, __ATOMIC_RELAXED);
        if (b != NULL && bpf > 0)
            __atomic_fetch_add(&c->samples_in, (gint64)(gst_buffer_get_size(b) / (gsize)bpf), __ATOMIC_RELAXED);
    } else if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
            GstCaps *caps = NULL;
            GstAudioInfo audio;
            gst_event_parse_caps(event, &caps);
            if (caps != NULL && gst_audio_info_from_caps(&audio, caps)) {
                __atomic_store_n(&c->bpf, GST_AUDIO_INFO_BPF(&audio), __ATOMIC_RELAXED);
                __atomic_store_n(&c->rate, GST_AUDIO_INFO_RATE(&audio), __ATOMIC_RELAXED);
            }
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
            delay_counter_reset(c);
        }
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn encoder_output(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    DelayCounter *c = data;
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        if (b != NULL && GST_BUFFER_PTS_IS_VALID(b) && GST_BUFFER_DURATION_IS_VALID(b)) {
            gint64 unset = -1;
            __atomic_compare_exchange_n(&c->first_pts, &unset, (gint64)GST_BUFFER_PTS(b), FALSE,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED);
            __atomic_store_n(&c->end_pts, (gint64)(GST_BUFFER_PTS(b) + GST_BUFFER_DURATION(b)), __ATOMIC_RELAXED);
        }
    } else if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
            /* GstAudioEncoder passes its input's segment on as it came, but its output runs
             * later than its input by the priming: a segment that ends where the input ends (a
             * demuxer's: qtdemux, oggdemux) would have the muxer drop the frames that start
             * past that end, and with them the input's last samples (132,300 samples of ALAC
             * came out 132,096). The output's end is the end of its stream. */
            const GstSegment *segment = NULL;
            gst_event_parse_segment(event, &segment);
            if (segment->format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(segment->stop) && segment->rate > 0) {
                GstSegment open;
                gst_segment_copy_into(segment, &open);
                open.stop = GST_CLOCK_TIME_NONE;
                GstEvent *replacement = gst_event_new_segment(&open);
                gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
                gst_event_unref(event);
                info->data = replacement;
            }
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
            gint64 first = __atomic_load_n(&c->first_pts, __ATOMIC_RELAXED);
            gint64 end = __atomic_load_n(&c->end_pts, __ATOMIC_RELAXED);
            gint64 in = __atomic_load_n(&c->samples_in, __ATOMIC_RELAXED);
            gint rate = __atomic_load_n(&c->rate, __ATOMIC_RELAXED);
            if (first >= 0 && end > first && in > 0 && rate > 0) {
                /* GstAudioEncoder stamps output from sample counts, so the span converts back
                 * exactly (to the nearest sample). */
                gint64 out = (gint64)gst_util_uint64_scale_round((guint64)(end - first), (guint64)rate, GST_SECOND);
                if (out >= in) {
                    GstStructure *s = gst_structure_new(ENCODER_DELAY_EVENT, "priming", G_TYPE_INT64, out - in,
                                                        "samples", G_TYPE_INT64, in, "rate", G_TYPE_INT, rate, NULL);
                    /* Pushed from the EOS's own probe, so it arrives just before the EOS; this
                     * probe sees it go by and lets it pass. */
                    gst_pad_push_event(pad, gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, s));
                }
            }
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
            delay_counter_reset(c);
        }
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

int gk_encoder_measure_delay(GstElement *encoder, gulong ids[2]) {
    GstPad *sink = gst_element_get_static_pad(encoder, "sink");
    GstPad *src = gst_element_get_static_pad(encoder, "src");
    int ok = sink != NULL && src != NULL;
    if (ok) {
        DelayCounter *c = g_atomic_rc_box_new0(DelayCounter);
        delay_counter_reset(c);
        GstPadProbeType events = GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_EVENT_FLUSH;
        ids[0] = gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | events, encoder_input, c, delay_counter_release);
        ids[1] = gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER | events, encoder_output,
                                   g_atomic_rc_box_acquire(c), delay_counter_release);
    }
    if (sink) gst_object_unref(sink);
    if (src) gst_object_unref(src);
    return ok;
}

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

static GstPadProbeReturn mark_upright(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event == NULL || GST_EVENT_TYPE(event) != GST_EVENT_TAG)
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    GstTagList *tags = NULL;
    gst_event_parse_tag(event, &tags);
    if (tags != NULL && gst_tag_list_get_tag_size(tags, GST_TAG_IMAGE_ORIENTATION) > 0) {
        GstTagList *upright = gst_tag_list_copy(tags);
        gst_tag_list_add(upright, GST_TAG_MERGE_REPLACE, GST_TAG_IMAGE_ORIENTATION, "rotate-0", NULL);
        GstEvent *replacement = gst_event_new_tag(upright);
        gst_event_unref(event);
        info->data = replacement;
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_mark_upright(GstPad *pad) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, mark_upright, NULL, NULL);
}

/* Posts `text` as a warning, or an error (stream format), from the element `pad` belongs to. */
static void post_from_pad_parent(GstPad *pad, gboolean error, const gchar *text) {
    GstObject *parent = gst_pad_get_parent(pad);
    if (parent != NULL && GST_IS_ELEMENT(parent)) {
        if (error)
            gk_element_post_error(GST_ELEMENT(parent), 3, GST_STREAM_ERROR_FORMAT, text, NULL);
        else
            gk_element_post_warning(GST_ELEMENT(parent), text, NULL);
    }
    if (parent != NULL) gst_object_unref(parent);
}

/* --- Presentation times ----------------------------------------------------------------------
 * A demuxer that applies an edit list (qtdemux: the first B-frame stream's edit skips the
 * frames' composition offset) or starts its timeline elsewhere (tsdemux) leaves the time stamps
 * in the media's time and says where the presentation starts in the segment: start (media time)
 * against time (presentation time). Every later element works in running time, so files come
 * out right; code reading a buffer's PTS would see a time that many frames late. The probe moves
 * the stamps and the segment together by (start - time): running time and stream time stay, and
 * a PTS is its presentation time, as AVAssetReader gives it.
 *
 * It also keeps each stream in time order, which joined or damaged media breaks (two transport
 * streams cat'ed together overlap by a few frames and 0.1 s of sound): a frame at or before the
 * last one's time is left out, and sound that starts more than 20 ms before the last buffer's
 * end loses the overlapping samples, as GStreamer's audiorate drops them. Gaps are left as they
 * are. */

typedef struct {
    gint64 shift;    /* ns to take from each time stamp; 0 until a segment says otherwise */
    gboolean audio;  /* from the caps: audio is cut to the sample, video dropped by frame */
    gint rate, bpf;  /* the audio's */
    gint64 last;     /* video: the last frame's PTS; audio: the last buffer's end; -1: none yet */
    guint64 dropped; /* frames or samples left out, for one warning */
} PresentTimes;

#define PRESENT_AUDIO_TOLERANCE (20 * GST_MSECOND)

static void present_times_free(gpointer data) { g_free(data); }

/* Moves one buffer's stamps and keeps the stream in order; FALSE when it is left out. */
static gboolean present_buffer(PresentTimes *p, GstBuffer **buffer) {
    GstBuffer *b = *buffer;
    gint64 shift = p->shift;
    if (GST_BUFFER_PTS_IS_VALID(b) && (gint64)GST_BUFFER_PTS(b) < shift)
        return FALSE; /* before the presentation: the segment clips it */
    if (!GST_BUFFER_PTS_IS_VALID(b)) {
        if (shift == 0) return TRUE;
    } else {
        gint64 pts = (gint64)GST_BUFFER_PTS(b) - shift;
        if (!p->audio) {
            if (p->last >= 0 && pts <= p->last) { p->dropped++; return FALSE; }
            p->last = pts;
        } else if (p->rate > 0 && p->bpf > 0) {
            gint64 count = (gint64)(gst_buffer_get_size(b) / (gsize)p->bpf);
            gint64 cut = 0;
            /* Stamps read from a container jitter (Matroska's are to the millisecond): an
             * overlap under the tolerance is left for the encoder's own (40 ms), as audiorate
             * leaves it. */
            if (p->last >= 0 && pts < p->last - PRESENT_AUDIO_TOLERANCE)
                cut = (gint64)gst_util_uint64_scale_round((guint64)(p->last - pts), (guint64)p->rate, GST_SECOND);
            if (cut >= count) { p->dropped += (guint64)count; return FALSE; }
            if (cut > 0) {
                p->dropped += (guint64)cut;
                b = gst_buffer_make_writable(gst_audio_buffer_truncate(b, p->bpf, (gsize)cut, (gsize)(count - cut)));
                GST_BUFFER_PTS(b) = (GstClockTime)(p->last + shift);
                GST_BUFFER_DURATION(b) = gst_util_uint64_scale_round((guint64)(count - cut), GST_SECOND, (guint64)p->rate);
                GST_BUFFER_DTS(b) = GST_CLOCK_TIME_NONE;
                pts = p->last;
                count -= cut;
            }
            p->last = pts + (gint64)gst_util_uint64_scale_round((guint64)count, GST_SECOND, (guint64)p->rate);
        }
        if (shift == 0) { *buffer = b; return TRUE; }
    }
    b = gst_buffer_make_writable(b);
    if (GST_BUFFER_PTS_IS_VALID(b))
        GST_BUFFER_PTS(b) = (GstClockTime)((gint64)GST_BUFFER_PTS(b) - shift);
    if (GST_BUFFER_DTS_IS_VALID(b))
        GST_BUFFER_DTS(b) = (gint64)GST_BUFFER_DTS(b) < shift ? GST_CLOCK_TIME_NONE
                                                            : (GstClockTime)((gint64)GST_BUFFER_DTS(b) - shift);
    *buffer = b;
    return TRUE;
}

static gboolean present_list_item(GstBuffer **buffer, guint idx, gpointer data) {
    (void)idx;
    if (!present_buffer(data, buffer)) {
        gst_buffer_unref(*buffer);
        *buffer = NULL; /* removed from the list */
    }
    return TRUE;
}

static GstPadProbeReturn present_times(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    PresentTimes *p = data;
    GstPadProbeReturn r = GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
            GstCaps *caps = NULL;
            GstAudioInfo audio;
            gst_event_parse_caps(event, &caps);
            p->audio = caps != NULL && gst_audio_info_from_caps(&audio, caps);
            if (p->audio) {
                p->rate = GST_AUDIO_INFO_RATE(&audio);
                p->bpf = GST_AUDIO_INFO_BPF(&audio);
            }
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
            p->last = -1;
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_EOS && p->dropped > 0) {
            gchar *text = g_strdup_printf("%" G_GUINT64_FORMAT " %s out of time order left out (joined or damaged media?)",
                                          p->dropped, p->audio ? "audio samples" : "video frames");
            post_from_pad_parent(pad, FALSE, text);
            g_free(text);
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
            const GstSegment *segment = NULL;
            gst_event_parse_segment(event, &segment);
            gint64 shift = 0;
            if (segment->format == GST_FORMAT_TIME && segment->rate > 0 && segment->applied_rate == 1.0 &&
                GST_CLOCK_TIME_IS_VALID(segment->time) && segment->start != segment->time)
                shift = (gint64)segment->start - (gint64)segment->time;
            p->shift = shift;
            p->last = -1;
            if (shift != 0) {
                GstSegment moved;
                gst_segment_copy_into(segment, &moved);
                moved.start = segment->time;
                if (GST_CLOCK_TIME_IS_VALID(segment->stop))
                    moved.stop = (gint64)segment->stop < shift ? 0 : (GstClockTime)((gint64)segment->stop - shift);
                if (GST_CLOCK_TIME_IS_VALID(segment->position))
                    moved.position = (gint64)segment->position < shift ? moved.start
                                                                      : (GstClockTime)((gint64)segment->position - shift);
                GstEvent *replacement = gst_event_new_segment(&moved);
                gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
                gst_event_unref(event);
                info->data = replacement;
            }
        }
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        if (!present_buffer(p, &b))
            r = GST_PAD_PROBE_DROP;
        else
            info->data = b;
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = gst_buffer_list_make_writable(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
        gst_buffer_list_foreach(list, present_list_item, p);
        info->data = list;
    }
    gk_callback_leave(pad);
    return r;
}

gulong gk_pad_present_times(GstPad *pad) {
    PresentTimes *p = g_new0(PresentTimes, 1);
    p->last = -1;
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                             present_times, p, present_times_free);
}

/* --- Time order into a writer --------------------------------------------------------------
 * An MP4's index cannot hold samples whose decode times go back or repeat (a player stops or
 * skips there), and GStreamer 1.22's muxer writes them anyway. The probe on each input of a
 * writer fails the run at the first such buffer, saying where. */

typedef struct {
    gchar *input;       /* the writer's input, for the message */
    GstSegment segment; /* the input's, for running time */
    gint64 last;        /* running time of the last buffer's decode time; -1 before the first */
} RisingTimes;

static void rising_times_free(gpointer data) {
    RisingTimes *r = data;
    g_free(r->input);
    g_free(r);
}

static GstPadProbeReturn require_rising(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    RisingTimes *r = data;
    GstPadProbeReturn result = GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
            const GstSegment *segment = NULL;
            gst_event_parse_segment(event, &segment);
            gst_segment_copy_into(segment, &r->segment);
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
            r->last = -1;
        }
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        GstClockTime t = GST_BUFFER_DTS_IS_VALID(b) ? GST_BUFFER_DTS(b) : GST_BUFFER_PTS(b);
        if (GST_CLOCK_TIME_IS_VALID(t) && r->segment.format == GST_FORMAT_TIME) {
            /* Decode times before the segment start (B-frames' first) count below 0. */
            guint64 magnitude = 0;
            int sign = gst_segment_to_running_time_full(&r->segment, GST_FORMAT_TIME, t, &magnitude);
            if (sign != 0) {
                gint64 now = sign > 0 ? (gint64)magnitude : -(gint64)magnitude;
                if (r->last != -1 && now <= r->last) {
                    gchar *text = g_strdup_printf(
                        "the %s input's time stamps go %s at %.3f s (after %.3f s): the file could not be played there. "
                        "Its source is out of time order (joined or damaged media?)",
                        r->input, now == r->last ? "no further" : "back", (double)now / GST_SECOND, (double)r->last / GST_SECOND);
                    post_from_pad_parent(pad, TRUE, text);
                    g_free(text);
                    gst_buffer_unref(b);
                    GST_PAD_PROBE_INFO_DATA(info) = NULL;
                    GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_ERROR;
                    result = GST_PAD_PROBE_HANDLED;
                } else {
                    r->last = now;
                }
            }
        }
    }
    gk_callback_leave(pad);
    return result;
}

gulong gk_pad_require_rising_times(GstPad *pad, const char *input) {
    RisingTimes *r = g_new0(RisingTimes, 1);
    r->input = g_strdup(input);
    r->last = -1;
    gst_segment_init(&r->segment, GST_FORMAT_UNDEFINED);
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, require_rising, r,
                             rising_times_free);
}

/* --- MP3 encoder delay from ffmpeg's Info tag ----------------------------------------------
 * GStreamer 1.22's mpegaudioparse reads the encoder delay and padding from a LAME tag only when
 * its encoder string starts "LAME"; ffmpeg's (libmp3lame through libavcodec) says "Lavc" in the
 * same layout, so its MP3s decode with the delay and padding left in. ffmpeg's MP3 writer puts
 * the stream's encoder name there ("Lavc60.31", say), "Lavf lame" for a bitexact libmp3lame and
 * "Lavf" when it has none: a file remuxed with -c:a copy (cover art added, tags edited). The
 * first frame's tag is relabelled on its way into the parser, which then trims them as it does
 * for LAME's. */

/* Where the LAME tag starts in a first frame that holds a Xing/Info header, or -1. */
static gssize lame_tag_offset(const guint8 *data, gsize size) {
    if (size < 4 || data[0] != 0xFF || (data[1] & 0xE0) != 0xE0)
        return -1;
    int mpeg1 = (data[1] & 0x18) == 0x18, mono = (data[3] & 0xC0) == 0xC0;
    gsize side = mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17);
    gsize at = 4 + side;
    if (size < at + 8 || (memcmp(data + at, "Xing", 4) != 0 && memcmp(data + at, "Info", 4) != 0))
        return -1;
    guint32 flags = GST_READ_UINT32_BE(data + at + 4);
    at += 8;
    if (flags & 1) at += 4;   /* frames */
    if (flags & 2) at += 4;   /* bytes */
    if (flags & 4) at += 100; /* seek table */
    if (flags & 8) at += 4;   /* quality */
    return size >= at + 36 ? (gssize)at : -1;
}

static GstPadProbeReturn relabel_lavc(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    gint *done = data;
    if (!(info->type & GST_PAD_PROBE_TYPE_BUFFER) || __atomic_load_n(done, __ATOMIC_RELAXED))
        return GST_PAD_PROBE_OK;
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    if (buffer == NULL)
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    GstMapInfo map;
    gssize at = -1;
    if (gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        at = lame_tag_offset(map.data, map.size);
        if (at >= 0 && memcmp(map.data + at, "Lavc", 4) != 0 && memcmp(map.data + at, "Lavf", 4) != 0)
            at = -1;
        gst_buffer_unmap(buffer, &map);
    }
    /* Only the stream's first frame can hold the tag: looked for in the first buffer that is
     * long enough to hold it, or holds it. */
    if (at >= 0 || gst_buffer_get_size(buffer) >= 4 + 32 + 8 + 112 + 36)
        __atomic_store_n(done, 1, __ATOMIC_RELAXED);
    if (at >= 0) {
        buffer = gst_buffer_make_writable(buffer);
        gst_buffer_fill(buffer, (gsize)at, "LAME", 4);
        info->data = buffer;
    }
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

void gk_quiet_known_criticals(void) {
    g_log_set_handler("GStreamer-Audio", G_LOG_LEVEL_CRITICAL | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION,
                      quiet_whole_frame_clip, NULL);
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

struct GkAudioTrim {
    gint64 start, end; /* in `timescale` units; end < 0: to the end */
    gint timescale;
    gint active;
    gint bpf, rate;    /* of the stream through the probe */
    gint64 stop_ns;    /* its segment's end, -1 if open */
};

GkAudioTrim *gk_audio_trim_new(void) {
    GkAudioTrim *trim = g_atomic_rc_box_new0(GkAudioTrim);
    trim->stop_ns = -1;
    return trim;
}
void gk_audio_trim_unref(GkAudioTrim *trim) { g_atomic_rc_box_release(trim); }

void gk_audio_trim_set(GkAudioTrim *trim, gint64 start, gint64 end, gint timescale) {
    __atomic_store_n(&trim->start, start, __ATOMIC_RELAXED);
    __atomic_store_n(&trim->end, end, __ATOMIC_RELAXED);
    __atomic_store_n(&trim->timescale, timescale, __ATOMIC_RELAXED);
    __atomic_store_n(&trim->active, timescale > 0, __ATOMIC_RELEASE);
}

static GstPadProbeReturn trim_audio(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GkAudioTrim *t = data;
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        GstCaps *caps = NULL;
        GstAudioInfo audio;
        if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
            gst_event_parse_caps(event, &caps);
            if (caps != NULL && gst_audio_info_from_caps(&audio, caps)) {
                __atomic_store_n(&t->bpf, GST_AUDIO_INFO_BPF(&audio), __ATOMIC_RELAXED);
                __atomic_store_n(&t->rate, GST_AUDIO_INFO_RATE(&audio), __ATOMIC_RELAXED);
            }
        } else if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
            const GstSegment *segment = NULL;
            gst_event_parse_segment(event, &segment);
            gboolean plain = segment->format == GST_FORMAT_TIME && segment->start == 0 && segment->time == 0 &&
                             GST_CLOCK_TIME_IS_VALID(segment->stop);
            __atomic_store_n(&t->stop_ns, plain ? (gint64)segment->stop : -1, __ATOMIC_RELAXED);
        }
        return GST_PAD_PROBE_OK;
    }
    GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
    gint bpf = __atomic_load_n(&t->bpf, __ATOMIC_RELAXED), rate = __atomic_load_n(&t->rate, __ATOMIC_RELAXED);
    gint64 stop_ns = __atomic_load_n(&t->stop_ns, __ATOMIC_RELAXED);
    gboolean active = __atomic_load_n(&t->active, __ATOMIC_ACQUIRE);
    if (buffer == NULL || (!active && stop_ns < 0) || bpf <= 0 || rate <= 0 || !GST_BUFFER_PTS_IS_VALID(buffer))
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    gint scale = active ? t->timescale : 1;
    /* Positions in samples at the stream's rate, from its time stamps (to the nearest sample).
     * The segment's end, in nanoseconds cut down from an exact sample count, ends the stream at
     * the nearest sample too: decoders clip at the sample after it (a Vorbis file's last
     * granule gave one sample more than it holds). */
    gint64 start = active ? (gint64)gst_util_uint64_scale_round((guint64)t->start, (guint64)rate, (guint64)scale) : 0;
    gint64 end = !active || t->end < 0 ? G_MAXINT64 : (gint64)gst_util_uint64_scale_round((guint64)t->end, (guint64)rate, (guint64)scale);
    if (stop_ns >= 0)
        end = MIN(end, (gint64)gst_util_uint64_scale_round((guint64)stop_ns, (guint64)rate, GST_SECOND));
    gint64 first = (gint64)gst_util_uint64_scale_round(GST_BUFFER_PTS(buffer), (guint64)rate, GST_SECOND);
    gint64 count = (gint64)(gst_buffer_get_size(buffer) / (gsize)bpf);
    gint64 from = MAX(first, start), to = MIN(first + count, end);
    GstPadProbeReturn r = GST_PAD_PROBE_OK;
    if (to <= from) {
        r = GST_PAD_PROBE_DROP;
    } else {
        /* Planar layouts (a decoder's GstAudioMeta) are cut plane by plane. */
        GstBuffer *kept = (from != first || to != first + count)
            ? gst_audio_buffer_truncate(buffer, bpf, (gsize)(from - first), (gsize)(to - from))
            : gst_buffer_make_writable(buffer);
        kept = gst_buffer_make_writable(kept);
        /* The kept samples' times start from the first kept one, as the file's timeline does. */
        GST_BUFFER_PTS(kept) = gst_util_uint64_scale_round((guint64)(from - start), GST_SECOND, (guint64)rate);
        GST_BUFFER_DURATION(kept) = gst_util_uint64_scale_round((guint64)(to - start), GST_SECOND, (guint64)rate) - GST_BUFFER_PTS(kept);
        GST_BUFFER_DTS(kept) = GST_CLOCK_TIME_NONE;
        info->data = kept;
    }
    gk_callback_leave(pad);
    return r;
}

gulong gk_pad_trim_audio(GstPad *pad, GkAudioTrim *trim) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, trim_audio,
                             g_atomic_rc_box_acquire(trim), (GDestroyNotify)gk_audio_trim_unref);
}

/* --- A stream's orientation, as its file says -------------------------------------------- */

struct GkOrientation {
    gchar *value; /* an image-orientation tag value, or NULL until set */
    GMutex lock;
};

GkOrientation *gk_orientation_new(void) {
    GkOrientation *o = g_atomic_rc_box_new0(GkOrientation);
    g_mutex_init(&o->lock);
    return o;
}

static void orientation_free(gpointer data) {
    GkOrientation *o = data;
    g_free(o->value);
    g_mutex_clear(&o->lock);
}
void gk_orientation_unref(GkOrientation *o) { g_atomic_rc_box_release_full(o, orientation_free); }

void gk_orientation_set(GkOrientation *o, const char *value) {
    g_mutex_lock(&o->lock);
    g_free(o->value);
    o->value = g_strdup(value);
    g_mutex_unlock(&o->lock);
}

static GstPadProbeReturn state_orientation(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GkOrientation *o = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    if (event == NULL || GST_EVENT_TYPE(event) != GST_EVENT_TAG)
        return GST_PAD_PROBE_OK;
    g_mutex_lock(&o->lock);
    gchar *value = g_strdup(o->value);
    g_mutex_unlock(&o->lock);
    if (value == NULL)
        return GST_PAD_PROBE_OK;
    gk_callback_enter(pad);
    GstTagList *tags = NULL;
    gst_event_parse_tag(event, &tags);
    gchar *current = NULL;
    if (tags != NULL && gst_tag_list_get_tag_size(tags, GST_TAG_IMAGE_ORIENTATION) > 0)
        gst_tag_list_get_string(tags, GST_TAG_IMAGE_ORIENTATION, &current);
    if (tags != NULL && g_strcmp0(current, value) != 0) {
        GstTagList *stated = gst_tag_list_copy(tags);
        gst_tag_list_add(stated, GST_TAG_MERGE_REPLACE, GST_TAG_IMAGE_ORIENTATION, value, NULL);
        gst_event_unref(event);
        info->data = gst_event_new_tag(stated);
    }
    g_free(current);
    g_free(value);
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_state_orientation(GstPad *pad, GkOrientation *orientation) {
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, state_orientation,
                             g_atomic_rc_box_acquire(orientation), (GDestroyNotify)gk_orientation_unref);
}
