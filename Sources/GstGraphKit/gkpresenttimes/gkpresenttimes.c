/*
 * gkpresenttimes: makes each buffer's time stamp the time it is presented, and keeps the stream
 * in time order.
 *
 * A demuxer that applies an edit list (qtdemux: the first B-frame stream's edit skips the
 * frames' composition offset) or starts its timeline elsewhere (tsdemux) leaves the time stamps
 * in the media's time and says where the presentation starts in the segment: start (media time)
 * against time (presentation time). Every later element works in running time, so files come
 * out right; code reading a buffer's PTS would see a time that many frames late. This moves the
 * stamps and the segment together by (start - time): running time and stream time stay, and a
 * PTS is its presentation time, as AVAssetReader gives it. That is GStreamer's convention on
 * every version (1.22 to 1.26), not a fault: GraphKit's decode needs it on all of them.
 *
 * It also keeps the stream in time order, which joined or damaged media breaks (two transport
 * streams cat'ed together overlap by a few frames and 0.1 s of sound): a frame at or before the
 * last one's time is left out, and sound that starts more than 20 ms before the last buffer's
 * end loses the overlapping samples, as GStreamer's audiorate drops them. Gaps are left as they
 * are. What was left out is counted in one warning at the end of the stream.
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! videoconvert ! gkpresenttimes ! fakesink silent=false -v
 */
#include <gst/gst.h>
#include "../common/passthrough.h"
#include <gst/audio/audio.h>

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    /* On the streaming thread only. */
    gint64 shift;     /* ns to take from each time stamp; 0 until a segment says otherwise */
    gboolean audio;   /* from the caps: audio is cut to the sample, video dropped by frame */
    gint rate, bpf;   /* the audio's */
    gint64 last;      /* video: the last frame's PTS; audio: the last buffer's end; -1: none yet */
    guint64 dropped;  /* frames or samples left out */
} GkPresentTimes;

typedef struct {
    GstElementClass parent_class;
} GkPresentTimesClass;

GType gk_present_times_get_type(void);
G_DEFINE_TYPE(GkPresentTimes, gk_present_times, GST_TYPE_ELEMENT)

#define AUDIO_TOLERANCE (20 * GST_MSECOND)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* Moves one buffer's stamps and keeps the stream in order; FALSE (and the buffer released) when
 * it is left out. */
static gboolean present(GkPresentTimes *p, GstBuffer **buffer) {
    GstBuffer *b = *buffer;
    gint64 shift = p->shift;
    if (GST_BUFFER_PTS_IS_VALID(b) && (gint64)GST_BUFFER_PTS(b) < shift) {
        gk_buffer_drop(b); /* before the presentation: the segment clips it */
        return FALSE;
    }
    if (!GST_BUFFER_PTS_IS_VALID(b)) {
        if (shift == 0) return TRUE;
    } else {
        gint64 pts = (gint64)GST_BUFFER_PTS(b) - shift;
        if (!p->audio) {
            if (p->last >= 0 && pts <= p->last) {
                p->dropped++;
                gk_buffer_drop(b);
                return FALSE;
            }
            p->last = pts;
        } else if (p->rate > 0 && p->bpf > 0) {
            gint64 count = (gint64)(gst_buffer_get_size(b) / (gsize)p->bpf);
            gint64 cut = 0;
            /* Stamps read from a container jitter (Matroska's are to the millisecond): an overlap
             * under the tolerance is left for the encoder's own (40 ms), as audiorate leaves it. */
            if (p->last >= 0 && pts < p->last - AUDIO_TOLERANCE)
                cut = (gint64)gst_util_uint64_scale_round((guint64)(p->last - pts), (guint64)p->rate, GST_SECOND);
            if (cut >= count) {
                p->dropped += (guint64)count;
                gk_buffer_drop(b);
                return FALSE;
            }
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
        if (shift == 0) {
            *buffer = b;
            return TRUE;
        }
    }
    b = gst_buffer_make_writable(b);
    if (GST_BUFFER_PTS_IS_VALID(b))
        GST_BUFFER_PTS(b) = (GstClockTime)((gint64)GST_BUFFER_PTS(b) - shift);
    if (GST_BUFFER_DTS_IS_VALID(b))
        GST_BUFFER_DTS(b) = (gint64)GST_BUFFER_DTS(b) < shift ? GST_CLOCK_TIME_NONE : (GstClockTime)((gint64)GST_BUFFER_DTS(b) - shift);
    *buffer = b;
    return TRUE;
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkPresentTimes *self = (GkPresentTimes *)parent;
    (void)pad;
    if (!present(self, &buffer)) return GST_FLOW_OK;
    return gk_pad_push(self->srcpad, buffer);
}

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkPresentTimes *p = (GkPresentTimes *)parent;
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
        GstCaps *caps = NULL;
        GstAudioInfo audio;
        gst_event_parse_caps(event, &caps);
        p->audio = caps != NULL && gst_audio_info_from_caps(&audio, caps);
        if (p->audio) {
            p->rate = GST_AUDIO_INFO_RATE(&audio);
            p->bpf = GST_AUDIO_INFO_BPF(&audio);
        }
        break;
    }
    case GST_EVENT_FLUSH_STOP:
        p->last = -1;
        break;
    case GST_EVENT_EOS:
        if (p->dropped > 0) {
            GST_ELEMENT_WARNING(p, STREAM, FAILED,
                ("%" G_GUINT64_FORMAT " %s out of time order left out (joined or damaged media?)", p->dropped,
                 p->audio ? "audio samples" : "video frames"), (NULL));
            p->dropped = 0;
        }
        break;
    case GST_EVENT_SEGMENT: {
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
                moved.position = (gint64)segment->position < shift ? moved.start : (GstClockTime)((gint64)segment->position - shift);
            GstEvent *replacement = gst_event_new_segment(&moved);
            gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
            gst_event_unref(event);
            event = replacement;
        }
        break;
    }
    default:
        break;
    }
    return gst_pad_event_default(pad, parent, event);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    GkPresentTimes *p = (GkPresentTimes *)element;
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
        p->shift = 0;
        p->last = -1;
        p->dropped = 0;
        p->audio = FALSE;
    }
    return GST_ELEMENT_CLASS(gk_present_times_parent_class)->change_state(element, transition);
}

static void gk_present_times_class_init(GkPresentTimesClass *klass) {
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit presentation times", "Filter",
        "Stamps each buffer with the time it is presented (a segment's media offset, as an edit list's, taken out of "
        "stamps and segment alike) and keeps the stream in time order", "GraphKit");
    element->change_state = change_state;
}

static void gk_present_times_init(GkPresentTimes *self) {
    self->last = -1;
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkpresenttimes, "gkpresenttimes", GST_RANK_NONE, gk_present_times_get_type())
