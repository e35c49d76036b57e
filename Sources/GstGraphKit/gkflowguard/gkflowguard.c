/*
 * gkflowguard: passes buffers and events on, and takes whatever its peer answers a buffer with
 * (an error, flushing, not linked) as OK, unless the guard itself is flushing; the buffers so
 * lost are counted (`dropped`). With `wait-for-keyframe` set, it drops buffers until a key frame,
 * which goes on marked discontinuous, and clears the property: in FLV (flvmux's buffers, one tag
 * each), the first video tag of a key frame, since flvmux marks only its video's delta frames
 * (its sound tags are not delta units, and would end the wait); in any other stream, the first
 * buffer that is neither a header nor a delta unit. With `hold-eos` set, an end of stream is kept
 * from going on (`eos-held` says one came): a source that reconnects (source.rtsp's `reconnect`)
 * puts a new session in the place of one whose server went away, and what its stream feeds must
 * not end meanwhile. Clearing `hold-eos` sends on an end of stream it held (so none is lost to a
 * race with whoever clears it). With `swallow-errors` off, what the peer answers goes upstream
 * as it is (only the end of stream is held).
 *
 * What for: a network sink that reconnects (sink.rtmp's `reconnect`). GStreamer 1.22's
 * `rtmp2sink` does not reconnect: when the server goes away it posts "Connection error" and
 * answers every later buffer with an error, and a muxer (an aggregator: flvmux) that is answered
 * an error, or flushing while the sink is replaced, stops its task for good. Behind this guard
 * the sink can fail, be set to NULL, removed and replaced by a new one while the stream goes on;
 * the new one is given the stream from its next key frame (a server, and a player joining, need
 * one to start from).
 *
 * Example launch line:
 *   gst-launch-1.0 videotestsrc is-live=true ! x264enc ! flvmux streamable=true ! gkflowguard ! rtmp2sink location=rtmp://127.0.0.1/live/key
 */
#include <gst/gst.h>
#include "../common/passthrough.h"

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    gint waiting;  /* wait-for-keyframe, atomic */
    gint hold_eos, eos_held; /* atomic */
    gint swallow; /* swallow-errors, atomic */
    gint64 dropped; /* atomic (__atomic builtins: GLib 2.74 has no 64-bit atomics) */
} GkFlowGuard;

typedef struct {
    GstElementClass parent_class;
} GkFlowGuardClass;

GType gk_flow_guard_get_type(void);
G_DEFINE_TYPE(GkFlowGuard, gk_flow_guard, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_WAIT_FOR_KEYFRAME, PROP_DROPPED, PROP_HOLD_EOS, PROP_EOS_HELD, PROP_SWALLOW_ERRORS };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* Whether `buffer` starts a key frame. An FLV tag (type, 24-bit data size, 7 bytes of time and
 * stream, the data, then the 4-byte size of the tag: flvmux's buffers) is one when it is video
 * (9) and its frame type (the data's first 4 bits) is 1; anything else, by its flags. */
static gboolean starts_key_frame(GstBuffer *buffer) {
    guint8 head[12];
    gsize size = gst_buffer_get_size(buffer);
    if (size >= 16 && gst_buffer_extract(buffer, 0, head, sizeof head) == sizeof head) {
        guint type = head[0] & 0x1f;
        gsize data = ((gsize)head[1] << 16) | ((gsize)head[2] << 8) | head[3];
        if ((type == 8 || type == 9 || type == 18) && 11 + data + 4 == size) return type == 9 && (head[11] >> 4) == 1;
    }
    return !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT) && !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_HEADER);
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkFlowGuard *self = (GkFlowGuard *)parent;
    if (g_atomic_int_get(&self->waiting)) {
        if (!starts_key_frame(buffer)) {
            gk_buffer_drop(buffer);
            __atomic_add_fetch(&self->dropped, 1, __ATOMIC_RELAXED);
            return GST_FLOW_OK;
        }
        g_atomic_int_set(&self->waiting, FALSE);
        buffer = gst_buffer_make_writable(buffer);
        GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
    }
    GstFlowReturn ret = gk_pad_push(self->srcpad, buffer);
    if (ret == GST_FLOW_OK || GST_PAD_IS_FLUSHING(pad) || !g_atomic_int_get(&self->swallow)) return ret;
    __atomic_add_fetch(&self->dropped, 1, __ATOMIC_RELAXED);
    return GST_FLOW_OK;
}

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkFlowGuard *self = (GkFlowGuard *)parent;
    if (GST_EVENT_TYPE(event) == GST_EVENT_EOS && g_atomic_int_get(&self->hold_eos)) {
        g_atomic_int_set(&self->eos_held, TRUE);
        gst_event_unref(event);
        return TRUE;
    }
    return gst_pad_event_default(pad, parent, event);
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkFlowGuard *self = (GkFlowGuard *)object;
    switch (id) {
    case PROP_WAIT_FOR_KEYFRAME: g_atomic_int_set(&self->waiting, g_value_get_boolean(value)); break;
    case PROP_HOLD_EOS:
        g_atomic_int_set(&self->hold_eos, g_value_get_boolean(value));
        if (!g_value_get_boolean(value) && g_atomic_int_compare_and_exchange(&self->eos_held, TRUE, FALSE))
            gst_pad_push_event(self->srcpad, gst_event_new_eos());
        break;
    case PROP_SWALLOW_ERRORS: g_atomic_int_set(&self->swallow, g_value_get_boolean(value)); break;
    case PROP_EOS_HELD: g_atomic_int_set(&self->eos_held, g_value_get_boolean(value)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkFlowGuard *self = (GkFlowGuard *)object;
    switch (id) {
    case PROP_WAIT_FOR_KEYFRAME: g_value_set_boolean(value, g_atomic_int_get(&self->waiting)); break;
    case PROP_DROPPED: g_value_set_int64(value, __atomic_load_n(&self->dropped, __ATOMIC_RELAXED)); break;
    case PROP_HOLD_EOS: g_value_set_boolean(value, g_atomic_int_get(&self->hold_eos)); break;
    case PROP_EOS_HELD: g_value_set_boolean(value, g_atomic_int_get(&self->eos_held)); break;
    case PROP_SWALLOW_ERRORS: g_value_set_boolean(value, g_atomic_int_get(&self->swallow)); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    }
}

static void gk_flow_guard_class_init(GkFlowGuardClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    g_object_class_install_property(object, PROP_WAIT_FOR_KEYFRAME,
        g_param_spec_boolean("wait-for-keyframe", "Wait for a key frame",
                             "Drop header and delta-unit buffers until one that is neither (then cleared)", FALSE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(object, PROP_DROPPED,
        g_param_spec_int64("dropped", "Dropped", "Buffers its peer refused or it dropped waiting for a key frame", 0, G_MAXINT64, 0,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(object, PROP_HOLD_EOS,
        g_param_spec_boolean("hold-eos", "Hold end of stream", "Keep an end of stream from going on (eos-held says one came)", FALSE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(object, PROP_EOS_HELD,
        g_param_spec_boolean("eos-held", "End of stream held", "Whether an end of stream was held (writable, to clear it)", FALSE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(object, PROP_SWALLOW_ERRORS,
        g_param_spec_boolean("swallow-errors", "Swallow errors", "Take whatever the peer answers a buffer with as OK", TRUE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit flow guard", "Filter",
        "Takes whatever its peer answers as OK, so a sink can fail or be replaced while the stream goes on; "
        "optionally waits for a key frame", "GraphKit");
}

static void gk_flow_guard_init(GkFlowGuard *self) {
    self->swallow = TRUE;
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkflowguard, "gkflowguard", GST_RANK_NONE, gk_flow_guard_get_type())
