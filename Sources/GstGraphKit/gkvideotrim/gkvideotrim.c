/*
 * gkvideotrim: shows a decoded video stream through an edit list of several edits: a frame whose
 * time (in the media's own timeline) falls in an edit is stamped where that edit plays it; a
 * frame in no edit (a piece's frames before its cut, decoded for the ones after) is left out.
 *
 * What for: a file joined without re-encoding (a passthrough export of a composition, Apple's
 * and GraphKit's) plays each piece through an edit of its own, and GStreamer 1.22's demuxer shows
 * 80 of such a file's 95 frames (its segments per edit lose frames around each boundary, with
 * B-frames). GraphKit's decode takes such a video track's edit list out of the index on its way
 * into the demuxer (as it does a sound track's, for gkaudiotrim), which then gives every frame
 * at its media time, and applies the edits here, as ffmpeg and AVFoundation show them: a frame
 * is shown when its time is within an edit's media range [start, end), at `at + (time - start)`.
 *
 * `edits` lists them as "start:end:at" triples, comma-separated, in `timescale` units (the track's
 * own clock): each edit's media range and where it plays. Edits must follow each other in the
 * media (each starts at or after the one before ends), as a join writes them: the stream comes in
 * media order and goes out in presentation order, with nothing held. With `timescale` 0 (the
 * default) or no edit nothing is changed. The properties may change before the first frame.
 *
 * The demuxer reads the media without the list, so the element also carries times across it: a
 * seek's presentation times go upstream as the media times that play there, a segment after a
 * seek comes down at the presentation time it starts, and the duration and position asked of
 * the stream are the presentation's.
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=joined.mp4 ! qtdemux ! h264parse ! avdec_h264 !
 *     gkvideotrim edits="4864:20224:0,21760:55040:15360" timescale=12800 ! fakesink silent=false -v
 */
#include <gst/gst.h>
#include <errno.h>
#include <stdlib.h>
#include "../common/passthrough.h"

/* More edits than this are refused (the list is then ignored): a join of many pieces has one
 * each, and a list is read per frame. */
#define MOST_EDITS 4096

typedef struct {
    gint64 start, end, at; /* nanoseconds */
} Edit;

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    /* Properties, under the object lock. */
    gchar *edits_text;
    gint timescale;
    /* The edits in nanoseconds, remade when a property changes (under the lock). */
    Edit *edits;
    guint count;
    /* The streaming thread's: the edit the last frame was in (frames come in media order). */
    guint current;
} GkVideoTrim;

typedef struct {
    GstElementClass parent_class;
} GkVideoTrimClass;

GType gk_video_trim_get_type(void);
G_DEFINE_TYPE(GkVideoTrim, gk_video_trim, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_EDITS, PROP_TIMESCALE };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));

static gint64 to_ns(gint64 ticks, gint scale) {
    return (gint64)gst_util_uint64_scale_round((guint64)ticks, GST_SECOND, (guint64)scale);
}

/* Reads the text into nanosecond edits (under the lock): none unless every triple reads, each
 * edit is non-empty, and each starts at or after the one before ends. */
static void remake_edits(GkVideoTrim *self) {
    g_free(self->edits);
    self->edits = NULL;
    self->count = 0;
    if (self->timescale <= 0 || self->edits_text == NULL || self->edits_text[0] == '\0') return;
    gchar **parts = g_strsplit(self->edits_text, ",", MOST_EDITS + 1);
    guint n = g_strv_length(parts);
    Edit *edits = n > 0 && n <= MOST_EDITS ? g_new0(Edit, n) : NULL;
    gboolean ok = edits != NULL;
    for (guint i = 0; ok && i < n; i++) {
        gint64 start = 0, end = 0, at = 0;
        gchar *rest = parts[i];
        /* Three numbers, each 0 to 2^62, no more, no less. */
        gint64 *fields[3] = {&start, &end, &at};
        for (guint f = 0; ok && f < 3; f++) {
            gchar *after = NULL;
            errno = 0;
            gint64 v = g_ascii_strtoll(rest, &after, 10);
            ok = errno == 0 && after != rest && v >= 0 && v < ((gint64)1 << 62) && *after == (f < 2 ? ':' : '\0');
            *fields[f] = v;
            rest = after + (f < 2 ? 1 : 0);
        }
        ok = ok && end > start && (i == 0 || start >= edits[i - 1].end);
        if (ok) edits[i] = (Edit){start, end, at};
    }
    g_strfreev(parts);
    if (!ok) {
        g_free(edits);
        return;
    }
    for (guint i = 0; i < n; i++) {
        edits[i].start = to_ns(edits[i].start, self->timescale);
        edits[i].end = to_ns(edits[i].end, self->timescale);
        edits[i].at = to_ns(edits[i].at, self->timescale);
    }
    self->edits = edits;
    self->count = n;
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkVideoTrim *self = (GkVideoTrim *)parent;
    (void)pad;
    if (!GST_BUFFER_PTS_IS_VALID(buffer)) return gk_pad_push(self->srcpad, buffer);
    const gint64 time = (gint64)GST_BUFFER_PTS(buffer);
    gint64 shown = -1, until = -1;
    GK_OBJECT_LOCK(self);
    if (self->count == 0) {
        GK_OBJECT_UNLOCK(self);
        return gk_pad_push(self->srcpad, buffer);
    }
    /* The edit holding this time: from the last one on (frames come in media order; a seek
     * back starts the search over). */
    if (self->current >= self->count || time < self->edits[self->current].start) self->current = 0;
    for (guint i = self->current; i < self->count; i++) {
        if (time < self->edits[i].start) break;
        if (time < self->edits[i].end) {
            self->current = i;
            shown = self->edits[i].at + (time - self->edits[i].start);
            until = self->edits[i].at + (self->edits[i].end - self->edits[i].start);
            break;
        }
    }
    GK_OBJECT_UNLOCK(self);
    if (shown < 0) {
        gk_buffer_drop(buffer);
        return GST_FLOW_OK;
    }
    buffer = gst_buffer_make_writable(buffer);
    GST_BUFFER_PTS(buffer) = (GstClockTime)shown;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    /* A frame lasts at most to its edit's end. */
    if (GST_BUFFER_DURATION_IS_VALID(buffer) && shown + (gint64)GST_BUFFER_DURATION(buffer) > until)
        GST_BUFFER_DURATION(buffer) = (GstClockTime)(until - shown);
    return gk_pad_push(self->srcpad, buffer);
}

/* A presentation time's place in the media: within an edit, where that edit shows it; before an
 * edit (the time before the first, a gap of an empty edit), the start of the edit that follows;
 * past the last, its end. */
static gint64 to_media(const Edit *e, guint n, gint64 shown) {
    for (guint i = 0; i < n; i++) {
        if (shown < e[i].at) return e[i].start;
        if (shown < e[i].at + (e[i].end - e[i].start)) return e[i].start + (shown - e[i].at);
    }
    return e[n - 1].end;
}

/* A media time's place in the presentation: within an edit, where it plays; before one (media
 * no edit shows), where the next edit plays; past the last, where that one ends. */
static gint64 to_shown(const Edit *e, guint n, gint64 media) {
    for (guint i = 0; i < n; i++) {
        if (media < e[i].start) return e[i].at;
        if (media < e[i].end) return e[i].at + (media - e[i].start);
    }
    return e[n - 1].at + (e[n - 1].end - e[n - 1].start);
}

/* A copy of the edits (NULL, n 0, when none is on), so that events map times outside the lock. */
static Edit *copy_edits(GkVideoTrim *self, guint *n) {
    GK_OBJECT_LOCK(self);
    *n = self->count;
    Edit *copy = self->count ? g_memdup2(self->edits, sizeof(Edit) * self->count) : NULL;
    GK_OBJECT_UNLOCK(self);
    return copy;
}

/* After a seek the demuxer's segment starts at a media time (the edit list is hidden from it):
 * the segment going on starts where that time plays, so that what leaves is clipped where the
 * seek asked. The first segment, from 0, stays as it is. */
static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkVideoTrim *self = (GkVideoTrim *)parent;
    if (GST_EVENT_TYPE(event) != GST_EVENT_SEGMENT) return gst_pad_event_default(pad, parent, event);
    const GstSegment *segment = NULL;
    gst_event_parse_segment(event, &segment);
    guint n = 0;
    Edit *edits = segment->format == GST_FORMAT_TIME && (segment->start > 0 || segment->time > 0) ? copy_edits(self, &n) : NULL;
    if (edits == NULL) return gst_pad_event_default(pad, parent, event);
    GstSegment mapped;
    gst_segment_copy_into(segment, &mapped);
    mapped.start = (guint64)to_shown(edits, n, (gint64)segment->start);
    mapped.time = (guint64)to_shown(edits, n, (gint64)segment->time);
    mapped.position = (guint64)to_shown(edits, n, (gint64)segment->position);
    if (GST_CLOCK_TIME_IS_VALID(segment->stop)) mapped.stop = (guint64)to_shown(edits, n, (gint64)segment->stop);
    g_free(edits);
    GstEvent *moved = gst_event_new_segment(&mapped);
    gst_event_set_seqnum(moved, gst_event_get_seqnum(event));
    gst_event_unref(event);
    return gst_pad_event_default(pad, parent, moved);
}

/* A seek asks for presentation times, which the demuxer, without the edit list, reads as media
 * times: they go up as the media times that play there (a forward seek in time only). */
static gboolean src_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    GkVideoTrim *self = (GkVideoTrim *)parent;
    if (GST_EVENT_TYPE(event) != GST_EVENT_SEEK) return gst_pad_event_default(pad, parent, event);
    gdouble rate = 1;
    GstFormat format = GST_FORMAT_UNDEFINED;
    GstSeekFlags flags = 0;
    GstSeekType start_type = GST_SEEK_TYPE_NONE, stop_type = GST_SEEK_TYPE_NONE;
    gint64 start = 0, stop = 0;
    gst_event_parse_seek(event, &rate, &format, &flags, &start_type, &start, &stop_type, &stop);
    guint n = 0;
    Edit *edits = format == GST_FORMAT_TIME && rate > 0 ? copy_edits(self, &n) : NULL;
    if (edits == NULL) return gst_pad_event_default(pad, parent, event);
    if (start_type == GST_SEEK_TYPE_SET && start >= 0) start = to_media(edits, n, start);
    if (stop_type == GST_SEEK_TYPE_SET && stop >= 0) stop = to_media(edits, n, stop);
    g_free(edits);
    GstEvent *moved = gst_event_new_seek(rate, format, flags, start_type, start, stop_type, stop);
    gst_event_set_seqnum(moved, gst_event_get_seqnum(event));
    gst_event_unref(event);
    return gst_pad_push_event(self->sinkpad, moved);
}

/* The duration and position the stream's reader is told are the presentation's. */
static gboolean src_query(GstPad *pad, GstObject *parent, GstQuery *query) {
    GkVideoTrim *self = (GkVideoTrim *)parent;
    GstQueryType type = GST_QUERY_TYPE(query);
    if (type != GST_QUERY_DURATION && type != GST_QUERY_POSITION) return gst_pad_query_default(pad, parent, query);
    if (!gst_pad_query_default(pad, parent, query)) return FALSE;
    GstFormat format = GST_FORMAT_UNDEFINED;
    gint64 value = -1;
    if (type == GST_QUERY_DURATION) gst_query_parse_duration(query, &format, &value);
    else gst_query_parse_position(query, &format, &value);
    guint n = 0;
    Edit *edits = format == GST_FORMAT_TIME && value >= 0 ? copy_edits(self, &n) : NULL;
    if (edits == NULL) return TRUE;
    if (type == GST_QUERY_DURATION) gst_query_set_duration(query, format, to_shown(edits, n, G_MAXINT64));
    else gst_query_set_position(query, format, to_shown(edits, n, value));
    g_free(edits);
    return TRUE;
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkVideoTrim *self = (GkVideoTrim *)object;
    GK_OBJECT_LOCK(self);
    switch (id) {
    case PROP_EDITS:
        g_free(self->edits_text);
        self->edits_text = g_value_dup_string(value);
        break;
    case PROP_TIMESCALE: self->timescale = g_value_get_int(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    remake_edits(self);
    GK_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkVideoTrim *self = (GkVideoTrim *)object;
    GK_OBJECT_LOCK(self);
    switch (id) {
    case PROP_EDITS: g_value_set_string(value, self->edits_text); break;
    case PROP_TIMESCALE: g_value_set_int(value, self->timescale); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GK_OBJECT_UNLOCK(self);
}

static void finalize(GObject *object) {
    GkVideoTrim *self = (GkVideoTrim *)object;
    g_free(self->edits_text);
    g_free(self->edits);
    G_OBJECT_CLASS(gk_video_trim_parent_class)->finalize(object);
}

static void gk_video_trim_class_init(GkVideoTrimClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    object->finalize = finalize;
    GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING;
    g_object_class_install_property(object, PROP_EDITS,
        g_param_spec_string("edits", "Edits", "start:end:at triples, comma-separated, in timescale units: each edit's media range and where it plays", NULL, flags));
    g_object_class_install_property(object, PROP_TIMESCALE,
        g_param_spec_int("timescale", "Timescale", "Units a second of the edits (an MP4 track's clock); 0: nothing is changed", 0, G_MAXINT, 0, flags));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit video trim", "Filter/Video",
        "Shows decoded frames through an MP4 edit list of several edits, as ffmpeg and AVFoundation do "
        "(GStreamer 1.22's demuxer loses frames around each edit's boundary)", "GraphKit");
}

static void gk_video_trim_init(GkVideoTrim *self) {
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
    gst_pad_set_event_function(self->srcpad, src_event);
    gst_pad_set_query_function(self->srcpad, src_query);
}

GST_ELEMENT_REGISTER_DEFINE(gkvideotrim, "gkvideotrim", GST_RANK_NONE, gk_video_trim_get_type())
