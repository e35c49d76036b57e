#ifndef GRAPHKIT_CGSTREAMER_SHIM_H
#define GRAPHKIT_CGSTREAMER_SHIM_H
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>
#include <gst/audio/audio.h>
#include <gst/video/video.h>
#include <gst/pbutils/pbutils.h>
#endif
