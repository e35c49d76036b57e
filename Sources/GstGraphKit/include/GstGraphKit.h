#ifndef GST_GRAPHKIT_H
#define GST_GRAPHKIT_H
/*
 * The graphkit GStreamer plugin (plugin.c): one element a folder. GStreamer finds its
 * descriptor in libgstgraphkit.so by this name; GraphKit, which links the same code, registers
 * it in its own process from the same descriptor (gst_plugin_register_static with its fields).
 */
#include <gst/gst.h>

G_BEGIN_DECLS
GST_PLUGIN_EXPORT const GstPluginDesc *gst_plugin_graphkit_get_desc(void);

/* The relabelling of one buffer of an MP3 stream (common/mp3tag.c), for GraphKit's decode inside decodebin,
 * where no element can go: ffmpeg's label in a first frame's LAME tag relabelled "LAME" (the
 * buffer made writable then; takes and returns a reference). *done becomes TRUE once the buffer
 * that could hold the first frame's tag has been seen: later buffers need not be looked at. */
GstBuffer *gk_mp3_relabel_ffmpeg_tag(GstBuffer *buffer, gboolean *done);
G_END_DECLS

#endif
