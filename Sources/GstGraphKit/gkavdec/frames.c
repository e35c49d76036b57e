/*
 * gkavdec's frames (frames.h): the block libavcodec decodes a picture into, and the GstBuffer
 * that hands that block on without a copy.
 */
#include "frames.h"
#include "../common/tsan.h"

/* Planes start this far apart at least (av_malloc's alignment, a cache line), and a block is no
 * larger than MAX_BLOCK: libavcodec checks a picture's size first, this bounds what it may ask. */
#define PLANE_ALIGN 64
#define MAX_BLOCK ((size_t)1 << 30)

struct GkAvDecPool {
    GMutex lock;
    AVBufferPool *blocks; /* of `size` bytes each, laid out for the key below */
    int format, width, height;
    size_t size;
};

GkAvDecPool *gk_avdec_pool_new(void) {
    GkAvDecPool *p = g_new0(GkAvDecPool, 1);
    g_mutex_init(&p->lock);
    p->format = AV_PIX_FMT_NONE;
    return p;
}

void gk_avdec_pool_free(GkAvDecPool *p) {
    if (!p) return;
    gk_av.av_buffer_pool_uninit(&p->blocks); /* freed once the last block out comes back */
    g_mutex_clear(&p->lock);
    g_free(p);
}

static const struct {
    int pix_fmt;
    GstVideoFormat format;
    gboolean full_range;
} formats[] = {
    { AV_PIX_FMT_YUV420P, GST_VIDEO_FORMAT_I420, FALSE },
    { AV_PIX_FMT_YUVJ420P, GST_VIDEO_FORMAT_I420, TRUE },
    { AV_PIX_FMT_NV12, GST_VIDEO_FORMAT_NV12, FALSE },
    { AV_PIX_FMT_YUV420P10LE, GST_VIDEO_FORMAT_I420_10LE, FALSE },
    { AV_PIX_FMT_YUV420P12LE, GST_VIDEO_FORMAT_I420_12LE, FALSE },
    { AV_PIX_FMT_YUV422P, GST_VIDEO_FORMAT_Y42B, FALSE },
    { AV_PIX_FMT_YUVJ422P, GST_VIDEO_FORMAT_Y42B, TRUE },
    { AV_PIX_FMT_YUV422P10LE, GST_VIDEO_FORMAT_I422_10LE, FALSE },
    { AV_PIX_FMT_YUV422P12LE, GST_VIDEO_FORMAT_I422_12LE, FALSE },
    { AV_PIX_FMT_YUV444P, GST_VIDEO_FORMAT_Y444, FALSE },
    { AV_PIX_FMT_YUVJ444P, GST_VIDEO_FORMAT_Y444, TRUE },
    { AV_PIX_FMT_YUV444P10LE, GST_VIDEO_FORMAT_Y444_10LE, FALSE },
    { AV_PIX_FMT_YUV444P12LE, GST_VIDEO_FORMAT_Y444_12LE, FALSE },
    /* RGB coded as such (x264rgb, an identity matrix): libavcodec's planes are G, B, R, as
     * GStreamer's GBR formats'. */
    { AV_PIX_FMT_GBRP, GST_VIDEO_FORMAT_GBR, TRUE },
    { AV_PIX_FMT_GBRP10LE, GST_VIDEO_FORMAT_GBR_10LE, TRUE },
    { AV_PIX_FMT_GBRP12LE, GST_VIDEO_FORMAT_GBR_12LE, TRUE },
    { AV_PIX_FMT_GRAY8, GST_VIDEO_FORMAT_GRAY8, TRUE },
};

GstVideoFormat gk_avdec_format_of(int pix_fmt, gboolean *full_range) {
    for (gsize i = 0; i < G_N_ELEMENTS(formats); i++)
        if (formats[i].pix_fmt == pix_fmt) {
            if (full_range) *full_range = formats[i].full_range;
            return formats[i].format;
        }
    return GST_VIDEO_FORMAT_UNKNOWN;
}

/* Rows of plane `plane` of a picture `height` rows high. */
static int plane_rows(const AVPixFmtDescriptor *d, int plane, int height) {
    const gboolean chroma = plane == 1 || plane == 2;
    return chroma ? -((-height) >> d->log2_chroma_h) : height;
}

int gk_avdec_get_buffer(AVCodecContext *context, AVFrame *frame, int flags) {
    GkAvDecPool *p = context->opaque;
    /* GraphKit's bound on a picture's sides (FrameSizeLimit), whatever the stream's own
     * parameter sets claim: refused before any memory is asked for. */
    if (frame->width > GK_AVDEC_MAX_SIDE || frame->height > GK_AVDEC_MAX_SIDE) return AVERROR(EINVAL);
    if (!p || !(context->codec->capabilities & AV_CODEC_CAP_DR1) || frame->width <= 0 || frame->height <= 0
        || gk_avdec_format_of(frame->format, NULL) == GST_VIDEO_FORMAT_UNKNOWN)
        return gk_av.avcodec_default_get_buffer2(context, frame, flags);

    /* libavcodec's own allocator's layout (avcodec_default_get_buffer2): its padded size, and
     * rows widened until every plane's row length has the alignment its SIMD needs. */
    int w = frame->width, h = frame->height, align[AV_NUM_DATA_POINTERS] = { 0 };
    gk_av.avcodec_align_dimensions2(context, &w, &h, align);
    int linesize[4] = { 0 }, unaligned;
    do {
        if (w <= 0 || w > (1 << 20) || gk_av.av_image_fill_linesizes(linesize, frame->format, w) < 0) return AVERROR(EINVAL);
        w += w & ~(w - 1);
        unaligned = 0;
        for (int i = 0; i < 4; i++) unaligned |= align[i] > 0 ? linesize[i] % align[i] : 0;
    } while (unaligned);
    ptrdiff_t strides[4];
    size_t sizes[4] = { 0 };
    for (int i = 0; i < 4; i++) strides[i] = linesize[i];
    if (h <= 0 || gk_av.av_image_fill_plane_sizes(sizes, frame->format, h, strides) < 0) return AVERROR(EINVAL);
    /* The planes one after the other, each at PLANE_ALIGN, with libavcodec's slack after each
     * (16 bytes its SIMD may read past a row's end). */
    size_t offsets[4] = { 0 }, end = 0;
    for (int i = 0; i < 4 && sizes[i] > 0; i++) {
        offsets[i] = end;
        if (sizes[i] > MAX_BLOCK) return AVERROR(EINVAL);
        end = (end + sizes[i] + 16 + PLANE_ALIGN - 1) & ~(size_t)(PLANE_ALIGN - 1);
        if (end > MAX_BLOCK) return AVERROR(EINVAL);
    }
    const size_t size = end + PLANE_ALIGN;

    AVBufferRef *block = NULL;
    g_mutex_lock(&p->lock);
    GK_TSAN_ACQUIRE(p);
    if (!p->blocks || p->format != frame->format || p->width != w || p->height != h || p->size != size) {
        /* A new layout: the old pool goes once its blocks still out come back. */
        gk_av.av_buffer_pool_uninit(&p->blocks);
        /* Zeroed when a block is first made: libavcodec may leave parts of a damaged picture
         * unwritten, and those must not show another picture's (or process's) bytes. */
        p->blocks = gk_av.av_buffer_pool_init(size, gk_av.av_buffer_allocz);
        p->format = frame->format;
        p->width = w;
        p->height = h;
        p->size = size;
    }
    if (p->blocks) block = gk_av.av_buffer_pool_get(p->blocks);
    GK_TSAN_RELEASE(p);
    g_mutex_unlock(&p->lock);
    if (!block) return AVERROR(ENOMEM);

    frame->buf[0] = block;
    for (int i = 0; i < 4; i++) {
        frame->data[i] = sizes[i] > 0 ? block->data + offsets[i] : NULL;
        frame->linesize[i] = sizes[i] > 0 ? linesize[i] : 0;
    }
    frame->extended_data = frame->data;
    return 0;
}

static void release_block(gpointer reference) {
    AVBufferRef *r = reference;
    gk_av.av_buffer_unref(&r);
}

GstBuffer *gk_avdec_wrap(const AVFrame *frame, const GstVideoInfo *info) {
    const AVBufferRef *block = frame->buf[0];
    const AVPixFmtDescriptor *d = gk_av.av_pix_fmt_desc_get(frame->format);
    if (!block || !d || frame->buf[1] || frame->width != (int)GST_VIDEO_INFO_WIDTH(info)
        || frame->height != (int)GST_VIDEO_INFO_HEIGHT(info))
        return NULL;
    const guint planes = GST_VIDEO_INFO_N_PLANES(info);
    gsize offsets[GST_VIDEO_MAX_PLANES] = { 0 };
    gint strides[GST_VIDEO_MAX_PLANES] = { 0 };
    for (guint i = 0; i < planes && i < 4; i++) {
        /* Every plane inside the block, its rows as long as the picture needs at least. */
        const int row = gk_av.av_image_get_linesize(frame->format, frame->width, (int)i);
        if (!frame->data[i] || row <= 0 || frame->linesize[i] < row || frame->data[i] < block->data) return NULL;
        const size_t start = (size_t)(frame->data[i] - block->data);
        const size_t rows = (size_t)plane_rows(d, (int)i, frame->height);
        if (start > block->size || (size_t)frame->linesize[i] * (rows - 1) + (size_t)row > block->size - start) return NULL;
        offsets[i] = start;
        strides[i] = frame->linesize[i];
    }
    AVBufferRef *held = gk_av.av_buffer_ref(block);
    if (!held) return NULL;
    /* Read-only: libavcodec reads a picture again while later ones refer to it, so nobody may
     * write into it; a writer's map copies it (gst_memory_make_mapped). */
    GstMemory *memory = gst_memory_new_wrapped(GST_MEMORY_FLAG_READONLY, held->data, held->size, 0, held->size, held,
                                               release_block);
    GstBuffer *buffer = gst_buffer_new();
    gst_buffer_append_memory(buffer, memory);
    gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(info), (guint)frame->width,
                                   (guint)frame->height, planes, offsets, strides);
    return buffer;
}

void gk_avdec_copy(const AVFrame *frame, GstVideoFrame *out) {
    const AVPixFmtDescriptor *d = gk_av.av_pix_fmt_desc_get(frame->format);
    if (!d) return;
    const guint planes = GST_VIDEO_FRAME_N_PLANES(out);
    for (guint i = 0; i < planes && i < 4; i++) {
        const int row = gk_av.av_image_get_linesize(frame->format, frame->width, (int)i);
        const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(out, i);
        if (row <= 0 || !frame->data[i] || frame->linesize[i] < row || stride < row) continue;
        gk_av.av_image_copy_plane(GST_VIDEO_FRAME_PLANE_DATA(out, i), stride, frame->data[i], frame->linesize[i], row,
                            plane_rows(d, (int)i, frame->height));
    }
}
