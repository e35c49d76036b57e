/*
 * The graphkit plugin: GraphKit's own GStreamer elements, one folder each (its pad templates,
 * properties and GST_ELEMENT_REGISTER_DEFINE), registered here and nowhere else.
 *
 * The same sources are built twice: by the Makefile into libgstgraphkit.so, the file that
 * gst-inspect-1.0 and gst-launch-1.0 load (GST_PLUGIN_PATH), and by SwiftPM into GraphKit,
 * which registers the plugin in its own process at start-up (gst_plugin_graphkit_get_desc,
 * CGraphKitGlue/glue.c), so that graphctl and apps need no environment.
 */
#include <gst/gst.h>
#include "GstGraphKit.h"
#include "graphkit_plugin.h"

/* Every element, one line each: its folder defines gst_element_register_NAME. */
#define GK_ELEMENTS(X) \
    X(gkrgbtoi420)     \
    X(gkx264enc)       \
    X(gkaudiotrim)     \
    X(gkvideotrim)     \
    X(gkpresenttimes)  \
    X(gkrisingtimes)   \
    X(gkorientation)   \
    X(gkencoderdelay)  \
    X(gkmp4flac)       \
    X(gktonemap)       \
    X(gkavdec)         \
    X(gkflowguard)     \
    X(gkwhipsink)

#define GK_DECLARE(name) GST_ELEMENT_REGISTER_DECLARE(name)
GK_ELEMENTS(GK_DECLARE)

static gboolean plugin_init(GstPlugin *plugin) {
    gboolean registered = TRUE;
#define GK_REGISTER(name) registered &= GST_ELEMENT_REGISTER(name, plugin);
    GK_ELEMENTS(GK_REGISTER)
#undef GK_REGISTER
    return registered;
}

/* gst-inspect-1.0 shows it as the plugin's "Source module". */
#define PACKAGE "graphkit"

/* Version: GraphKit's (graphkit_plugin.h's GRAPHKIT_VERSION, its one place).
 * Licence: GPL, as GStreamer's own x264 plugin, because gkx264enc links libx264 (GPL-2.0 or
 * later). Origin: the GStreamer build system's words for a package that names none. */
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, graphkit,
                  "GraphKit's elements: packed RGB to I420 in one pass, H.264 through libx264 that holds no raw frame, "
                  "HDR to SDR tone mapping, H.264 and HEVC through libavcodec with no copy of a decoded frame, "
                  "and what GraphKit's decode and MP4 writer need that GStreamer (1.22 to 1.26) does not do",
                  plugin_init, GRAPHKIT_VERSION, "GPL", "GraphKit", "Unknown package origin")
