/*
 * gkavdec: H.264 and HEVC through libavcodec, each decoded picture handed on without a copy.
 *
 * Why not avdec_h264: gst-libav lets libavcodec decode into GStreamer buffers and keeps each one
 * mapped while libavcodec holds the picture as a reference, so GstVideoDecoder's finish_frame
 * finds the buffer shared and copies it (make_writable): one copy of every frame, 11.7% of a
 * 1080p scene scan's time (BENCHMARKS.md). Here libavcodec decodes into blocks of its own
 * (frames.c: one block a picture, from a pool), and the buffer handed on holds a reference on the
 * block as one read-only memory with a video meta: nothing is copied, and the block goes back to
 * the pool when both libavcodec and the last reader have let it go. A reader that writes gets a
 * copy from GStreamer itself (a read-only memory mapped for writing is copied first).
 *
 * The layout is libavcodec's (padded rows and planes), so a downstream that does not say it reads
 * video metas (the allocation query) gets frames copied into GStreamer's layout instead, as
 * avdec_h264 gives them. Frame threading as ffmpeg's default (max-threads 0: a thread a core and
 * one more), so the pixels are libavcodec's: the same as avdec_h264's, bit for bit.
 *
 * Example launch line:
 *   gst-launch-1.0 filesrc location=in.mp4 ! qtdemux ! h264parse ! gkavdec ! videoconvert ! autovideosink
 */
#include <stdarg.h>
#include <string.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/video/gstvideodecoder.h>
#include "../common/tsan.h"
#include "frames.h"
#include "libav.h"

GST_DEBUG_CATEGORY_STATIC(gk_av_dec_debug);
#define GST_CAT_DEFAULT gk_av_dec_debug

/* codec_data no larger than this (a real one is a few hundred bytes). */
#define MAX_CODEC_DATA (1 << 20)
/* A frame libavcodec has not returned this many frames (in decode order) after a later one came
 * out never will (the deepest reorder is 16, plus the frame threads' delay): let go. */
#define GIVE_UP_AFTER 64

typedef struct {
    GstVideoDecoder parent;

    guint max_threads; /* property, under the object lock; 0: libavcodec's automatic count */

    /* Streaming state, under the stream lock. */
    AVCodecContext *context;
    AVPacket *packet;
    AVFrame *picture;
    GkAvDecPool *pool; /* the context's get_buffer2; freed after the context */
    GstVideoCodecState *input_state;
    GstVideoCodecState *output_state;
    int output_pix_fmt;
    gboolean downstream_reads_meta; /* from the allocation query: frames go on uncopied */
} GkAvDec;

typedef struct {
    GstVideoDecoderClass parent_class;
} GkAvDecClass;

GType gk_av_dec_get_type(void);
G_DEFINE_TYPE(GkAvDec, gk_av_dec, GST_TYPE_VIDEO_DECODER)

enum { PROP_0, PROP_MAX_THREADS };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-h264, stream-format=(string){ avc, avc3, byte-stream }, alignment=(string)au; "
                    "video/x-h265, stream-format=(string){ hvc1, hev1, byte-stream }, alignment=(string)au"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE("{ I420, NV12, I420_10LE, I420_12LE, Y42B, I422_10LE, I422_12LE, Y444, Y444_10LE, Y444_12LE, GBR, GBR_10LE, GBR_12LE, GRAY8 }")));

/* ---- libavcodec's side ---- */

static void close_codec(GkAvDec *self) {
    gk_av.avcodec_free_context(&self->context); /* joins its threads; pictures out keep their blocks */
    gk_avdec_pool_free(self->pool);
    self->pool = NULL;
    self->output_pix_fmt = AV_PIX_FMT_NONE;
}

static const char *codec_name(const GstStructure *s) {
    return gst_structure_has_name(s, "video/x-h265") ? "HEVC" : "H.264";
}

/* Opens libavcodec for `state`'s caps; FALSE after posting an element error that says why. */
static gboolean open_codec(GkAvDec *self, GstVideoCodecState *state) {
    const GstStructure *s = gst_caps_get_structure(state->caps, 0);
    const enum AVCodecID id = gst_structure_has_name(s, "video/x-h265") ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264;
    const AVCodec *codec = gk_av.avcodec_find_decoder(id);
    if (!codec) {
        GST_ELEMENT_ERROR(self, CORE, MISSING_PLUGIN, ("This libavcodec has no %s decoder.", codec_name(s)), (NULL));
        return FALSE;
    }
    self->pool = gk_avdec_pool_new();
    self->context = gk_av.avcodec_alloc_context3(codec);
    if (!self->context) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Out of memory starting the %s decoder.", codec_name(s)), (NULL));
        return FALSE;
    }
    if (state->codec_data) {
        const gsize size = gst_buffer_get_size(state->codec_data);
        if (size > MAX_CODEC_DATA) {
            GST_ELEMENT_ERROR(self, STREAM, DECODE, ("The %s stream's codec data is too large.", codec_name(s)),
                              ("%" G_GSIZE_FORMAT " bytes", size));
            return FALSE;
        }
        self->context->extradata = gk_av.av_mallocz(size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (!self->context->extradata) return FALSE;
        gst_buffer_extract(state->codec_data, 0, self->context->extradata, size);
        self->context->extradata_size = (int)size;
    }
    GK_OBJECT_LOCK(self);
    self->context->thread_count = (int)self->max_threads;
    GK_OBJECT_UNLOCK(self);
    self->context->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    self->context->opaque = self->pool;
    self->context->get_buffer2 = gk_avdec_get_buffer;
#if LIBAVCODEC_VERSION_MAJOR < 60
    /* libavcodec 59 (Debian 12) would otherwise call it on the sending thread only, each frame
     * thread waiting its turn; 60 and later require it to be thread-safe, as it is. */
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    self->context->thread_safe_callbacks = 1;
    G_GNUC_END_IGNORE_DEPRECATIONS
#endif
    const int ret = gk_av.avcodec_open2(self->context, codec, NULL);
    if (ret < 0) {
        char why[AV_ERROR_MAX_STRING_SIZE];
        gk_av.av_strerror(ret, why, sizeof why);
        GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("Cannot start the %s decoder: %s.", codec_name(s), why), (NULL));
        return FALSE;
    }
    return TRUE;
}

/* libavcodec's messages (a damaged stream's, mostly) go to GStreamer's debug log, not stderr, as
 * gst-libav sends them (the callback is process-wide: whichever of the two set it last, the
 * messages go to GStreamer's log). */
static void log_from_libav(void *object, int level, const char *format, va_list args) {
    if (level > gk_av.av_log_get_level()) return;
    const GstDebugLevel gst_level = level <= AV_LOG_ERROR ? GST_LEVEL_WARNING : level <= AV_LOG_INFO ? GST_LEVEL_INFO : GST_LEVEL_DEBUG;
    if (gst_level > gst_debug_category_get_threshold(gk_av_dec_debug)) return;
    char text[512];
    g_vsnprintf(text, sizeof text, format, args);
    g_strchomp(text);
    GST_CAT_LEVEL_LOG(gk_av_dec_debug, gst_level, NULL, "libav: %s", text);
    (void)object;
}

/* ---- GstVideoDecoder ---- */

static gboolean start(GstVideoDecoder *decoder) {
    GkAvDec *self = (GkAvDec *)decoder;
    const char *why_not = gk_av_load(log_from_libav);
    if (why_not) {
        /* decodebin then takes the next decoder; the debug log says why this one was not. */
        GST_WARNING_OBJECT(self, "%s", why_not);
        GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("Cannot start the H.264/HEVC decoder: %s.", why_not), (NULL));
        return FALSE;
    }
    self->packet = gk_av.av_packet_alloc();
    self->picture = gk_av.av_frame_alloc();
    self->output_pix_fmt = AV_PIX_FMT_NONE;
    return self->packet && self->picture;
}

static gboolean stop(GstVideoDecoder *decoder) {
    GkAvDec *self = (GkAvDec *)decoder;
    close_codec(self);
    gk_av.av_packet_free(&self->packet);
    gk_av.av_frame_free(&self->picture);
    g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
    g_clear_pointer(&self->output_state, gst_video_codec_state_unref);
    return TRUE;
}

/* Sets the output state for `p`'s format and size, and negotiates; FALSE if downstream refuses. */
static gboolean update_output(GkAvDec *self, const AVFrame *p, GstVideoFormat format, gboolean full_range) {
    GstVideoDecoder *decoder = (GstVideoDecoder *)self;
    GstVideoCodecState *out = self->output_state;
    if (out && self->output_pix_fmt == p->format && GST_VIDEO_INFO_WIDTH(&out->info) == p->width
        && GST_VIDEO_INFO_HEIGHT(&out->info) == p->height)
        return TRUE;
    g_clear_pointer(&self->output_state, gst_video_codec_state_unref);
    out = gst_video_decoder_set_output_state(decoder, format, (guint)p->width, (guint)p->height, self->input_state);
    if (!out) return FALSE;
    /* The colour the stream states (libavcodec's codes are ISO/IEC 23001-8's, as GStreamer's
     * _from_iso take them); what it leaves unsaid keeps GStreamer's default for the size. */
    GstVideoColorimetry *c = &out->info.colorimetry;
    if (full_range || self->context->color_range == AVCOL_RANGE_JPEG) c->range = GST_VIDEO_COLOR_RANGE_0_255;
    else if (self->context->color_range == AVCOL_RANGE_MPEG) c->range = GST_VIDEO_COLOR_RANGE_16_235;
    if (self->context->colorspace != AVCOL_SPC_UNSPECIFIED)
        c->matrix = gst_video_color_matrix_from_iso((guint)self->context->colorspace);
    if (self->context->color_trc != AVCOL_TRC_UNSPECIFIED)
        c->transfer = gst_video_transfer_function_from_iso((guint)self->context->color_trc);
    if (self->context->color_primaries != AVCOL_PRI_UNSPECIFIED)
        c->primaries = gst_video_color_primaries_from_iso((guint)self->context->color_primaries);
    if (p->sample_aspect_ratio.num > 0 && p->sample_aspect_ratio.den > 0 && self->input_state
        && GST_VIDEO_INFO_PAR_N(&self->input_state->info) == 1 && GST_VIDEO_INFO_PAR_D(&self->input_state->info) == 1) {
        GST_VIDEO_INFO_PAR_N(&out->info) = p->sample_aspect_ratio.num;
        GST_VIDEO_INFO_PAR_D(&out->info) = p->sample_aspect_ratio.den;
    }
    self->output_state = out;
    self->output_pix_fmt = p->format;
    /* The pictures libavcodec holds back: its reordering, and a picture a frame thread. */
    const gint fps_n = GST_VIDEO_INFO_FPS_N(&out->info), fps_d = GST_VIDEO_INFO_FPS_D(&out->info);
    if (fps_n > 0 && fps_d > 0) {
        const int held = self->context->has_b_frames + MAX(self->context->thread_count - 1, 0);
        const GstClockTime latency = gst_util_uint64_scale_ceil((guint64)MAX(held, 0) * GST_SECOND, (guint64)fps_d, (guint64)fps_n);
        gst_video_decoder_set_latency(decoder, latency, latency);
    }
    if (gst_video_decoder_negotiate(decoder)) return TRUE;
    self->output_pix_fmt = AV_PIX_FMT_NONE; /* asked again with the next picture */
    return FALSE;
}

/* Frames whose pictures will not come: those shown before the picture just handed on (`pts`;
 * pictures come in presentation order, so a frame left behind was lost to damage), and any
 * older in decode order than `number` by GIVE_UP_AFTER (frames without a time). Let go, so
 * that a late picture of one is dropped rather than given a time out of order. */
static void release_lost_frames(GkAvDec *self, int number, GstClockTime pts) {
    GstVideoDecoder *decoder = (GstVideoDecoder *)self;
    GList *frames = gst_video_decoder_get_frames(decoder);
    for (GList *l = frames; l; l = l->next) {
        GstVideoCodecFrame *f = l->data;
        const gboolean shown_before = GST_CLOCK_TIME_IS_VALID(pts) && GST_CLOCK_TIME_IS_VALID(f->pts) && f->pts < pts;
        if (shown_before || (gint64)f->system_frame_number + GIVE_UP_AFTER < (gint64)number)
            gst_video_decoder_release_frame(decoder, gst_video_codec_frame_ref(f));
    }
    g_list_free_full(frames, (GDestroyNotify)gst_video_codec_frame_unref);
}

/* Hands self->picture on as the frame its packet came in (the packet's pts is that frame's
 * number, carried through libavcodec's reordering). */
static GstFlowReturn push_picture(GkAvDec *self) {
    GstVideoDecoder *decoder = (GstVideoDecoder *)self;
    AVFrame *p = self->picture;
    /* A picture whose frame was let go (lost behind a later picture) is dropped; one without a
     * number (none was lost) takes the oldest frame. */
    GstVideoCodecFrame *frame = NULL;
    if (p->pts == AV_NOPTS_VALUE) frame = gst_video_decoder_get_oldest_frame(decoder);
    else if (p->pts >= 0 && p->pts <= G_MAXINT) frame = gst_video_decoder_get_frame(decoder, (int)p->pts);
    if (!frame) {
        GST_DEBUG_OBJECT(self, "a picture without its frame (pts %" G_GINT64_FORMAT "): dropped", (gint64)p->pts);
        gk_av.av_frame_unref(p);
        return GST_FLOW_OK;
    }
    gboolean full_range = FALSE;
    const GstVideoFormat format = gk_avdec_format_of(p->format, &full_range);
    if (format == GST_VIDEO_FORMAT_UNKNOWN) {
        const char *name = gk_av.av_get_pix_fmt_name(p->format);
        gk_av.av_frame_unref(p);
        gst_video_decoder_release_frame(decoder, frame);
        GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("The decoder gave pictures in a format gkavdec does not hand on (%s).",
                                                 name ? name : "unknown"), (NULL));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (!update_output(self, p, format, full_range)) {
        gk_av.av_frame_unref(p);
        gst_video_decoder_release_frame(decoder, frame);
        return GST_PAD_IS_FLUSHING(GST_VIDEO_DECODER_SRC_PAD(decoder)) ? GST_FLOW_FLUSHING : GST_FLOW_NOT_NEGOTIATED;
    }
    GstBuffer *shared = self->downstream_reads_meta ? gk_avdec_wrap(p, &self->output_state->info) : NULL;
    if (shared) {
        frame->output_buffer = shared;
    } else {
        /* Into GStreamer's layout: for a downstream that reads no video meta, or a picture
         * libavcodec allocated itself. */
        GstFlowReturn ret = gst_video_decoder_allocate_output_frame(decoder, frame);
        GstVideoFrame out;
        if (ret != GST_FLOW_OK || !gst_video_frame_map(&out, &self->output_state->info, frame->output_buffer, GST_MAP_WRITE)) {
            gk_av.av_frame_unref(p);
            gst_video_decoder_release_frame(decoder, frame);
            return ret != GST_FLOW_OK ? ret : GST_FLOW_ERROR;
        }
        gk_avdec_copy(p, &out);
        gst_video_frame_unmap(&out);
    }
    if (p->flags & AV_FRAME_FLAG_CORRUPT) GST_BUFFER_FLAG_SET(frame->output_buffer, GST_BUFFER_FLAG_CORRUPTED);
    const int number = (int)frame->system_frame_number;
    const GstClockTime pts = frame->pts;
    gk_av.av_frame_unref(p);
    const GstFlowReturn ret = gst_video_decoder_finish_frame(decoder, frame);
    release_lost_frames(self, number, pts);
    return ret;
}

/* Takes every picture libavcodec has ready; at the end of a drain, libavcodec is reset for more. */
static GstFlowReturn receive(GkAvDec *self) {
    for (;;) {
        const int r = gk_av.avcodec_receive_frame(self->context, self->picture);
        if (r == AVERROR(EAGAIN)) return GST_FLOW_OK;
        if (r == AVERROR_EOF) {
            gk_av.avcodec_flush_buffers(self->context);
            return GST_FLOW_OK;
        }
        if (r < 0) {
            char why[AV_ERROR_MAX_STRING_SIZE];
            gk_av.av_strerror(r, why, sizeof why);
            GstFlowReturn ret = GST_FLOW_OK;
            GST_VIDEO_DECODER_ERROR(self, 1, STREAM, DECODE, ("Could not decode the stream."), ("libavcodec: %s", why), ret);
            if (ret != GST_FLOW_OK) return ret;
            continue;
        }
        const GstFlowReturn ret = push_picture(self);
        if (ret != GST_FLOW_OK) return ret;
    }
}

/* Sends one packet (NULL: the end, to drain), taking pictures out when libavcodec is full. */
static GstFlowReturn send(GkAvDec *self, const AVPacket *packet) {
    for (int tries = 0;; tries++) {
        const int r = gk_av.avcodec_send_packet(self->context, packet);
        if (r == 0 || (r == AVERROR_EOF && !packet)) return receive(self);
        if (r == AVERROR(EAGAIN) && tries < 2) {
            const GstFlowReturn ret = receive(self);
            if (ret != GST_FLOW_OK) return ret;
            continue;
        }
        char why[AV_ERROR_MAX_STRING_SIZE];
        gk_av.av_strerror(r, why, sizeof why);
        GstFlowReturn ret = GST_FLOW_OK;
        GST_VIDEO_DECODER_ERROR(self, 1, STREAM, DECODE, ("Could not decode the stream."), ("libavcodec: %s", why), ret);
        return ret;
    }
}

static GstFlowReturn drain(GstVideoDecoder *decoder) {
    GkAvDec *self = (GkAvDec *)decoder;
    return self->context ? send(self, NULL) : GST_FLOW_OK;
}

static gboolean same_caps(GstVideoCodecState *a, GstVideoCodecState *b) {
    if (!a || !b) return FALSE;
    const GstStructure *x = gst_caps_get_structure(a->caps, 0), *y = gst_caps_get_structure(b->caps, 0);
    if (!gst_structure_has_name(x, gst_structure_get_name(y))) return FALSE;
    if (!a->codec_data != !b->codec_data) return FALSE;
    if (!a->codec_data) return g_strcmp0(gst_structure_get_string(x, "stream-format"), gst_structure_get_string(y, "stream-format")) == 0;
    GstMapInfo m, n;
    if (!gst_buffer_map(a->codec_data, &m, GST_MAP_READ)) return FALSE;
    gboolean same = FALSE;
    if (gst_buffer_map(b->codec_data, &n, GST_MAP_READ)) {
        same = m.size == n.size && memcmp(m.data, n.data, m.size) == 0;
        gst_buffer_unmap(b->codec_data, &n);
    }
    gst_buffer_unmap(a->codec_data, &m);
    return same;
}

static gboolean set_format(GstVideoDecoder *decoder, GstVideoCodecState *state) {
    GkAvDec *self = (GkAvDec *)decoder;
    const gboolean reopen = !self->context || !same_caps(self->input_state, state);
    g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
    self->input_state = gst_video_codec_state_ref(state);
    if (!reopen) return TRUE;
    if (self->context) {
        drain(decoder); /* the pictures of the stream before, then a decoder for the new one */
        close_codec(self);
        g_clear_pointer(&self->output_state, gst_video_codec_state_unref);
    }
    if (!open_codec(self, state)) {
        close_codec(self);
        return FALSE;
    }
    return TRUE;
}

static GstFlowReturn handle_frame(GstVideoDecoder *decoder, GstVideoCodecFrame *frame) {
    GkAvDec *self = (GkAvDec *)decoder;
    if (!self->context) {
        gst_video_decoder_release_frame(decoder, frame);
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("No decoder: the stream's format was not set."), (NULL));
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (gst_buffer_get_size(frame->input_buffer) == 0) {
        /* Nothing to decode (an empty packet is libavcodec's signal to drain and reset). */
        gst_video_decoder_release_frame(decoder, frame);
        return GST_FLOW_OK;
    }
    GstMapInfo map;
    if (!gst_buffer_map(frame->input_buffer, &map, GST_MAP_READ) || map.size > G_MAXINT) {
        gst_video_decoder_release_frame(decoder, frame);
        GST_ELEMENT_ERROR(self, STREAM, DECODE, ("Cannot read a packet of the stream."), (NULL));
        return GST_FLOW_ERROR;
    }
    /* The packet is copied by libavcodec (it holds no reference of ours), with its padding. */
    AVPacket *packet = self->packet;
    packet->data = map.data;
    packet->size = (int)map.size;
    packet->pts = frame->system_frame_number;
    packet->dts = AV_NOPTS_VALUE;
    packet->flags = GST_VIDEO_CODEC_FRAME_IS_SYNC_POINT(frame) ? AV_PKT_FLAG_KEY : 0;
    GstBuffer *input = gst_buffer_ref(frame->input_buffer);
    gst_video_codec_frame_unref(frame); /* the base class keeps it until its picture comes */
    const GstFlowReturn ret = send(self, packet);
    gst_buffer_unmap(input, &map);
    gst_buffer_unref(input);
    packet->data = NULL;
    packet->size = 0;
    return ret;
}

static GstFlowReturn finish(GstVideoDecoder *decoder) {
    return drain(decoder);
}

static gboolean flush(GstVideoDecoder *decoder) {
    GkAvDec *self = (GkAvDec *)decoder;
    if (self->context) gk_av.avcodec_flush_buffers(self->context);
    return TRUE;
}

static gboolean decide_allocation(GstVideoDecoder *decoder, GstQuery *query) {
    GkAvDec *self = (GkAvDec *)decoder;
    self->downstream_reads_meta = gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    GST_DEBUG_OBJECT(self, "downstream %s video metas", self->downstream_reads_meta ? "reads" : "does not read");
    return GST_VIDEO_DECODER_CLASS(gk_av_dec_parent_class)->decide_allocation(decoder, query);
}

/* ---- properties ---- */

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkAvDec *self = (GkAvDec *)object;
    GK_OBJECT_LOCK(self);
    if (id == PROP_MAX_THREADS) self->max_threads = g_value_get_uint(value);
    else G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    GK_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkAvDec *self = (GkAvDec *)object;
    GK_OBJECT_LOCK(self);
    if (id == PROP_MAX_THREADS) g_value_set_uint(value, self->max_threads);
    else G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
    GK_OBJECT_UNLOCK(self);
}

static void gk_av_dec_class_init(GkAvDecClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstVideoDecoderClass *video = GST_VIDEO_DECODER_CLASS(klass);
    GST_DEBUG_CATEGORY_INIT(gk_av_dec_debug, "gkavdec", 0, "GraphKit's H.264 and HEVC decoder (libavcodec), uncopied");

    object->set_property = set_property;
    object->get_property = get_property;
    g_object_class_install_property(object, PROP_MAX_THREADS,
        g_param_spec_uint("max-threads", "Maximum threads",
                          "Decoding threads (0: libavcodec chooses from the CPUs, as ffmpeg does)", 0, 64, 0,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));

    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit H.264/HEVC decoder (libavcodec)", "Codec/Decoder/Video",
                                          "H.264 and HEVC through libavcodec, each picture handed on read-only, uncopied",
                                          "GraphKit");
    video->start = start;
    video->stop = stop;
    video->set_format = set_format;
    video->handle_frame = handle_frame;
    video->finish = finish;
    video->drain = drain;
    video->flush = flush;
    video->decide_allocation = decide_allocation;
}

static void gk_av_dec_init(GkAvDec *self) {
    GstVideoDecoder *decoder = (GstVideoDecoder *)self;
    gst_video_decoder_set_packetized(decoder, TRUE);
    gst_video_decoder_set_needs_format(decoder, TRUE);
    gst_video_decoder_set_use_default_pad_acceptcaps(decoder, TRUE);
    GST_PAD_SET_ACCEPT_TEMPLATE(GST_VIDEO_DECODER_SINK_PAD(decoder));
    self->output_pix_fmt = AV_PIX_FMT_NONE;
}

/* Rank none: only a pipeline that names it uses it; GraphKit's decode puts it first where its
 * frames are only read (the `decode` node's readOnlyFrames); autoplugging elsewhere keeps
 * avdec_h264. */
GST_ELEMENT_REGISTER_DEFINE(gkavdec, "gkavdec", GST_RANK_NONE, gk_av_dec_get_type())
