/*
 * gkencoderdelay: an audio encoder (its child) whose delay is measured while it runs, and told
 * to the writer.
 *
 * An AAC encoder primes (about 1,024 samples for avenc_aac) and pads its last frame, so its
 * output lasts longer than its input; GStreamer's MP4 muxer writes no edit list for it (measured
 * on GStreamer 1.22 and 1.26.2: mp4mux's edit, when it writes one, covers the whole media), so
 * players play the priming: 3.000 s of input came out 3.128 s long. This bin holds the encoder
 * (`encoder`, or one made from `encoder-factory`): the raw audio into `sink` is counted on its
 * way in, and the span of what the encoder sends out of `src` is measured (GstAudioEncoder stamps
 * its output from sample counts, so the span converts back exactly). At the end of the stream,
 * just before the EOS, it sends downstream a custom event "graphkit-encoder-delay" with priming
 * (samples out - samples in: the encoder's lead-in, measured, not assumed), samples (the input's
 * count) and rate; GraphKit's sink.mp4 writes the edit list from it. Nothing is sent when the
 * counts are not consistent (no input, less out than in). Needed on every version measured.
 *
 * The output's segment is left open at its end: its input's end (a demuxer's segment stop),
 * passed on by the encoder as it came, would have the muxer drop the frames that the delay
 * pushes past it (an ALAC file's last 204 samples).
 *
 * `skip-priming` (samples, for a stream that is played from its first sample: MPEG-TS, FLV, a live
 * playlist, where no edit list can skip the priming): the first that many input samples are left
 * out, and every later one is stamped that much earlier, so the priming takes their place and the
 * sound after it plays at its own time, as ffmpeg's negative first timestamps do where the
 * container keeps them (GStreamer's cannot be negative). The event at the end then reports the
 * priming that is left (none, when the skip is the encoder's priming), over the input's samples
 * counted from the first one skipped.
 *
 * A bin rather than an element beside the encoder, linked into it and back: such a loop of links
 * makes GstBin warn ("loop detected in the graph") at every state change.
 *
 * Example launch line:
 *   gst-launch-1.0 -e audiotestsrc num-buffers=100 ! gkencoderdelay encoder-factory=avenc_aac !
 *     mp4mux ! filesink location=out.m4a
 */
#include <gst/gst.h>
#include "../common/tsan.h"
#include <gst/audio/audio.h>
#include "GstGraphKit.h"

#define EVENT_NAME "graphkit-encoder-delay"

typedef struct {
    GstBin parent;
    GstPad *sinkpad, *srcpad; /* ghost pads, targets the encoder's */
    GstElement *encoder;      /* a child; set once, under the object lock */
    /* Touched on the input's streaming thread and on the one the encoder pushes from (for
     * GstAudioEncoder the same thread); atomics all the same. */
    gint64 samples_in;
    gint bpf, rate;
    gint skip;           /* skip-priming: samples to leave out at the start (set in READY) */
    gint64 to_skip;      /* how many of them are still to come */
    gint64 first_pts; /* -1 until the first encoded buffer */
    gint64 end_pts;   /* end of the last encoded buffer */
} GkEncoderDelay;

typedef struct {
    GstBinClass parent_class;
} GkEncoderDelayClass;

GType gk_encoder_delay_get_type(void);
G_DEFINE_TYPE(GkEncoderDelay, gk_encoder_delay, GST_TYPE_BIN)

enum { PROP_0, PROP_ENCODER, PROP_ENCODER_FACTORY, PROP_SKIP_PRIMING };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("audio/x-raw"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void reset_counts(GkEncoderDelay *self) {
    __atomic_store_n(&self->samples_in, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&self->first_pts, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&self->end_pts, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&self->to_skip, (gint64)__atomic_load_n(&self->skip, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

/* skip-priming on one input buffer: NULL when all of it is left out; else the buffer (a new one
 * when its start is cut), stamped `skip` samples earlier. */
static GstBuffer *skip_priming(GkEncoderDelay *self, GstBuffer *buffer, gint bpf, gint rate) {
    const gint skip = __atomic_load_n(&self->skip, __ATOMIC_RELAXED);
    if (skip <= 0 || bpf <= 0 || rate <= 0) return buffer;
    const gint64 samples = (gint64)(gst_buffer_get_size(buffer) / (gsize)bpf);
    const gint64 to_skip = __atomic_load_n(&self->to_skip, __ATOMIC_RELAXED);
    if (to_skip >= samples) {
        __atomic_store_n(&self->to_skip, to_skip - samples, __ATOMIC_RELAXED);
        gk_buffer_drop(buffer);
        return NULL;
    }
    if (to_skip > 0) {
        __atomic_store_n(&self->to_skip, 0, __ATOMIC_RELAXED);
        const GstClockTime pts = GST_BUFFER_PTS(buffer);
        buffer = gst_audio_buffer_truncate(buffer, bpf, (gsize)to_skip, (gsize)(samples - to_skip));
        if (GST_CLOCK_TIME_IS_VALID(pts)) GST_BUFFER_PTS(buffer) = pts + gst_util_uint64_scale_int((guint64)to_skip, GST_SECOND, rate);
        GST_BUFFER_DURATION(buffer) = gst_util_uint64_scale_int((guint64)(samples - to_skip), GST_SECOND, rate);
    } else {
        buffer = gst_buffer_make_writable(buffer);
    }
    const GstClockTime shift = gst_util_uint64_scale_int((guint64)skip, GST_SECOND, rate);
    if (GST_BUFFER_PTS_IS_VALID(buffer)) GST_BUFFER_PTS(buffer) = GST_BUFFER_PTS(buffer) > shift ? GST_BUFFER_PTS(buffer) - shift : 0;
    return buffer;
}

/* The raw side: `sink`, a ghost pad (its parent is this bin). */
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
    return gst_pad_event_default(pad, parent, event);
}

static GstFlowReturn sink_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkEncoderDelay *self = (GkEncoderDelay *)parent;
    gint bpf = __atomic_load_n(&self->bpf, __ATOMIC_RELAXED);
    buffer = skip_priming(self, buffer, bpf, __atomic_load_n(&self->rate, __ATOMIC_RELAXED));
    if (buffer == NULL) return GST_FLOW_OK;
    if (bpf > 0) __atomic_fetch_add(&self->samples_in, (gint64)(gst_buffer_get_size(buffer) / (gsize)bpf), __ATOMIC_RELAXED);
    GK_BUFFER_HANDED_ON(buffer);
    return gst_proxy_pad_chain_default(pad, parent, buffer);
}

/* The encoded side: the internal pad of `src`, which the encoder pushes into; its parent is the
 * ghost pad, whose parent is this bin. */
static GkEncoderDelay *owner_of_internal(GstObject *ghost) { return (GkEncoderDelay *)GST_OBJECT_PARENT(ghost); }

static gboolean encoded_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkEncoderDelay *self = owner_of_internal(parent);
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
                /* What skip-priming left out, the priming took the place of: a priming of the
                 * skip's length is none left, over that many samples more. */
                const gint64 skipped = MIN(samples_out - in, (gint64)__atomic_load_n(&self->skip, __ATOMIC_RELAXED));
                GstStructure *s = gst_structure_new(EVENT_NAME, "priming", G_TYPE_INT64, samples_out - in - skipped,
                                                    "samples", G_TYPE_INT64, in + skipped, "rate", G_TYPE_INT, rate, NULL);
                GST_DEBUG_OBJECT(self, "measured %" GST_PTR_FORMAT, s);
                gst_pad_push_event(self->srcpad, gst_event_new_custom(GST_EVENT_CUSTOM_DOWNSTREAM, s));
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
    return gst_pad_event_default(pad, parent, event);
}

static GstFlowReturn encoded_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkEncoderDelay *self = owner_of_internal(parent);
    if (GST_BUFFER_PTS_IS_VALID(buffer) && GST_BUFFER_DURATION_IS_VALID(buffer)) {
        gint64 unset = -1;
        __atomic_compare_exchange_n(&self->first_pts, &unset, (gint64)GST_BUFFER_PTS(buffer), FALSE, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
        __atomic_store_n(&self->end_pts, (gint64)(GST_BUFFER_PTS(buffer) + GST_BUFFER_DURATION(buffer)), __ATOMIC_RELAXED);
    }
    GK_BUFFER_HANDED_ON(buffer);
    return gst_proxy_pad_chain_default(pad, parent, buffer);
}

/* Takes `encoder` as the child, once: a floating one is owned from here, another gets the
 * bin's own reference (gst_bin_add takes one either way). */
static void set_encoder(GkEncoderDelay *self, GstElement *encoder) {
    if (encoder == NULL) return;
    GK_OBJECT_LOCK(self);
    gboolean taken = self->encoder != NULL;
    if (!taken) self->encoder = encoder;
    GK_OBJECT_UNLOCK(self);
    if (taken) {
        g_warning("gkencoderdelay: its encoder is set already");
        if (g_object_is_floating(encoder)) gst_object_unref(gst_object_ref_sink(encoder));
        return;
    }
    gst_bin_add(GST_BIN(self), encoder);
    GstPad *sink = gst_element_get_static_pad(encoder, "sink"), *src = gst_element_get_static_pad(encoder, "src");
    if (sink == NULL || src == NULL)
        g_warning("gkencoderdelay: %s has no static sink and src pads", GST_OBJECT_NAME(encoder));
    if (sink) gst_ghost_pad_set_target(GST_GHOST_PAD(self->sinkpad), sink);
    if (src) gst_ghost_pad_set_target(GST_GHOST_PAD(self->srcpad), src);
    if (sink) gst_object_unref(sink);
    if (src) gst_object_unref(src);
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkEncoderDelay *self = (GkEncoderDelay *)object;
    switch (id) {
    case PROP_ENCODER:
        set_encoder(self, g_value_get_object(value));
        break;
    case PROP_ENCODER_FACTORY: {
        const gchar *factory = g_value_get_string(value);
        GstElement *encoder = factory ? gst_element_factory_make(factory, NULL) : NULL;
        if (factory && encoder == NULL) g_warning("gkencoderdelay: no element %s", factory);
        set_encoder(self, encoder);
        break;
    }
    case PROP_SKIP_PRIMING:
        __atomic_store_n(&self->skip, (gint)g_value_get_uint(value), __ATOMIC_RELAXED);
        __atomic_store_n(&self->to_skip, (gint64)g_value_get_uint(value), __ATOMIC_RELAXED);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkEncoderDelay *self = (GkEncoderDelay *)object;
    GK_OBJECT_LOCK(self);
    GstElement *encoder = self->encoder ? gst_object_ref(self->encoder) : NULL;
    GK_OBJECT_UNLOCK(self);
    switch (id) {
    case PROP_ENCODER: g_value_set_object(value, encoder); break;
    case PROP_ENCODER_FACTORY: {
        GstElementFactory *f = encoder ? gst_element_get_factory(encoder) : NULL;
        g_value_set_string(value, f ? GST_OBJECT_NAME(f) : NULL);
        break;
    }
    case PROP_SKIP_PRIMING: g_value_set_uint(value, (guint)__atomic_load_n(&self->skip, __ATOMIC_RELAXED)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    if (encoder) gst_object_unref(encoder);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) reset_counts((GkEncoderDelay *)element);
    return GST_ELEMENT_CLASS(gk_encoder_delay_parent_class)->change_state(element, transition);
}

static void gk_encoder_delay_class_init(GkEncoderDelayClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
    g_object_class_install_property(object, PROP_ENCODER,
        g_param_spec_object("encoder", "Encoder", "The audio encoder (GstAudioEncoder) to measure, as a child; set once",
                            GST_TYPE_ELEMENT, flags));
    g_object_class_install_property(object, PROP_ENCODER_FACTORY,
        g_param_spec_string("encoder-factory", "Encoder factory", "Makes the encoder from this factory (avenc_aac, say); set once",
                            NULL, flags));
    g_object_class_install_property(object, PROP_SKIP_PRIMING,
        g_param_spec_uint("skip-priming", "Skip priming",
                          "Leave out this many samples at the start and stamp the rest that much earlier, so that the "
                          "encoder's priming takes their place: for a stream played from its first sample (no edit list)",
                          0, 1 << 20, 0, flags));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit encoder delay", "Codec/Encoder/Audio",
        "Holds an audio encoder, measures the priming it adds and sends it downstream before the EOS (a "
        "\"graphkit-encoder-delay\" event), for a writer's edit list, which mp4mux (1.22 to 1.26) does not write", "GraphKit");
    element->change_state = change_state;
}

static void gk_encoder_delay_init(GkEncoderDelay *self) {
    GstPadTemplate *sink = gst_static_pad_template_get(&sink_template), *src = gst_static_pad_template_get(&src_template);
    self->sinkpad = gst_ghost_pad_new_no_target_from_template("sink", sink);
    self->srcpad = gst_ghost_pad_new_no_target_from_template("src", src);
    gst_object_unref(sink);
    gst_object_unref(src);
    gst_pad_set_chain_function(self->sinkpad, sink_chain);
    gst_pad_set_chain_list_function(self->sinkpad, NULL); /* lists come buffer by buffer, each counted */
    gst_pad_set_event_function(self->sinkpad, sink_event);
    GstPad *internal = GST_PAD(gst_proxy_pad_get_internal(GST_PROXY_PAD(self->srcpad)));
    gst_pad_set_chain_function(internal, encoded_chain);
    gst_pad_set_chain_list_function(internal, NULL);
    gst_pad_set_event_function(internal, encoded_event);
    gst_object_unref(internal);
    gst_element_add_pad(GST_ELEMENT(self), self->sinkpad);
    gst_element_add_pad(GST_ELEMENT(self), self->srcpad);
    reset_counts(self);
}

GST_ELEMENT_REGISTER_DEFINE(gkencoderdelay, "gkencoderdelay", GST_RANK_NONE, gk_encoder_delay_get_type())
