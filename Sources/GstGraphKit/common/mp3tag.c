/*
 * ffmpeg's MP3 encoder delay tag relabelled so that GStreamer's MP3 parser reads it: the work
 * decode's probe does inside decodebin, before the parser it plugs, where no element can go
 * (gk_mp3_relabel_ffmpeg_tag, GstGraphKit.h; called from CGraphKitGlue/timing.c). Not an element:
 * GraphKit never made one of it (issue 71's dead elements).
 *
 * mpegaudioparse reads an MP3's encoder delay and padding from the LAME tag in its first frame
 * (after the Xing/Info header) only when the tag's encoder string starts "LAME"; ffmpeg
 * (libmp3lame through libavcodec) writes the same layout saying "Lavc" ("Lavc60.31"), "Lavf lame"
 * for a bitexact libmp3lame and "Lavf" when it has no name: a file remuxed with -c:a copy (cover
 * art added, tags edited). Measured on a 132,300-sample MP3 from ffmpeg: GStreamer 1.22 and
 * 1.26.2 alike decode 133,649 samples, the delay and padding left in; relabelled "LAME", the
 * parser trims them and the decode is the source's, as ffmpeg's own. Needed on every version
 * measured; where a parser reads ffmpeg's label itself, the relabelled tag is read once all the
 * same (the parser trims, never this).
 *
 * Only the stream's first frame can hold the tag: it is looked for in the first buffer that holds
 * it or is long enough to; every other buffer passes untouched.
 */
#include <string.h>
#include <gst/gst.h>
#include "GstGraphKit.h"

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
