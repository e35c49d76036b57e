/*
 * gkaudiotrim: keeps the samples of a decoded audio stream from `start` to `end`, by position in
 * the stream's own timeline, exactly to the sample, and stamps the first kept sample 0.
 *
 * What for: an MP4's edit list or iTunes' gapless tag (iTunSMPB) says which samples of an AAC
 * track are the encoded input (the encoder's priming and padding are not). GStreamer's demuxer
 * applies an edit list by time, and its decoders clip by time: measured on a 132,300-sample M4A
 * from ffmpeg, GStreamer 1.22 gives 132,097 samples (the last frame lost, the priming's last
 * sample kept), 1.26.2 gives 132,301 (the priming's last sample kept); neither reads iTunSMPB.
 * GraphKit's decode reads the index itself (its MP4 reader), lets the demuxer give every sample
 * and keeps the right ones here: the same samples on every GStreamer version. Needed on each
 * version measured (1.22 and 1.26).
 *
 * Positions are counted at the stream's rate from each buffer's time stamp (to the nearest
 * sample); `start` and `end` are in `timescale` units (the track's own clock, so that an edit's
 * numbers go in as the file writes them). With `timescale` 0 nothing is trimmed. Whatever the
 * properties, a segment that starts at 0 and ends (a demuxer's stop, the stream's length in
 * nanoseconds cut down from an exact sample count) ends the stream at the nearest sample:
 * decoders clip at the sample after it (a Vorbis file's last granule gave one sample more than
 * it holds). The properties may change while it plays (before the first sample, say).
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=in.m4a ! qtdemux ! avdec_aac !
 *     gkaudiotrim start=1024 end=133324 timescale=44100 ! audioconvert ! wavenc ! filesink location=out.wav
 */
#include <gst/gst.h>
#include "../common/passthrough.h"
#include <gst/audio/audio.h>

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    /* Properties, under the object lock. */
    gint64 start, end;
    gint timescale;
    /* The stream's, on the streaming thread only. */
    GstAudioInfo info;
    gboolean have_info;
    gint64 stop_ns; /* a plain segment's end, -1 if open */
    gboolean refused; /* downstream refused the stream's format, and it was said */
} GkAudioTrim;

typedef struct {
    GstElementClass parent_class;
} GkAudioTrimClass;

GType gk_audio_trim_get_type(void);
G_DEFINE_TYPE(GkAudioTrim, gk_audio_trim, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_START, PROP_END, PROP_TIMESCALE };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("audio/x-raw"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("audio/x-raw"));

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkAudioTrim *self = (GkAudioTrim *)parent;
    if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
        GstCaps *caps = NULL;
        gst_event_parse_caps(event, &caps);
        self->have_info = caps != NULL && gst_audio_info_from_caps(&self->info, caps);
    } else if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
        const GstSegment *segment = NULL;
        gst_event_parse_segment(event, &segment);
        gboolean plain = segment->format == GST_FORMAT_TIME && segment->start == 0 && segment->time == 0 &&
                         GST_CLOCK_TIME_IS_VALID(segment->stop);
        self->stop_ns = plain ? (gint64)segment->stop : -1;
    }
    return gst_pad_event_default(pad, parent, event);
}

/* Pushes downstream, and posts a refusal of the stream's format there (not-negotiated) as the
 * error it is: on its way up it may be lost. typefind pushes the data it typefound with and
 * drops the result, so a WAV read whole in one block (8 KB of 1 kHz sound, which no node after
 * it takes) ended as if empty: "nothing to write". */
static GstFlowReturn push(GkAudioTrim *self, GstBuffer *buffer) {
    GstFlowReturn ret = gk_pad_push(self->srcpad, buffer);
    if (ret == GST_FLOW_NOT_NEGOTIATED && !self->refused) {
        self->refused = TRUE;
        GST_ELEMENT_FLOW_ERROR(self, ret);
    }
    return ret;
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkAudioTrim *self = (GkAudioTrim *)parent;
    (void)pad;
    GK_OBJECT_LOCK(self);
    gint64 start_at = self->start, end_at = self->end;
    gint scale = self->timescale;
    GK_OBJECT_UNLOCK(self);
    gboolean active = scale > 0;
    gint bpf = self->have_info ? GST_AUDIO_INFO_BPF(&self->info) : 0, rate = self->have_info ? GST_AUDIO_INFO_RATE(&self->info) : 0;
    if ((!active && self->stop_ns < 0) || bpf <= 0 || rate <= 0 || !GST_BUFFER_PTS_IS_VALID(buffer))
        return push(self, buffer);
    /* Positions in samples at the stream's rate (to the nearest sample). */
    gint64 start = active ? (gint64)gst_util_uint64_scale_round((guint64)start_at, (guint64)rate, (guint64)scale) : 0;
    gint64 end = !active || end_at < 0 ? G_MAXINT64 : (gint64)gst_util_uint64_scale_round((guint64)end_at, (guint64)rate, (guint64)scale);
    if (self->stop_ns >= 0)
        end = MIN(end, (gint64)gst_util_uint64_scale_round((guint64)self->stop_ns, (guint64)rate, GST_SECOND));
    gint64 first = (gint64)gst_util_uint64_scale_round(GST_BUFFER_PTS(buffer), (guint64)rate, GST_SECOND);
    gint64 count = (gint64)(gst_buffer_get_size(buffer) / (gsize)bpf);
    gint64 from = MAX(first, start), to = MIN(first + count, end);
    if (to <= from) {
        gk_buffer_drop(buffer);
        return GST_FLOW_OK;
    }
    /* Planar layouts (a decoder's GstAudioMeta) are cut plane by plane. */
    GstBuffer *kept = (from != first || to != first + count)
        ? gst_audio_buffer_truncate(buffer, bpf, (gsize)(from - first), (gsize)(to - from))
        : buffer;
    kept = gst_buffer_make_writable(kept);
    /* The kept samples' times start from the first kept one, as the file's timeline does. */
    GST_BUFFER_PTS(kept) = gst_util_uint64_scale_round((guint64)(from - start), GST_SECOND, (guint64)rate);
    GST_BUFFER_DURATION(kept) = gst_util_uint64_scale_round((guint64)(to - start), GST_SECOND, (guint64)rate) - GST_BUFFER_PTS(kept);
    GST_BUFFER_DTS(kept) = GST_CLOCK_TIME_NONE;
    return push(self, kept);
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkAudioTrim *self = (GkAudioTrim *)object;
    GK_OBJECT_LOCK(self);
    switch (id) {
    case PROP_START: self->start = g_value_get_int64(value); break;
    case PROP_END: self->end = g_value_get_int64(value); break;
    case PROP_TIMESCALE: self->timescale = g_value_get_int(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GK_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkAudioTrim *self = (GkAudioTrim *)object;
    GK_OBJECT_LOCK(self);
    switch (id) {
    case PROP_START: g_value_set_int64(value, self->start); break;
    case PROP_END: g_value_set_int64(value, self->end); break;
    case PROP_TIMESCALE: g_value_set_int(value, self->timescale); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GK_OBJECT_UNLOCK(self);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    GkAudioTrim *self = (GkAudioTrim *)element;
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
        self->have_info = FALSE;
        self->stop_ns = -1;
        self->refused = FALSE;
    }
    return GST_ELEMENT_CLASS(gk_audio_trim_parent_class)->change_state(element, transition);
}

static void gk_audio_trim_class_init(GkAudioTrimClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
    g_object_class_install_property(object, PROP_START,
        g_param_spec_int64("start", "Start", "The first sample to keep, in timescale units of the stream's time", 0, G_MAXINT64, 0, flags));
    g_object_class_install_property(object, PROP_END,
        g_param_spec_int64("end", "End", "Where the kept samples end (exclusive), in timescale units; -1: at the stream's end", -1, G_MAXINT64, -1, flags));
    g_object_class_install_property(object, PROP_TIMESCALE,
        g_param_spec_int("timescale", "Timescale", "Units a second of start and end (an MP4 track's clock); 0: nothing is trimmed", 0, G_MAXINT, 0, flags));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit audio trim", "Filter/Audio",
        "Keeps the samples from start to end exactly, stamped from 0: an MP4 edit list's or gapless tag's samples, "
        "which GStreamer 1.22-1.26 apply by time (measured: 1.22 loses the last frame, 1.26 keeps a priming sample)", "GraphKit");
    element->change_state = change_state;
}

static void gk_audio_trim_init(GkAudioTrim *self) {
    self->end = -1;
    self->stop_ns = -1;
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkaudiotrim, "gkaudiotrim", GST_RANK_NONE, gk_audio_trim_get_type())
