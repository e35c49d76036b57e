/*
 * gkorientation: makes every tag event that passes say `orientation` as the picture's display
 * orientation (GStreamer's image-orientation tag), or leaves tags as they are ("keep").
 *
 * Two uses, each for something GStreamer does not say:
 * - What a file says that its demuxer does not read: qtdemux reads only the four turns of an
 *   MP4's display matrix, never a mirrored one (a selfie camera's: flip-rotate-0 …), measured on
 *   GStreamer 1.22 and 1.26.2. GraphKit's decode reads the matrix itself and states it here.
 * - After a picture was turned as its tag said (videoflip video-direction=auto): GStreamer 1.22's
 *   videoflip passes the tag on as it came, so that a writer downstream would turn the picture
 *   once more; 1.26's says rotate-0 itself. Set to rotate-0 after videoflip where videoflip does
 *   not (GraphKit asks videoflip what it does when it starts, and plugs this only then).
 *
 * The property may change while it plays; tags sent before are not sent again.
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=selfie.mp4 ! qtdemux ! h264parse ! avdec_h264 !
 *     gkorientation orientation=flip-rotate-0 ! videoflip video-direction=auto ! gkorientation orientation=rotate-0 !
 *     videoconvert ! autovideosink
 */
#include <gst/gst.h>
#include "../common/passthrough.h"

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    gint orientation; /* GkOrientationValue, under the object lock */
} GkOrientation;

typedef struct {
    GstElementClass parent_class;
} GkOrientationClass;

GType gk_orientation_get_type(void);
G_DEFINE_TYPE(GkOrientation, gk_orientation, GST_TYPE_ELEMENT)

/* 0 keeps the tags; the others are the image-orientation tag's values, as their nicks. */
static const GEnumValue orientation_values[] = {
    {0, "Leave the tags as they are", "keep"},
    {1, "Upright", "rotate-0"},
    {2, "Turned 90 degrees clockwise", "rotate-90"},
    {3, "Turned 180 degrees", "rotate-180"},
    {4, "Turned 270 degrees clockwise", "rotate-270"},
    {5, "Mirrored", "flip-rotate-0"},
    {6, "Mirrored, then turned 90 degrees clockwise", "flip-rotate-90"},
    {7, "Mirrored, then turned 180 degrees", "flip-rotate-180"},
    {8, "Mirrored, then turned 270 degrees clockwise", "flip-rotate-270"},
    {0, NULL, NULL},
};

static GType orientation_value_get_type(void) {
    static GType type = 0;
    if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GkOrientationValue", orientation_values));
    return type;
}

enum { PROP_0, PROP_ORIENTATION };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkOrientation *self = (GkOrientation *)parent;
    if (GST_EVENT_TYPE(event) == GST_EVENT_TAG) {
        GK_OBJECT_LOCK(self);
        gint value = self->orientation;
        GK_OBJECT_UNLOCK(self);
        const gchar *stated = value > 0 ? orientation_values[value].value_nick : NULL;
        GstTagList *tags = NULL;
        gst_event_parse_tag(event, &tags);
        gchar *current = NULL;
        if (stated != NULL && tags != NULL && gst_tag_list_get_tag_size(tags, GST_TAG_IMAGE_ORIENTATION) > 0)
            gst_tag_list_get_string(tags, GST_TAG_IMAGE_ORIENTATION, &current);
        if (stated != NULL && tags != NULL && g_strcmp0(current, stated) != 0) {
            GstTagList *changed = gst_tag_list_copy(tags);
            gst_tag_list_add(changed, GST_TAG_MERGE_REPLACE, GST_TAG_IMAGE_ORIENTATION, stated, NULL);
            GstEvent *replacement = gst_event_new_tag(changed);
            gst_event_set_seqnum(replacement, gst_event_get_seqnum(event));
            gst_event_unref(event);
            event = replacement;
        }
        g_free(current);
    }
    return gst_pad_event_default(pad, parent, event);
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    (void)pad;
    return gk_pad_push(((GkOrientation *)parent)->srcpad, buffer);
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkOrientation *self = (GkOrientation *)object;
    if (id != PROP_ORIENTATION) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GK_OBJECT_LOCK(self);
    self->orientation = g_value_get_enum(value);
    GK_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkOrientation *self = (GkOrientation *)object;
    if (id != PROP_ORIENTATION) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GK_OBJECT_LOCK(self);
    g_value_set_enum(value, self->orientation);
    GK_OBJECT_UNLOCK(self);
}

static void gk_orientation_class_init(GkOrientationClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    g_object_class_install_property(object, PROP_ORIENTATION,
        g_param_spec_enum("orientation", "Orientation", "The display orientation every tag event says (image-orientation), or keep",
                          orientation_value_get_type(), 0, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit orientation", "Filter/Video",
        "States a picture's display orientation in its tags: a mirrored MP4 matrix, which qtdemux (1.22 to 1.26) does not read, "
        "or upright after videoflip, which 1.22's videoflip does not say", "GraphKit");
}

static void gk_orientation_init(GkOrientation *self) {
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkorientation, "gkorientation", GST_RANK_NONE, gk_orientation_get_type())
