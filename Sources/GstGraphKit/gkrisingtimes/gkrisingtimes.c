/*
 * gkrisingtimes: fails the stream at the first buffer whose decode time (else presentation time),
 * in running time, does not come after the one before, saying where.
 *
 * What for: an MP4's index cannot hold samples whose decode times go back or repeat (a player
 * stops or skips there), and GStreamer's MP4 muxer writes them anyway: measured with decode
 * times 0, 23, 46, 40, 69 ms into mp4mux on GStreamer 1.22 and 1.26.2, both wrote the file with
 * no error. Put before each input of a writer, it makes such a stream fail the run instead of
 * making a file that looks complete. Needed on every version measured.
 *
 * The error (a stream format error, from this element) names the input (`input`) and both times;
 * the buffer is not passed on.
 *
 * Example launch line:
 *   gst-launch-1.0 -e audiotestsrc num-buffers=100 ! avenc_aac ! gkrisingtimes input=audio ! mp4mux ! filesink location=out.m4a
 */
#include <gst/gst.h>
#include "../common/passthrough.h"

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    gchar *input;       /* the property, under the object lock */
    GstSegment segment; /* the input's, for running time; streaming thread only */
    gint64 last;        /* running time of the last buffer's decode time; -1 before the first */
    gboolean have_last;
} GkRisingTimes;

typedef struct {
    GstElementClass parent_class;
} GkRisingTimesClass;

GType gk_rising_times_get_type(void);
G_DEFINE_TYPE(GkRisingTimes, gk_rising_times, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_INPUT };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkRisingTimes *self = (GkRisingTimes *)parent;
    if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT) {
        const GstSegment *segment = NULL;
        gst_event_parse_segment(event, &segment);
        gst_segment_copy_into(segment, &self->segment);
    } else if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
        self->have_last = FALSE;
    }
    return gst_pad_event_default(pad, parent, event);
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkRisingTimes *self = (GkRisingTimes *)parent;
    (void)pad;
    GstClockTime t = GST_BUFFER_DTS_IS_VALID(buffer) ? GST_BUFFER_DTS(buffer) : GST_BUFFER_PTS(buffer);
    if (GST_CLOCK_TIME_IS_VALID(t) && self->segment.format == GST_FORMAT_TIME) {
        /* Decode times before the segment's start (B-frames' first) count below 0. */
        guint64 magnitude = 0;
        int sign = gst_segment_to_running_time_full(&self->segment, GST_FORMAT_TIME, t, &magnitude);
        if (sign != 0) {
            gint64 now = sign > 0 ? (gint64)magnitude : -(gint64)magnitude;
            if (self->have_last && now <= self->last) {
                GK_OBJECT_LOCK(self);
                gchar *input = g_strdup(self->input ? self->input : "writer's");
                GK_OBJECT_UNLOCK(self);
                GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                    ("the %s input's time stamps go %s at %.3f s (after %.3f s): the file could not be played there. "
                     "Its source is out of time order (joined or damaged media?)",
                     input, now == self->last ? "no further" : "back", (double)now / GST_SECOND, (double)self->last / GST_SECOND),
                    (NULL));
                g_free(input);
                gk_buffer_drop(buffer);
                return GST_FLOW_ERROR;
            }
            self->last = now;
            self->have_last = TRUE;
        }
    }
    return gk_pad_push(self->srcpad, buffer);
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkRisingTimes *self = (GkRisingTimes *)object;
    if (id != PROP_INPUT) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GK_OBJECT_LOCK(self);
    g_free(self->input);
    self->input = g_value_dup_string(value);
    GK_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkRisingTimes *self = (GkRisingTimes *)object;
    if (id != PROP_INPUT) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GK_OBJECT_LOCK(self);
    g_value_set_string(value, self->input);
    GK_OBJECT_UNLOCK(self);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    GkRisingTimes *self = (GkRisingTimes *)element;
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
        gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
        self->have_last = FALSE;
    }
    return GST_ELEMENT_CLASS(gk_rising_times_parent_class)->change_state(element, transition);
}

static void finalize(GObject *object) {
    g_free(((GkRisingTimes *)object)->input);
    G_OBJECT_CLASS(gk_rising_times_parent_class)->finalize(object);
}

static void gk_rising_times_class_init(GkRisingTimesClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    object->finalize = finalize;
    g_object_class_install_property(object, PROP_INPUT,
        g_param_spec_string("input", "Input", "What the error calls the input (\"audio\": \"the audio input's time stamps go back\")",
                            NULL, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit rising times", "Filter",
        "Fails the stream at the first buffer whose decode time does not follow the one before: what an MP4 index "
        "cannot hold and GStreamer's muxer (1.22 to 1.26) writes anyway", "GraphKit");
    element->change_state = change_state;
}

static void gk_rising_times_init(GkRisingTimes *self) {
    gst_segment_init(&self->segment, GST_FORMAT_UNDEFINED);
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkrisingtimes, "gkrisingtimes", GST_RANK_NONE, gk_rising_times_get_type())
