/*
 * gkmp4flac: FLAC frames into an MP4 writer, with the stream's header as the encoder leaves it.
 *
 * Why: an MP4 holds FLAC well ("Encapsulation of FLAC in ISO Base Media File Format", xiph: one
 * frame a sample, a `fLaC` sample entry whose `dfLa` box holds the stream's metadata blocks,
 * STREAMINFO first; ffmpeg writes it), and that entry needs the header as flacenc finishes it:
 * the sample count and MD5 come at the end, by a seek back in bytes downstream, which a writer
 * of samples cannot take. This element takes it. GraphKit's MP4 writer (sink.mp4, MP4Writer)
 * writes the entry from this element's `header`; no GStreamer MP4 muxer takes audio/x-flac (1.22
 * to 1.26.2 measured), and one given the stand-in caps below writes its frames as it would
 * Opus's (codec-blind), which is how gst-launch users can still use it.
 *
 * What it does, on a FLAC stream (other streams pass untouched, caps and all):
 * - the frames go on under stand-in caps mp4mux takes: audio/x-opus with the FLAC stream's rate
 *   and channels (1 to 8; channel mapping family 0, or 255 past stereo); times and durations as
 *   they came;
 * - the stream's header buffers ("fLaC", STREAMINFO, comments...: whatever precedes the first
 *   frame) are kept, not passed; without them, the caps' streamheader is the header;
 * - the encoder may rewrite STREAMINFO at the end (flacenc does, with the MD5 and sample count,
 *   where downstream seeks in bytes): this element answers that it does, takes the byte segment
 *   and the bytes written after it as edits of the header it keeps, and passes neither on;
 * - `header` (read-only) is the stream's header as it stands: "fLaC" and the metadata blocks,
 *   the bytes a .flac file starts with; NULL before a FLAC stream's first frame.
 *
 * Example launch line (an MP4 whose sound track is FLAC under an Opus sample entry: not a file
 * to keep; sink.mp4 writes the real entry):
 *   gst-launch-1.0 -e audiotestsrc num-buffers=100 ! flacenc ! gkmp4flac ! mp4mux ! filesink location=out.mp4
 */
#include <string.h>
#include <gst/gst.h>
#include "../common/tsan.h"

#define FLAC_CAPS "audio/x-flac, framed=(boolean)true, channels=(int)[ 1, 8 ], rate=(int)[ 1, 655350 ]"

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    /* Streaming thread; `header` and `from_caps` also read by the property getter, under the
     * object lock. */
    gboolean flac;         /* the current stream is FLAC */
    gboolean framed;       /* a frame has passed */
    gboolean patching;     /* after a byte segment: buffers are edits of the header */
    guint64 patch_at;      /* where the next edit goes, in the stream's bytes */
    GByteArray *in_band;   /* the header buffers as they came: the stream's first bytes */
    GByteArray *from_caps; /* the caps' streamheader, as a native stream's header */
    GstCaps *standin;      /* the caps sent downstream for the FLAC stream */
} GkMp4Flac;

typedef struct {
    GstElementClass parent_class;
} GkMp4FlacClass;

GType gk_mp4_flac_get_type(void);
G_DEFINE_TYPE(GkMp4Flac, gk_mp4_flac, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_HEADER };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

/* The header a caps' streamheader holds, as a native stream starts: flacenc and flacparse give
 * Ogg's first packet ("\x7fFLAC", version, header count, then "fLaC" and STREAMINFO), then the
 * other blocks; a plain "fLaC" or block is taken as it is. */
static GByteArray *header_from_caps(const GstStructure *s) {
    GByteArray *out = g_byte_array_new();
    const GValue *headers = gst_structure_get_value(s, "streamheader");
    if (headers == NULL || !GST_VALUE_HOLDS_ARRAY(headers)) return out;
    for (guint i = 0; i < gst_value_array_get_size(headers); i++) {
        const GValue *v = gst_value_array_get_value(headers, i);
        if (!GST_VALUE_HOLDS_BUFFER(v)) continue;
        GstMapInfo map;
        GstBuffer *b = gst_value_get_buffer(v);
        if (!gst_buffer_map(b, &map, GST_MAP_READ)) continue;
        gsize skip = map.size >= 13 && map.data[0] == 0x7F && memcmp(map.data + 1, "FLAC", 4) == 0 ? 9 : 0;
        g_byte_array_append(out, map.data + skip, map.size - skip);
        gst_buffer_unmap(b, &map);
    }
    return out;
}

/* Caps mp4mux takes for a stream of `rate` and `channels` whose packets it does not read. */
static GstCaps *standin_caps(gint rate, gint channels) {
    GstCaps *caps = gst_caps_new_simple("audio/x-opus", "rate", G_TYPE_INT, rate, "channels", G_TYPE_INT, channels,
                                        "channel-mapping-family", G_TYPE_INT, channels <= 2 ? 0 : 255, NULL);
    if (channels > 2) {
        GValue mapping = G_VALUE_INIT, v = G_VALUE_INIT;
        g_value_init(&mapping, GST_TYPE_ARRAY);
        g_value_init(&v, G_TYPE_INT);
        for (gint c = 0; c < channels; c++) {
            g_value_set_int(&v, c);
            gst_value_array_append_value(&mapping, &v);
        }
        GstStructure *s = gst_caps_get_structure(caps, 0);
        gst_structure_set(s, "stream-count", G_TYPE_INT, channels, "coupled-count", G_TYPE_INT, 0, NULL);
        gst_structure_take_value(s, "channel-mapping", &mapping);
        g_value_unset(&v);
    }
    return caps;
}

static gboolean is_flac(GstCaps *caps) {
    return caps != NULL && gst_caps_get_size(caps) > 0 && gst_structure_has_name(gst_caps_get_structure(caps, 0), "audio/x-flac");
}

static void reset(GkMp4Flac *self) {
    GK_OBJECT_LOCK(self);
    self->flac = self->framed = self->patching = FALSE;
    self->patch_at = 0;
    g_byte_array_set_size(self->in_band, 0);
    g_byte_array_set_size(self->from_caps, 0);
    gst_caps_replace(&self->standin, NULL);
    GK_OBJECT_UNLOCK(self);
}

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkMp4Flac *self = (GkMp4Flac *)parent;
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
        GstCaps *caps = NULL;
        gst_event_parse_caps(event, &caps);
        if (!is_flac(caps)) {
            GK_OBJECT_LOCK(self);
            self->flac = FALSE;
            GK_OBJECT_UNLOCK(self);
            /* Passed as it is (the default handler passes caps only for pads that proxy them). */
            return gst_pad_push_event(self->srcpad, event);
        }
        const GstStructure *s = gst_caps_get_structure(caps, 0);
        gint rate = 0, channels = 0;
        if (!gst_structure_get_int(s, "rate", &rate) || !gst_structure_get_int(s, "channels", &channels)
            || rate < 1 || channels < 1 || channels > 8) {
            GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                ("a FLAC stream of %d channels at %d Hz cannot go into an MP4 here: it takes 1 to 8 channels at a stated rate", channels, rate),
                ("caps: %" GST_PTR_FORMAT, caps));
            gst_event_unref(event);
            return FALSE;
        }
        GstCaps *standin = standin_caps(rate, channels);
        GByteArray *header = header_from_caps(s);
        GK_OBJECT_LOCK(self);
        self->flac = TRUE;
        g_byte_array_unref(self->from_caps);
        self->from_caps = header;
        gst_caps_replace(&self->standin, standin);
        GK_OBJECT_UNLOCK(self);
        gst_event_unref(event);
        gboolean sent = gst_pad_push_event(self->srcpad, gst_event_new_caps(standin));
        gst_caps_unref(standin);
        return sent;
    }
    case GST_EVENT_SEGMENT: {
        if (!self->flac) break;
        const GstSegment *segment = NULL;
        gst_event_parse_segment(event, &segment);
        if (segment->format == GST_FORMAT_BYTES) {
            /* The encoder goes back to rewrite its header: what follows edits ours. */
            self->patching = TRUE;
            self->patch_at = segment->start;
            gst_event_unref(event);
            return TRUE;
        }
        self->patching = FALSE;
        break;
    }
    case GST_EVENT_FLUSH_STOP:
        self->patching = FALSE;
        break;
    default:
        break;
    }
    return gst_pad_event_default(pad, parent, event);
}

static gboolean sink_query(GstPad *pad, GstObject *parent, GstQuery *query) {
    GkMp4Flac *self = (GkMp4Flac *)parent;
    switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_CAPS: {
        /* What downstream takes, and FLAC where it takes the stand-in. */
        GstCaps *filter = NULL;
        gst_query_parse_caps(query, &filter);
        GstCaps *downstream = gst_pad_peer_query_caps(self->srcpad, NULL);
        GstCaps *opus = gst_caps_from_string("audio/x-opus");
        GstCaps *result = gst_caps_copy(downstream);
        if (gst_caps_can_intersect(downstream, opus)) result = gst_caps_merge(result, gst_caps_from_string(FLAC_CAPS));
        if (filter) {
            GstCaps *both = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
            gst_caps_unref(result);
            result = both;
        }
        gst_query_set_caps_result(query, result);
        gst_caps_unref(result);
        gst_caps_unref(opus);
        gst_caps_unref(downstream);
        return TRUE;
    }
    case GST_QUERY_ACCEPT_CAPS: {
        GstCaps *caps = NULL;
        gst_query_parse_accept_caps(query, &caps);
        gboolean accepted;
        if (is_flac(caps)) {
            GstCaps *flac = gst_caps_from_string(FLAC_CAPS);
            accepted = gst_caps_can_intersect(caps, flac);
            gst_caps_unref(flac);
        } else {
            accepted = gst_pad_peer_query_accept_caps(self->srcpad, caps);
        }
        gst_query_set_accept_caps_result(query, accepted);
        return TRUE;
    }
    case GST_QUERY_SEEKING: {
        GstFormat format;
        gst_query_parse_seeking(query, &format, NULL, NULL, NULL);
        GK_OBJECT_LOCK(self);  /* a query may come on another thread than the caps that set it */
        const gboolean flac = self->flac;
        GK_OBJECT_UNLOCK(self);
        if (flac && format == GST_FORMAT_BYTES) {
            /* The encoder's header rewrite comes here, not to the muxer (see above). */
            gst_query_set_seeking(query, GST_FORMAT_BYTES, TRUE, 0, -1);
            return TRUE;
        }
        break;
    }
    default:
        break;
    }
    return gst_pad_query_default(pad, parent, query);
}

static gboolean src_query(GstPad *pad, GstObject *parent, GstQuery *query) {
    GkMp4Flac *self = (GkMp4Flac *)parent;
    if (GST_QUERY_TYPE(query) == GST_QUERY_CAPS) {
        GK_OBJECT_LOCK(self);
        GstCaps *standin = self->flac && self->standin ? gst_caps_ref(self->standin) : NULL;
        GK_OBJECT_UNLOCK(self);
        if (standin) {
            GstCaps *filter = NULL;
            gst_query_parse_caps(query, &filter);
            GstCaps *result = filter ? gst_caps_intersect_full(filter, standin, GST_CAPS_INTERSECT_FIRST) : gst_caps_ref(standin);
            gst_query_set_caps_result(query, result);
            gst_caps_unref(result);
            gst_caps_unref(standin);
            return TRUE;
        }
        /* Another stream: what upstream gives. */
        return gst_pad_peer_query(self->sinkpad, query);
    }
    return gst_pad_query_default(pad, parent, query);
}

/* FLAC frames begin with the 14-bit sync code and a reserved 0 bit: 0xFFF8 or 0xFFF9. */
static gboolean starts_a_frame(const guint8 *data, gsize size) {
    return size >= 2 && data[0] == 0xFF && (data[1] & 0xFE) == 0xF8;
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkMp4Flac *self = (GkMp4Flac *)parent;
    (void)pad;
    if (!self->flac) return gk_pad_push(self->srcpad, buffer);
    GstMapInfo map;
    if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        gk_buffer_drop(buffer);
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("cannot read a FLAC buffer"), (NULL));
        return GST_FLOW_ERROR;
    }
    gboolean frame = FALSE, stray = FALSE;
    GK_OBJECT_LOCK(self);
    if (self->patching) {
        /* An edit of the header; bytes past it (a seek table's end) are not ours to keep. */
        GByteArray *h = self->in_band;
        for (gsize i = 0; i < map.size; i++) {
            guint64 at = self->patch_at + i;
            if (at < h->len) h->data[at] = map.data[i];
        }
        self->patch_at += map.size;
    } else if (starts_a_frame(map.data, map.size)) {
        frame = TRUE;
        self->framed = TRUE;
    } else if (!self->framed) {
        g_byte_array_append(self->in_band, map.data, map.size);
    } else {
        stray = TRUE;
    }
    GK_OBJECT_UNLOCK(self);
    gsize size = map.size;
    gst_buffer_unmap(buffer, &map);
    if (frame) return gk_pad_push(self->srcpad, buffer);
    gk_buffer_drop(buffer);
    if (stray) {
        GST_ELEMENT_ERROR(self, STREAM, FORMAT,
            ("a buffer of %" G_GSIZE_FORMAT " bytes in a FLAC stream after its frames began is not a FLAC frame", size), (NULL));
        return GST_FLOW_ERROR;
    }
    return GST_FLOW_OK;
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkMp4Flac *self = (GkMp4Flac *)object;
    if (id != PROP_HEADER) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GstBuffer *header = NULL;
    GK_OBJECT_LOCK(self);
    if (self->framed) {
        /* The stream's own header when it came in the stream ("fLaC" first), else the caps'. */
        GByteArray *h = self->in_band->len >= 4 && memcmp(self->in_band->data, "fLaC", 4) == 0 ? self->in_band : self->from_caps;
        if (h->len > 0) header = gst_buffer_new_memdup(h->data, h->len);
    }
    GK_OBJECT_UNLOCK(self);
    g_value_take_boxed(value, header);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    /* Reset when a stream starts, so that `header` is still there once the pipeline stopped. */
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) reset((GkMp4Flac *)element);
    return GST_ELEMENT_CLASS(gk_mp4_flac_parent_class)->change_state(element, transition);
}

static void finalize(GObject *object) {
    GkMp4Flac *self = (GkMp4Flac *)object;
    g_byte_array_unref(self->in_band);
    g_byte_array_unref(self->from_caps);
    gst_caps_replace(&self->standin, NULL);
    G_OBJECT_CLASS(gk_mp4_flac_parent_class)->finalize(object);
}

static void gk_mp4_flac_class_init(GkMp4FlacClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->get_property = get_property;
    object->finalize = finalize;
    g_object_class_install_property(object, PROP_HEADER,
        g_param_spec_boxed("header", "Header",
                           "The FLAC stream's header as it stands (\"fLaC\" and its metadata blocks, rewritten by the encoder at the end), "
                           "for the writer's sample entry; NULL before a FLAC stream's first frame",
                           GST_TYPE_BUFFER, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit FLAC into MP4", "Filter",
        "Passes FLAC frames to GStreamer's MP4 muxer, which writes no FLAC (1.22 to 1.26), under caps it takes, and keeps the "
        "stream's header for the writer to write the track's real sample entry; other streams pass untouched", "GraphKit");
    element->change_state = change_state;
}

static void gk_mp4_flac_init(GkMp4Flac *self) {
    self->in_band = g_byte_array_new();
    self->from_caps = g_byte_array_new();
    self->sinkpad = gst_pad_new_from_static_template(&sink_template, "sink");
    gst_pad_set_chain_function(self->sinkpad, chain);
    gst_pad_set_event_function(self->sinkpad, sink_event);
    gst_pad_set_query_function(self->sinkpad, sink_query);
    GST_PAD_SET_PROXY_ALLOCATION(self->sinkpad);
    gst_element_add_pad(GST_ELEMENT(self), self->sinkpad);
    self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
    gst_pad_set_query_function(self->srcpad, src_query);
    GST_PAD_SET_PROXY_ALLOCATION(self->srcpad);
    gst_element_add_pad(GST_ELEMENT(self), self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkmp4flac, "gkmp4flac", GST_RANK_NONE, gk_mp4_flac_get_type())
