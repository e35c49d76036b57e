/*
 * gkencoderdelay: measures an audio encoder's delay while it runs, and tells the writer.
 *
 * An AAC encoder primes (about 1,024 samples for avenc_aac) and pads its last frame, so its
 * output lasts longer than its input; GStreamer's MP4 muxer writes no edit list for it (measured
 * on GStreamer 1.22 and 1.26.2: mp4mux's edit, when it writes one, covers the whole media), so
 * players play the priming: 3.000 s of input came out 3.128 s long. This element goes around the
 * encoder: the raw audio passes through `sink` → `src` into it and is counted; what it encodes
 * passes through `encoded_sink` → `encoded_src`, and its span is measured (GstAudioEncoder stamps
 * its output from sample counts, so the span converts back exactly). At the end of the stream,
 * just before the EOS, it sends downstream a custom event "graphkit-encoder-delay" with priming
 * (samples out - samples in: the encoder's lead-in, measured, not assumed), samples (the input's
 * count) and rate; GraphKit's sink.mp4 writes the edit list from it. Nothing is sent when the
 * counts are not consistent (no input, less out than in). Needed on every version measured.
 *
 * The encoded side's segment is left open at its end: its input's end (a demuxer's segment
 * stop), passed on as it came, would have the muxer drop the frames that the delay pushes past
 * it (an ALAC file's last 204 samples).
 *
 * Example launch line:
 *   gst-launch-1.0 -e audiotestsrc num-buffers=100 ! gkencoderdelay name=d d.src ! avenc_aac !
 *     d.encoded_sink d.encoded_src ! mp4mux ! filesink location=out.m4a
 */
#include <gst/gst.h>
#include <gst/audio/audio.h>

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad, *encoded_sinkpad, *encoded_srcpad;
    /* Touched on the input's streaming thread and on the one the encoder pushes from (for
     * GstAudioEncoder the same thread); atomics all the same. */
    gint64 samples_in;
    gint bpf, rate;
    gint64 first_pts; /* -1 until the first encoded buffer */
    gint64 end_pts;   /* end of the last encoded buffer */
} GkEncoderDelay;

typedef struct {
    GstElementClass parent_class;
} GkEncoderDelayClass;

GType gk_encoder_delay_get_type(void);
G_DEFINE_TYPE(GkEncoderDelay, gk_encoder_delay, GST_TYPE_ELEMENT)

#define EVENT_NAME "graphkit-encoder-delay"

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("audio/x-raw"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("audio/x-raw"));
static GstStaticPadTemplate encoded_sink_template =
    GST_STATIC_PAD_TEMPLATE("encoded_sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate encoded_src_template =
    GST_STATIC_PAD_TEMPLATE("encoded_src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void reset_counts(GkEncoderDelay *self) {
    __atomic_store_n(&self->samples_in, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&self->first_pts, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&self->end_pts, -1, __ATOMIC_RELAXED);
}

/* Each pad's partner: sink and src, encoded_sink and encoded_src. */
static GstPad *partner(GstPad *pad) { return gst_pad_get_element_private(pad); }

/* A query goes on through the partner pad, to what is linked there; caps and accept-caps
 * questions nobody answers are answered from the pad's template. */
static gboolean forward_query(GstPad *pad, GstObject *parent, GstQuery *query) {
    (void)parent;
    if (gst_pad_peer_query(partner(pad), query)) {
        if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS) {
            GstCaps *caps = NULL, *templ = gst_pad_get_pad_template_caps(pad);
            gst_query_parse_caps_result(query, &caps);
            GstCaps *both = gst_caps_intersect(caps, templ);
            gst_query_set_caps_result(query, both);
            gst_caps_unref(both);
            gst_caps_unref(templ);
        }
        return TRUE;
    }
    if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS) {
        GstCaps *filter = NULL, *templ = gst_pad_get_pad_template_caps(pad);
        gst_query_parse_caps(query, &filter);
        GstCaps *result = filter ? gst_caps_intersect_full(filter, templ, GST_CAPS_INTERSECT_FIRST) : gst_caps_ref(templ);
        gst_query_set_caps_result(query, result);
        gst_caps_unref(result);
        gst_caps_unref(templ);
        return TRUE;
    }
    return FALSE;
}

/* Events against the stream (from the encoder or the writer) go on upstream through the partner. */
static gboolean upstream_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    (void)parent;
    return gst_pad_push_event(partner(pad), event);
}

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkEncoderDelay *self = (GkEncoderDelay *)parent;
    if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
        GstCaps *caps = NULL;
        GstAudioInfo audio;
        gst_event_parse_caps(event, &caps);
        if (caps != NULL && gst_audio_info_from_caps(&audio, caps)) {
            __atomic_store_n(&self->bpf, GST_AUDIO_INFO_BPF(&audio), __ATOMIC_RELAXED);
            __atomic_store_n(&self->rate, GST_AUDIO_INFO_RATE(&audio), __ATOMIC_RELAXED);
        }
    } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
        reset_counts(self);
    }
    return gst_pad_push_event(partner(pad), event);
}

static GstFlowReturn sink_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GkEncoderDelay *self = (GkEncoderDelay *)parent;
    gint bpf = __atomic_load_n(&self->bpf, __ATOMIC_RELAXED);
    if (bpf > 0) __atomic_fetch_add(&self->samples_in, (gint64)(gst_buffer_get_size(buffer) / (gsize)bpf), __ATOMIC_RELAXED);
    return gst_pad_push(partner(pad), buffer);
}

static gboolean encoded_sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkEncoderDelay *self = (GkEncoderDelay *)parent;
    GstPad *out = partner(pad);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_SEGMENT: {
        const GstSegment *segment = NULL;
        gst_event_parse_segment(event, &segment);
        if (segment->format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(segment->stop) && segment->rate > 0) {
            GstSegment open;
            gst_segment_copy_into(segment, &open);
            open.stop = GST_CLOCK_TIME_NONE;
            GstEvent *replacement = gst_event_new_segment(&open);
            gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
            gst_event_unref(event);
            event = replacement;
        }
        break;
    }
    case GST_EVENT_EOS: {
        gint64 first = __atomic_load_n(&self->first_pts, __ATOMIC_RELAXED);
        gint64 end = __atomic_load_n(&self->end_pts, __ATOMIC_RELAXED);
        gint64 in = __atomic_load_n(&self->samples_in, __ATOMIC_RELAXED);
        gint rate = __atomic_load_n(&self->rate, __ATOMIC_RELAXED);
        if (first >= 0 && end > first && in > 0 && rate > 0) {
            gint64 samples_out = (gint64)gst_util_uint64_scale_round((guint64)(end - first), (guint64)rate, GST_SECOND);
            if (samples_out >= in) {
                GstStructure *s = gst_structure_new(EVENT_NAME, "priming", G_TYPE_INT64, samples_out - in,
                                                    "samples", G_TYPE_INT64, in, "rate", G_TYPE_INT, rate, NULL);
                GST_DEBUG_OBJECT(self, "measured %" GST_PTR_FORMAT, s);
                gst_pad_push_event(out, gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, s));
            }
        }
        break;
    }
    case GST_EVENT_FLUSH_STOP:
        reset_counts(self);
        break;
    default:
        break;
    }
    return gst_pad_push_event(out, event);
}

static GstFlowReturn encoded_sink_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GkEncoderDelay *self = (GkEncoderDelay *)parent;
    if (GST_BUFFER_PTS_IS_VALID(buffer) && GST_BUFFER_DURATION_IS_VALID(buffer)) {
        gint64 unset = -1;
        __atomic_compare_exchange_n(&self->first_pts, &unset, (gint64)GST_BUFFER_PTS(buffer), FALSE, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
        __atomic_store_n(&self->end_pts, (gint64)(GST_BUFFER_PTS(buffer) + GST_BUFFER_DURATION(buffer)), __ATOMIC_RELAXED);
    }
    return gst_pad_push(partner(pad), buffer);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) reset_counts((GkEncoderDelay *)element);
    return GST_ELEMENT_CLASS(gk_encoder_delay_parent_class)->change_state(element, transition);
}

static void gk_encoder_delay_class_init(GkEncoderDelayClass *klass) {
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_add_static_pad_template(element, &encoded_sink_template);
    gst_element_class_add_static_pad_template(element, &encoded_src_template);
    gst_element_class_set_static_metadata(element, "GraphKit encoder delay", "Filter/Audio",
        "Goes around an audio encoder (sink ! src into it, encoded_sink ! encoded_src after it), measures the priming it adds "
        "and sends it downstream before the EOS (a \"graphkit-encoder-delay\" event), for a writer's edit list, which "
        "mp4mux (1.22 to 1.26) does not write", "GraphKit");
    element->change_state = change_state;
}

static GstPad *add_pad(GkEncoderDelay *self, GstStaticPadTemplate *templ) {
    GstPad *pad = gst_pad_new_from_static_template(templ, templ->name_template);
    gst_pad_set_query_function(pad, forward_query);
    gst_element_add_pad(GST_ELEMENT(self), pad);
    return pad;
}

static void gk_encoder_delay_init(GkEncoderDelay *self) {
    self->sinkpad = add_pad(self, &sink_template);
    self->srcpad = add_pad(self, &src_template);
    self->encoded_sinkpad = add_pad(self, &encoded_sink_template);
    self->encoded_srcpad = add_pad(self, &encoded_src_template);
    gst_pad_set_element_private(self->sinkpad, self->srcpad);
    gst_pad_set_element_private(self->srcpad, self->sinkpad);
    gst_pad_set_element_private(self->encoded_sinkpad, self->encoded_srcpad);
    gst_pad_set_element_private(self->encoded_srcpad, self->encoded_sinkpad);
    gst_pad_set_chain_function(self->sinkpad, sink_chain);
    gst_pad_set_event_function(self->sinkpad, sink_event);
    gst_pad_set_event_function(self->srcpad, upstream_event);
    gst_pad_set_chain_function(self->encoded_sinkpad, encoded_sink_chain);
    gst_pad_set_event_function(self->encoded_sinkpad, encoded_sink_event);
    gst_pad_set_event_function(self->encoded_srcpad, upstream_event);
    reset_counts(self);
}

GST_ELEMENT_REGISTER_DEFINE(gkencoderdelay, "gkencoderdelay", GST_RANK_NONE, gk_encoder_delay_get_type())
