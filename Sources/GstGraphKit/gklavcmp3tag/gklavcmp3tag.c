/*
 * gklavcmp3tag: relabels the encoder delay tag of an MP3 made by ffmpeg so that GStreamer's MP3
 * parser reads it, and trims the encoder's delay and padding as it does for LAME's.
 *
 * mpegaudioparse reads an MP3's encoder delay and padding from the LAME tag in its first frame
 * (after the Xing/Info header) only when the tag's encoder string starts "LAME"; ffmpeg
 * (libmp3lame through libavcodec) writes the same layout saying "Lavc" ("Lavc60.31"), "Lavf lame"
 * for a bitexact libmp3lame and "Lavf" when it has no name: a file remuxed with -c:a copy (cover
 * art added, tags edited). Measured on a 132,300-sample MP3 from ffmpeg: GStreamer 1.22 and
 * 1.26.2 alike decode 133,649 samples, the delay and padding left in; relabelled "LAME", the
 * parser trims them and the decode is the source's, as ffmpeg's own. Needed on every version
 * measured; where a parser reads ffmpeg's label itself, the relabelled tag is read once all the
 * same (the parser trims, never this element).
 *
 * Only the stream's first frame can hold the tag: it is looked for in the first buffer that holds
 * it or is long enough to; every other buffer passes untouched. Put it before mpegaudioparse
 * (GraphKit's gkdecodebin plugs it there).
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=ffmpeg.mp3 ! id3demux ! gklavcmp3tag ! mpegaudioparse ! mpg123audiodec !
 *     audioconvert ! wavenc ! filesink location=out.wav
 */
#include <string.h>
#include <gst/gst.h>
#include "../common/passthrough.h"
#include "GstGraphKit.h"

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    gboolean done; /* streaming thread only */
} GkLavcMp3Tag;

typedef struct {
    GstElementClass parent_class;
} GkLavcMp3TagClass;

GType gk_lavc_mp3_tag_get_type(void);
G_DEFINE_TYPE(GkLavcMp3Tag, gk_lavc_mp3_tag, GST_TYPE_ELEMENT)

#define MP3_CAPS "audio/mpeg, mpegversion=(int)1"
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(MP3_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(MP3_CAPS));

/* The longest first frame part that can hold the tag: header, side info, Xing/Info with every
 * optional field, the tag. */
#define LONGEST_TAGGED (4 + 32 + 8 + 112 + 36)

/* Where the LAME tag starts in a first frame that holds a Xing/Info header, or -1. */
static gssize lame_tag_offset(const guint8 *data, gsize size) {
    if (size < 4 || data[0] != 0xFF || (data[1] & 0xE0) != 0xE0)
        return -1;
    int mpeg1 = (data[1] & 0x18) == 0x18, mono = (data[3] & 0xC0) == 0xC0;
    gsize at = 4 + (mpeg1 ? (mono ? 17 : 32) : (mono ? 9 : 17));
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

/* GstGraphKit.h */
GstBuffer *gk_mp3_relabel_ffmpeg_tag(GstBuffer *buffer, gboolean *done) {
    GstMapInfo map;
    gssize at = -1;
    if (gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        at = lame_tag_offset(map.data, map.size);
        if (at >= 0 && memcmp(map.data + at, "Lavc", 4) != 0 && memcmp(map.data + at, "Lavf", 4) != 0)
            at = -1;
        gst_buffer_unmap(buffer, &map);
    }
    if (at >= 0 || gst_buffer_get_size(buffer) >= LONGEST_TAGGED)
        *done = TRUE;
    if (at >= 0) {
        buffer = gst_buffer_make_writable(buffer);
        gst_buffer_fill(buffer, (gsize)at, "LAME", 4);
        GST_DEBUG("relabelled ffmpeg's encoder delay tag at byte %" G_GSSIZE_FORMAT, at);
    }
    return buffer;
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkLavcMp3Tag *self = (GkLavcMp3Tag *)parent;
    (void)pad;
    if (!self->done) buffer = gk_mp3_relabel_ffmpeg_tag(buffer, &self->done);
    return gk_pad_push(self->srcpad, buffer);
}

static gboolean sink_event(GstPad *pad, GstObject *parent, GstEvent *event) {
    /* After a seek, the first buffer is no first frame. */
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) ((GkLavcMp3Tag *)parent)->done = TRUE;
    return gst_pad_event_default(pad, parent, event);
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) ((GkLavcMp3Tag *)element)->done = FALSE;
    return GST_ELEMENT_CLASS(gk_lavc_mp3_tag_parent_class)->change_state(element, transition);
}

static void gk_lavc_mp3_tag_class_init(GkLavcMp3TagClass *klass) {
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit ffmpeg MP3 delay tag", "Filter/Audio",
        "Relabels the encoder delay tag of an MP3 from ffmpeg (\"Lavc\", \"Lavf\") as LAME's, which mpegaudioparse "
        "(1.22 to 1.26) reads and trims by; put before mpegaudioparse", "GraphKit");
    element->change_state = change_state;
}

static void gk_lavc_mp3_tag_init(GkLavcMp3Tag *self) {
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, sink_event, &self->sinkpad, &self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gklavcmp3tag, "gklavcmp3tag", GST_RANK_NONE, gk_lavc_mp3_tag_get_type())
