#ifndef GST_GRAPHKIT_H
#define GST_GRAPHKIT_H
/*
 * The graphkit GStreamer plugin (plugin.c): gkrgbtoi420 and gkx264enc. GStreamer finds its
 * descriptor in libgstgraphkit.so by this name; GraphKit, which links the same code, registers
 * it in its own process from the same descriptor (gst_plugin_register_static with its fields).
 */
#include <gst/gst.h>

G_BEGIN_DECLS
GST_PLUGIN_EXPORT const GstPluginDesc *gst_plugin_graphkit_get_desc(void);
G_END_DECLS

#endif
