/* Buffers and frames: memory the caller owns wrapped as a buffer, a video frame's plane layout
 * (as its video meta states it, else GStreamer's default), frame pools and their first-use marks,
 * and a frame's size. */
#include "CGraphKitGlue.h"
#include "../GstGraphKit/common/tsan.h"  /* GK_BUFFER_RECEIVED: glue.c says why */
#include <gst/video/video.h>

typedef struct {
    GkReleaseFn release;
    void *context;
} WrappedRelease;

static void wrapped_release(gpointer data) {
    WrappedRelease *w = data;
    w->release(w->context);
    g_free(w);
}

GstBuffer *gk_buffer_new_wrapped(void *data, gsize size, GkReleaseFn release, void *context, int readonly) {
    WrappedRelease *w = g_new0(WrappedRelease, 1);
    w->release = release;
    w->context = context;
    return gst_buffer_new_wrapped_full(readonly ? GST_MEMORY_FLAG_READONLY : 0, data, size, 0, size, w, wrapped_release);
}

int gk_video_layout(GstBuffer *buffer, const char *format, int width, int height, gsize offsets[4], gint strides[4]) {
    GstVideoMeta *meta = buffer ? gst_buffer_get_video_meta(buffer) : NULL;
    if (meta != NULL) {
        for (guint i = 0; i < meta->n_planes && i < 4; i++) {
            offsets[i] = meta->offset[i];
            strides[i] = meta->stride[i];
        }
        return (int)meta->n_planes;
    }
    GstVideoFormat f = gst_video_format_from_string(format);
    if (f == GST_VIDEO_FORMAT_UNKNOWN)
        return 0;
    GstVideoInfo info;
    if (!gst_video_info_set_format(&info, f, (guint)width, (guint)height))
        return 0;
    guint n = GST_VIDEO_INFO_N_PLANES(&info);
    for (guint i = 0; i < n && i < 4; i++) {
        offsets[i] = GST_VIDEO_INFO_PLANE_OFFSET(&info, i);
        strides[i] = GST_VIDEO_INFO_PLANE_STRIDE(&info, i);
    }
    return (int)n;
}

int gk_buffer_has_video_meta(GstBuffer *buffer) { return gst_buffer_get_video_meta(buffer) != NULL; }

void gk_buffer_add_packed_video_meta(GstBuffer *buffer, const char *format, int width, int height, int stride) {
    gsize offset[GST_VIDEO_MAX_PLANES] = {0};
    gint strides[GST_VIDEO_MAX_PLANES] = {stride};
    gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, gst_video_format_from_string(format),
                                   (guint)width, (guint)height, 1, offset, strides);
}

GstBufferPool *gk_frame_pool_new(const char *caps_string, guint size) {
    GstCaps *caps = gst_caps_from_string(caps_string);
    if (caps == NULL)
        return NULL;
    GstBufferPool *pool = gst_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, 0, 0);
    gst_caps_unref(caps);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
        gst_object_unref(pool);
        return NULL;
    }
    return pool;
}

GstBuffer *gk_frame_pool_acquire(GstBufferPool *pool) {
    GstBuffer *buffer = NULL;
    if (gst_buffer_pool_acquire_buffer(pool, &buffer, NULL) != GST_FLOW_OK)
        return NULL;
    GK_BUFFER_RECEIVED(buffer);
    return buffer;
}

GstBuffer *gk_frame_pool_acquire_counted(GstBufferPool *pool, int *is_new) {
    static GQuark seen = 0;
    if (seen == 0)
        seen = g_quark_from_static_string("graphkit-pool-seen");
    GstBuffer *buffer = gk_frame_pool_acquire(pool);
    if (buffer == NULL)
        return NULL;
    /* qdata survives the pool's reset of a returned buffer: a buffer without the mark is new. */
    *is_new = gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(buffer), seen) == NULL;
    if (*is_new)
        gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(buffer), seen, GINT_TO_POINTER(1), NULL);
    return buffer;
}

gboolean gk_buffer_first_seen(GstBuffer *buffer) {
    GQuark mark = g_quark_from_static_string("graphkit-buffer-seen");  /* thread-safe; once per frame */
    if (gst_mini_object_get_qdata(GST_MINI_OBJECT_CAST(buffer), mark) != NULL)
        return FALSE;
    gst_mini_object_set_qdata(GST_MINI_OBJECT_CAST(buffer), mark, GINT_TO_POINTER(1), NULL);
    return TRUE;
}

gsize gk_video_frame_size(const char *format, int width, int height) {
    GstVideoInfo info;
    GstVideoFormat f = gst_video_format_from_string(format);
    if (f == GST_VIDEO_FORMAT_UNKNOWN || !gst_video_info_set_format(&info, f, (guint)width, (guint)height))
        return 0;
    return GST_VIDEO_INFO_SIZE(&info);
}
