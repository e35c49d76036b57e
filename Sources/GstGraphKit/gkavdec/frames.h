#ifndef GK_AVDEC_FRAMES_H
#define GK_AVDEC_FRAMES_H
/*
 * gkavdec's frames: libavcodec decodes into them, GStreamer hands them on.
 *
 * Each picture libavcodec asks for is one block from a pool, every plane inside it at libavcodec's
 * alignment, so that the picture becomes one GstMemory (read-only, holding a reference on the
 * block) with a GstVideoMeta stating where each plane starts and how far apart its rows are.
 * One memory, because a reader that maps a buffer of several memories gets them merged: a copy.
 */
#include <gst/gst.h>
#include <gst/video/video.h>
#include "libav.h"

typedef struct GkAvDecPool GkAvDecPool;

/* The longest side of a picture gkavdec decodes (GraphKit's FrameSizeLimit). */
#define GK_AVDEC_MAX_SIDE 16384

GkAvDecPool *gk_avdec_pool_new(void);
/* Frames still out keep their blocks (and the pool's memory) until their last reference goes. */
void gk_avdec_pool_free(GkAvDecPool *pool);

/* AVCodecContext.get_buffer2, with AVCodecContext.opaque a GkAvDecPool: one block a picture for
 * the formats gk_avdec_format_of knows, libavcodec's default allocator for the others. Called
 * from libavcodec's frame threads: thread-safe. */
int gk_avdec_get_buffer(AVCodecContext *context, AVFrame *frame, int flags);

/* GStreamer's name for libavcodec's pixel format, and whether it is full range (the JPEG
 * formats); GST_VIDEO_FORMAT_UNKNOWN for one gkavdec does not hand on. */
GstVideoFormat gk_avdec_format_of(int pix_fmt, gboolean *full_range);

/* A buffer holding `frame`'s picture without a copy: its block as one read-only memory and a
 * video meta, for `info` (the output state's: the picture's format and visible size, worked
 * out once a stream, not a picture); NULL when the picture is not one block (libavcodec's own
 * allocator, a codec without direct rendering) or not of `info`'s size. */
GstBuffer *gk_avdec_wrap(const AVFrame *frame, const GstVideoInfo *info);

/* `frame`'s visible picture copied row by row into `out`, a mapped frame of the same format and
 * size (GStreamer's layout: for a downstream that does not read video metas). */
void gk_avdec_copy(const AVFrame *frame, GstVideoFrame *out);

#endif
