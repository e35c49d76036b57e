/*
 * gkx264enc: H.264 through libx264, the encoder of encode.h264.
 *
 * Why not x264enc: GStreamer's x264enc, like every GstVideoEncoder subclass, keeps each raw
 * input frame (the codec frame's input_buffer, and x264enc keeps it mapped too) until x264
 * returns that frame encoded. x264_encoder_encode() copies the picture into a frame of its own
 * before it returns, so the raw buffer is dead weight for the whole of x264's delay (lookahead
 * plus frame threads: ~15 frames at veryfast), one I420 frame each: +45 MB at 1080p, measured
 * (BENCHMARKS.md). This element releases the raw buffer as soon as x264 has copied it; the
 * codec frame lives on with only its timing and metas until its encoded picture comes back.
 *
 * It sets x264 up as x264enc does for the properties encode.h264 uses (same names and units)
 * and as ffmpeg's libx264 does for the same settings: the x264 option strings of the three are
 * the same (BENCHMARKS.md says how they were compared). Profile and stream format come from
 * downstream caps, as x264enc negotiates them.
 *
 * Example launch line:
 *   gst-launch-1.0 -e videotestsrc num-buffers=60 ! video/x-raw,format=I420,width=1280,height=720 !
 *     gkx264enc speed-preset=veryfast bitrate=2048 ! video/x-h264,profile=high ! mp4mux ! filesink location=out.mp4
 */
#include <stdarg.h>
#include <stdint.h>  /* x264.h uses its types without including it */
#include <string.h>
#include <gst/gst.h>
#include "../common/tsan.h"
#include <gst/video/video.h>
#include <gst/video/gstvideoencoder.h>
#include <gst/pbutils/codec-utils.h>
#include <x264.h>
#include "settings.h"

GST_DEBUG_CATEGORY_STATIC(gk_x264_enc_debug);
#define GST_CAT_DEFAULT gk_x264_enc_debug

#define DEFAULT_BITRATE 2048  /* kbit/s, x264enc's */
#define DEFAULT_PRESET 5      /* medium, x264's own default */

typedef struct {
    GstVideoEncoder parent;

    /* Properties, under the object lock. */
    guint bitrate;      /* kbit/s */
    guint key_int_max;  /* 0: ten seconds of frames (x264enc's) */
    gint preset;        /* index into x264_preset_names */
    gint bframes;       /* -1: the preset's */
    guint threads;      /* 0: x264 chooses */
    guint tune;         /* GkX264EncTune flags */
    gboolean live_zerolatency; /* zerolatency when upstream is live */
    gboolean bitrate_changed;
    char last_error[256];  /* x264's last error message, for the element error that says why */

    /* Streaming state, under the stream lock. */
    x264_t *x264;
    x264_param_t param;           /* what x264 was opened with; reopened with it after a flush */
    GstVideoCodecState *input_state;
    gboolean byte_stream;         /* Annex B start codes, else avc (length prefixes + codec_data) */
    gboolean untimed;             /* a frame came without a PTS: x264's DTS means nothing then */
    gboolean zerolatency;         /* what the stream was opened with: the tune, or live upstream */
    gint64 last_pts;              /* the last PTS given to x264 */
} GkX264Enc;

typedef struct {
    GstVideoEncoderClass parent_class;
} GkX264EncClass;

GType gk_x264_enc_get_type(void);
G_DEFINE_TYPE(GkX264Enc, gk_x264_enc, GST_TYPE_VIDEO_ENCODER)

enum { PROP_0, PROP_BITRATE, PROP_KEY_INT_MAX, PROP_SPEED_PRESET, PROP_BFRAMES, PROP_THREADS, PROP_TUNE, PROP_LIVE_ZEROLATENCY };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-raw, format=(string){ I420, NV12 }, width=(int)[1, MAX], height=(int)[1, MAX], "
                    "framerate=(fraction)[0/1, MAX]"));
/* 8-bit 4:2:0 in, so only the profiles that carry it; constrained-baseline is what x264 writes
 * for baseline (it never uses baseline's FMO or ASO). */
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS("video/x-h264, framerate=(fraction)[0/1, MAX], width=(int)[1, MAX], height=(int)[1, MAX], "
                    "stream-format=(string){ avc, byte-stream }, alignment=(string)au, "
                    "profile=(string){ high, main, constrained-baseline, baseline }"));

/* ---- x264's log ---- */

static void log_from_x264(void *private, int level, const char *format, va_list args) {
    GkX264Enc *self = private;
    char text[sizeof self->last_error];
    g_vsnprintf(text, sizeof text, format, args);
    g_strchomp(text);
    switch (level) {
    case X264_LOG_ERROR:
        GST_ERROR_OBJECT(self, "x264: %s", text);
        GK_OBJECT_LOCK(self);
        g_strlcpy(self->last_error, text, sizeof self->last_error);
        GK_OBJECT_UNLOCK(self);
        break;
    case X264_LOG_WARNING: GST_WARNING_OBJECT(self, "x264: %s", text); break;
    case X264_LOG_INFO: GST_INFO_OBJECT(self, "x264: %s", text); break;
    default: GST_LOG_OBJECT(self, "x264: %s", text); break;
    }
}

/* x264 formats a line per frame at its debug level: ask for no more than this category shows. */
static int x264_log_level(void) {
    GstDebugLevel shown = gst_debug_category_get_threshold(gk_x264_enc_debug);
    return shown >= GST_LEVEL_LOG ? X264_LOG_DEBUG : shown >= GST_LEVEL_INFO ? X264_LOG_INFO : X264_LOG_WARNING;
}

/* ---- setting x264 up ---- */

/* Fills `p` for `info` from the properties; FALSE (with the reason in self->last_error) if x264
 * refuses. */
static gboolean make_param(GkX264Enc *self, const GstVideoInfo *info, const char *profile, x264_param_t *p) {
    GK_OBJECT_LOCK(self);
    const GkX264Settings settings = {
        .bitrate = self->bitrate, .key_int_max = self->key_int_max, .preset = self->preset, .bframes = self->bframes,
        .threads = self->threads, .zerolatency = self->zerolatency, .byte_stream = self->byte_stream,
        .log = log_from_x264, .log_private = self, .log_level = x264_log_level(),
    };
    self->bitrate_changed = FALSE;
    GK_OBJECT_UNLOCK(self);
    char why[sizeof self->last_error];
    if (gk_x264_make_param(&settings, info, profile, p, why, sizeof why)) return TRUE;
    GK_OBJECT_LOCK(self);
    g_strlcpy(self->last_error, why, sizeof self->last_error);
    GK_OBJECT_UNLOCK(self);
    return FALSE;
}

static void close_x264(GkX264Enc *self) {
    if (self->x264) x264_encoder_close(self->x264);
    self->x264 = NULL;
}

static gboolean open_x264(GkX264Enc *self) {
    GK_OBJECT_LOCK(self);
    self->last_error[0] = 0;
    GK_OBJECT_UNLOCK(self);
    /* x264 keeps its own copy of the parameters. */
    self->x264 = x264_encoder_open(&self->param);
    return self->x264 != NULL;
}

/* x264's last error, or a sentence saying it gave none. */
static void why_x264_failed(GkX264Enc *self, char *why, gsize size) {
    GK_OBJECT_LOCK(self);
    g_strlcpy(why, self->last_error[0] ? self->last_error : "x264 gave no reason", size);
    GK_OBJECT_UNLOCK(self);
}

static void post_open_error(GkX264Enc *self, const GstVideoInfo *info, const char *profile) {
    char why[sizeof self->last_error];
    why_x264_failed(self, why, sizeof why);
    GK_OBJECT_LOCK(self);
    const char *preset = x264_preset_names[self->preset];
    GK_OBJECT_UNLOCK(self);
    GST_ELEMENT_ERROR(self, LIBRARY, INIT,
                      ("Cannot start the H.264 encoder (x264) for %dx%d %s video: %s", GST_VIDEO_INFO_WIDTH(info),
                       GST_VIDEO_INFO_HEIGHT(info), GST_VIDEO_INFO_NAME(info), why),
                      ("preset %s%s, profile %s, %d kbit/s, %d threads, %d B-frames, keyframes at most %d frames apart",
                       preset, self->zerolatency ? " tune zerolatency" : "", profile ? profile : "(any)", self->param.rc.i_bitrate,
                       self->param.i_threads, self->param.i_bframe, self->param.i_keyint_max));
}

/* Whether upstream is live (a camera, a microphone, a network stream): it answers the latency
 * query so. Asked when the format is set, on the streaming thread, as the sources are running. */
static gboolean upstream_is_live(GkX264Enc *self) {
    GstQuery *query = gst_query_new_latency();
    gboolean live = FALSE;
    if (gst_pad_peer_query(GST_VIDEO_ENCODER_SINK_PAD(self), query)) gst_query_parse_latency(query, &live, NULL, NULL);
    gst_query_unref(query);
    return live;
}

/* ---- output caps ---- */

/* x264's NAL payloads start with a 4-byte length (avc) or an Annex B start code. */
static GkNal nal_body(const GkX264Enc *self, const x264_nal_t *nal) {
    const int prefix = self->byte_stream && !nal->b_long_startcode ? 3 : 4;
    GkNal n = { nal->p_payload + prefix, nal->i_payload - prefix };
    return n;
}

/* Sets the output caps from x264's own headers: profile and level from its SPS and, for avc,
 * codec_data. `asked` is the profile downstream fixated on, or NULL. */
static gboolean set_output_caps(GkX264Enc *self, const char *asked) {
    x264_nal_t *nals;
    int count;
    if (x264_encoder_headers(self->x264, &nals, &count) < 0) {
        GST_ELEMENT_ERROR(self, STREAM, ENCODE, ("x264 could not write the stream's headers"), (NULL));
        return FALSE;
    }
    GkNal sps = { NULL, 0 }, pps = { NULL, 0 };
    for (int i = 0; i < count; i++) {
        if (nals[i].i_type == NAL_SPS) sps = nal_body(self, &nals[i]);
        else if (nals[i].i_type == NAL_PPS) pps = nal_body(self, &nals[i]);
    }
    if (sps.size < 4 || pps.size < 1) {
        GST_ELEMENT_ERROR(self, STREAM, ENCODE, ("x264 wrote no SPS or PPS"), ("%d header NAL units", count));
        return FALSE;
    }
    GstCaps *caps = gst_caps_new_simple("video/x-h264", "stream-format", G_TYPE_STRING, self->byte_stream ? "byte-stream" : "avc",
                                        "alignment", G_TYPE_STRING, "au", NULL);
    if (!self->byte_stream) {
        GstBuffer *codec_data = gk_x264_avcc(sps, pps);
        gst_caps_set_simple(caps, "codec_data", GST_TYPE_BUFFER, codec_data, NULL);
        gst_buffer_unref(codec_data);
    }
    /* From the byte after the NAL header: profile_idc, constraint flags, level_idc. */
    gst_codec_utils_h264_caps_set_level_and_profile(caps, sps.data + 1, (guint)sps.size - 1);
    /* x264 writes the simplest profile the settings need (ultrafast's "high" is constrained
     * baseline): a stream of a lesser profile is one of the profile asked for, so say that
     * one, which downstream accepts (as x264enc does). */
    GstStructure *s = gst_caps_get_structure(caps, 0);
    const char *made = gst_structure_get_string(s, "profile");
    if (asked && gk_x264_profile_rank(made) >= 0 && gk_x264_profile_rank(made) <= gk_x264_profile_rank(asked))
        gst_structure_set(s, "profile", G_TYPE_STRING, asked, NULL);

    GstVideoCodecState *out = gst_video_encoder_set_output_state(GST_VIDEO_ENCODER(self), caps, self->input_state);
    GST_DEBUG_OBJECT(self, "output caps %" GST_PTR_FORMAT, out->caps);
    gst_video_codec_state_unref(out);

    GstTagList *tags = gst_tag_list_new(GST_TAG_ENCODER, "x264", GST_TAG_ENCODER_VERSION, (guint)X264_BUILD,
                                        GST_TAG_NOMINAL_BITRATE, (guint)self->param.rc.i_bitrate * 1000, NULL);
    gst_video_encoder_merge_tags(GST_VIDEO_ENCODER(self), tags, GST_TAG_MERGE_REPLACE);
    gst_tag_list_unref(tags);
    return TRUE;
}

/* How long a frame waits in x264 at most: its lookahead, frame threads and B-frames. */
static void set_latency(GkX264Enc *self) {
    const GstVideoInfo *info = &self->input_state->info;
    const int frames = x264_encoder_maximum_delayed_frames(self->x264);
    /* Without a frame rate, x264enc's guess of 25 frames a second, rather than none. */
    const gint fps_n = info->fps_n > 0 ? info->fps_n : 25, fps_d = info->fps_n > 0 ? info->fps_d : 1;
    const GstClockTime latency = gst_util_uint64_scale_ceil(GST_SECOND * (guint64)fps_d, (guint64)frames, (guint64)fps_n);
    GST_INFO_OBJECT(self, "x264 holds up to %d frames: latency %" GST_TIME_FORMAT, frames, GST_TIME_ARGS(latency));
    gst_video_encoder_set_latency(GST_VIDEO_ENCODER(self), latency, latency);
}

/* ---- encoding ---- */

/* Hands one encoded picture (x264's NAL units, `size` bytes from nals[0]) on downstream. */
static GstFlowReturn push_picture(GkX264Enc *self, x264_nal_t *nals, int size, const x264_picture_t *out) {
    GstVideoCodecFrame *frame = gst_video_encoder_get_frame(GST_VIDEO_ENCODER(self), GPOINTER_TO_INT(out->opaque));
    if (!frame) {
        /* Only after a flush could x264 return a frame GStreamer forgot, and flushing closes x264. */
        GST_WARNING_OBJECT(self, "x264 returned frame %d, which is no longer pending", GPOINTER_TO_INT(out->opaque));
        return GST_FLOW_OK;
    }
    frame->output_buffer = gst_video_encoder_allocate_output_buffer(GST_VIDEO_ENCODER(self), (gsize)size);
    GK_BUFFER_RECEIVED(frame->output_buffer);  /* from a pool, last written on another thread */
    gst_buffer_fill(frame->output_buffer, 0, nals[0].p_payload, (gsize)size);
    /* x264 gives each frame back its own PTS; its DTS is the PTS of a frame before, which the
     * base class's minimum PTS (start) keeps at or above zero with B-frames. */
    if (!self->untimed && out->i_dts >= 0) frame->dts = (GstClockTime)out->i_dts;
    if (out->b_keyframe) GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT(frame);
    GST_LOG_OBJECT(self, "frame %u: PTS %" GST_TIME_FORMAT " DTS %" GST_TIME_FORMAT "%s, %d bytes", frame->system_frame_number,
                   GST_TIME_ARGS(frame->pts), GST_TIME_ARGS(frame->dts), out->b_keyframe ? " keyframe" : "", size);
    GK_BUFFER_HANDED_ON(frame->output_buffer);
    return gst_video_encoder_finish_frame(GST_VIDEO_ENCODER(self), frame);
}

typedef struct {
    GstBuffer *to;
    GQuark memory, memory_reference;
} MetaCopy;

/* The metas finish_frame would copy to the encoded buffer: all but those about the raw
 * buffer's memory (its planes' layout), and never one holding on to other memory. */
static gboolean copy_meta(GstBuffer *from, GstMeta **meta, gpointer data) {
    const MetaCopy *c = data;
    const GstMetaInfo *info = (*meta)->info;
    if (!info->transform_func || gst_meta_api_type_has_tag(info->api, c->memory) ||
        gst_meta_api_type_has_tag(info->api, c->memory_reference))
        return TRUE;
    GstMetaTransformCopy copy = { FALSE, 0, (gsize)-1 };
    info->transform_func(c->to, *meta, from, _gst_meta_transform_copy, &copy);
    return TRUE;
}

/* What this element is for: once x264 holds its own copy of the picture, the raw frame goes
 * back to its pool (or is freed), and the codec frame keeps an empty buffer with the metas
 * that finish_frame copies to the encoded one. */
static void release_input(GstVideoCodecFrame *frame) {
    GstBuffer *metas = gst_buffer_new();
    MetaCopy c = { metas, g_quark_from_static_string(GST_META_TAG_MEMORY_STR),
                   g_quark_from_static_string(GST_META_TAG_MEMORY_REFERENCE_STR) };
    gst_buffer_foreach_meta(frame->input_buffer, copy_meta, &c);
    gk_buffer_drop(frame->input_buffer);
    frame->input_buffer = metas;
}

/* x264_encoder_encode with one frame (pic, mapped from `frame` as `raw`) or none (draining),
 * passing on what comes out. */
static GstFlowReturn encode(GkX264Enc *self, x264_picture_t *pic, GstVideoFrame *raw, GstVideoCodecFrame *frame) {
    x264_nal_t *nals;
    int count;
    x264_picture_t out;
    const int size = x264_encoder_encode(self->x264, &nals, &count, pic, &out);
    if (raw) {
        gst_video_frame_unmap(raw);
        release_input(frame);
    }
    if (size < 0) {
        char why[sizeof self->last_error];
        why_x264_failed(self, why, sizeof why);
        GST_ELEMENT_ERROR(self, STREAM, ENCODE, ("x264 failed to encode a frame: %s", why), ("x264_encoder_encode returned %d", size));
        return GST_FLOW_ERROR;
    }
    return size > 0 ? push_picture(self, nals, size, &out) : GST_FLOW_OK;
}

/* Takes every frame x264 still holds out of it. */
static GstFlowReturn drain(GkX264Enc *self) {
    GstFlowReturn ret = GST_FLOW_OK;
    while (ret == GST_FLOW_OK && self->x264 && x264_encoder_delayed_frames(self->x264) > 0) ret = encode(self, NULL, NULL, NULL);
    return ret;
}

static GstFlowReturn handle_frame(GstVideoEncoder *encoder, GstVideoCodecFrame *frame) {
    GkX264Enc *self = (GkX264Enc *)encoder;
    if (!self->input_state) {
        gst_video_codec_frame_unref(frame);
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (!self->x264 && !open_x264(self)) {  /* closed by a flush; x264 opened these before */
        post_open_error(self, &self->input_state->info, NULL);
        gst_video_codec_frame_unref(frame);
        return GST_FLOW_ERROR;
    }
    GK_OBJECT_LOCK(self);
    const gboolean rate_changed = self->bitrate_changed;
    self->bitrate_changed = FALSE;
    self->param.rc.i_bitrate = (int)self->bitrate;
    GK_OBJECT_UNLOCK(self);
    if (rate_changed && x264_encoder_reconfig(self->x264, &self->param) < 0)
        GST_WARNING_OBJECT(self, "x264 would not change the bit rate to %d kbit/s", self->param.rc.i_bitrate);

    GK_BUFFER_RECEIVED(frame->input_buffer);
    GstVideoFrame raw;
    if (!gst_video_frame_map(&raw, &self->input_state->info, frame->input_buffer, GST_MAP_READ)) {
        GST_ELEMENT_ERROR(self, STREAM, ENCODE, ("Cannot read a video frame to encode"),
                          ("frame %u does not map as %s", frame->system_frame_number, GST_VIDEO_INFO_NAME(&self->input_state->info)));
        gst_video_codec_frame_unref(frame);
        return GST_FLOW_ERROR;
    }
    x264_picture_t pic;
    x264_picture_init(&pic);
    pic.img.i_csp = self->param.i_csp;
    pic.img.i_plane = (int)GST_VIDEO_FRAME_N_PLANES(&raw);
    for (int i = 0; i < pic.img.i_plane; i++) {
        pic.img.plane[i] = GST_VIDEO_FRAME_PLANE_DATA(&raw, i);
        pic.img.i_stride[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&raw, i);
    }
    if (GST_CLOCK_TIME_IS_VALID(frame->pts)) {
        pic.i_pts = (int64_t)frame->pts;
    } else {
        /* x264 needs rising PTS to order frames; the output DTS is left to the base class. */
        self->untimed = TRUE;
        pic.i_pts = self->last_pts + 1;
    }
    self->last_pts = pic.i_pts;
    if (self->param.b_pic_struct) {
        const GstVideoFrameFlags f = raw.flags;
        if (!(f & GST_VIDEO_FRAME_FLAG_INTERLACED)) pic.i_pic_struct = PIC_STRUCT_PROGRESSIVE;
        else if (f & GST_VIDEO_FRAME_FLAG_RFF) pic.i_pic_struct = f & GST_VIDEO_FRAME_FLAG_TFF ? PIC_STRUCT_TOP_BOTTOM_TOP : PIC_STRUCT_BOTTOM_TOP_BOTTOM;
        else pic.i_pic_struct = f & GST_VIDEO_FRAME_FLAG_TFF ? PIC_STRUCT_TOP_BOTTOM : PIC_STRUCT_BOTTOM_TOP;
    }
    if (GST_VIDEO_CODEC_FRAME_IS_FORCE_KEYFRAME(frame)) {
        GST_DEBUG_OBJECT(self, "frame %u: keyframe asked for", frame->system_frame_number);
        pic.i_type = X264_TYPE_IDR;
    }
    /* The frame number comes back with the encoded picture (gst_video_encoder_get_frame). */
    pic.opaque = GINT_TO_POINTER(frame->system_frame_number);

    GstFlowReturn ret = encode(self, &pic, &raw, frame);
    /* The base class keeps the frame in its list until x264 returns it; this was our reference. */
    gst_video_codec_frame_unref(frame);
    return ret;
}

static GstFlowReturn finish(GstVideoEncoder *encoder) {
    return drain((GkX264Enc *)encoder);
}

static gboolean set_format(GstVideoEncoder *encoder, GstVideoCodecState *state) {
    GkX264Enc *self = (GkX264Enc *)encoder;
    if (self->x264 && self->input_state && gst_video_info_is_equal(&self->input_state->info, &state->info)) {
        /* The same frames (caps that differ in a field the encoder does not read). */
        gst_video_codec_state_unref(self->input_state);
        self->input_state = gst_video_codec_state_ref(state);
        return TRUE;
    }
    if (self->x264) {
        /* Frames of the old format leave, under the old caps, before the encoder changes. */
        drain(self);
        close_x264(self);
    }
    if (self->input_state) gst_video_codec_state_unref(self->input_state);
    self->input_state = gst_video_codec_state_ref(state);
    self->untimed = FALSE;
    self->last_pts = -1;

    /* What downstream takes: its profile, and avc or byte-stream. Downstream that takes
     * anything (a filesink) gets a byte stream, as from x264enc. */
    GstCaps *templ = gst_pad_get_pad_template_caps(GST_VIDEO_ENCODER_SRC_PAD(encoder));
    GstCaps *allowed = gst_pad_get_allowed_caps(GST_VIDEO_ENCODER_SRC_PAD(encoder));
    char *asked = NULL;
    if (!allowed || gst_caps_is_any(allowed) || gst_caps_is_equal(allowed, templ)) {
        self->byte_stream = TRUE;
    } else if (gst_caps_is_empty(allowed)) {
        GST_WARNING_OBJECT(self, "downstream takes none of the H.264 this element writes");
        gst_caps_unref(allowed);
        gst_caps_unref(templ);
        return FALSE;
    } else {
        allowed = gst_caps_fixate(allowed);
        const GstStructure *s = gst_caps_get_structure(allowed, 0);
        const char *format = gst_structure_get_string(s, "stream-format");
        self->byte_stream = format && !strcmp(format, "byte-stream");
        asked = g_strdup(gst_structure_get_string(s, "profile"));
    }
    if (allowed) gst_caps_unref(allowed);
    gst_caps_unref(templ);

    GK_OBJECT_LOCK(self);
    const gboolean tuned = (self->tune & GK_X264_TUNE_ZEROLATENCY) != 0, when_live = self->live_zerolatency;
    GK_OBJECT_UNLOCK(self);
    self->zerolatency = tuned || (when_live && upstream_is_live(self));
    GST_INFO_OBJECT(self, "tune %s", self->zerolatency ? "zerolatency" : "none");

    const char *profile = gk_x264_profile_for(asked);
    gboolean ok = make_param(self, &state->info, profile, &self->param) && open_x264(self);
    if (!ok) {
        post_open_error(self, &state->info, profile);
    } else if (!set_output_caps(self, asked)) {
        close_x264(self);
        ok = FALSE;
    } else {
        set_latency(self);
    }
    g_free(asked);
    return ok;
}

static gboolean start(GstVideoEncoder *encoder) {
    /* x264's first DTS lie before the first PTS by the B-frame delay, and GStreamer's
     * timestamps cannot be negative: every time is shifted by 1000 hours (the segment too, so
     * running time is unchanged), as x264enc does. */
    gst_video_encoder_set_min_pts(encoder, GST_SECOND * 60 * 60 * 1000);
    return TRUE;
}

static gboolean stop(GstVideoEncoder *encoder) {
    GkX264Enc *self = (GkX264Enc *)encoder;
    close_x264(self);
    if (self->input_state) gst_video_codec_state_unref(self->input_state);
    self->input_state = NULL;
    return TRUE;
}

/* A seek: x264's pending frames are thrown away with it (the base class drops its own list);
 * the next frame opens it again, with the same parameters, so the caps still hold. */
static gboolean flush(GstVideoEncoder *encoder) {
    GkX264Enc *self = (GkX264Enc *)encoder;
    close_x264(self);
    self->untimed = FALSE;
    self->last_pts = -1;
    return TRUE;
}

/* Upstream may hand frames with padded rows (GstVideoMeta): they are read by their strides. */
static gboolean propose_allocation(GstVideoEncoder *encoder, GstQuery *query) {
    gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    return GST_VIDEO_ENCODER_CLASS(gk_x264_enc_parent_class)->propose_allocation(encoder, query);
}

/* ---- properties ---- */

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkX264Enc *self = (GkX264Enc *)object;
    GK_OBJECT_LOCK(self);
    switch (id) {
    case PROP_BITRATE:
        self->bitrate = g_value_get_uint(value);
        self->bitrate_changed = TRUE;  /* applied to an open encoder at its next frame */
        break;
    case PROP_KEY_INT_MAX: self->key_int_max = g_value_get_uint(value); break;
    case PROP_SPEED_PRESET: self->preset = g_value_get_enum(value); break;
    case PROP_BFRAMES: self->bframes = g_value_get_int(value); break;
    case PROP_THREADS: self->threads = g_value_get_uint(value); break;
    case PROP_TUNE: self->tune = g_value_get_flags(value); break;
    case PROP_LIVE_ZEROLATENCY: self->live_zerolatency = g_value_get_boolean(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GK_OBJECT_UNLOCK(self);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkX264Enc *self = (GkX264Enc *)object;
    GK_OBJECT_LOCK(self);
    switch (id) {
    case PROP_BITRATE: g_value_set_uint(value, self->bitrate); break;
    case PROP_KEY_INT_MAX: g_value_set_uint(value, self->key_int_max); break;
    case PROP_SPEED_PRESET: g_value_set_enum(value, self->preset); break;
    case PROP_BFRAMES: g_value_set_int(value, self->bframes); break;
    case PROP_THREADS: g_value_set_uint(value, self->threads); break;
    case PROP_TUNE: g_value_set_flags(value, self->tune); break;
    case PROP_LIVE_ZEROLATENCY: g_value_set_boolean(value, self->live_zerolatency); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    GK_OBJECT_UNLOCK(self);
}

static void gk_x264_enc_class_init(GkX264EncClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstVideoEncoderClass *video = GST_VIDEO_ENCODER_CLASS(klass);
    GST_DEBUG_CATEGORY_INIT(gk_x264_enc_debug, "gkx264enc", 0, "GraphKit's H.264 encoder (libx264)");

    object->set_property = set_property;
    object->get_property = get_property;
    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    /* The names, units and ranges of x264enc's properties of the same names. */
    g_object_class_install_property(object, PROP_BITRATE,
        g_param_spec_uint("bitrate", "Bitrate", "Average bit rate in kbit/s (x264's ABR, no VBV)", 1, 2048 * 1024,
                          DEFAULT_BITRATE, rw | GST_PARAM_MUTABLE_PLAYING));
    g_object_class_install_property(object, PROP_KEY_INT_MAX,
        g_param_spec_uint("key-int-max", "Key-frame maximal interval",
                          "At most this many frames between keyframes (0: ten seconds' worth)", 0, G_MAXINT, 0,
                          rw | GST_PARAM_MUTABLE_READY));
    g_object_class_install_property(object, PROP_SPEED_PRESET,
        g_param_spec_enum("speed-preset", "Speed preset", "x264's preset: speed against compression", gk_x264_preset_get_type(),
                          DEFAULT_PRESET, rw | GST_PARAM_MUTABLE_READY));
    g_object_class_install_property(object, PROP_BFRAMES,
        g_param_spec_int("bframes", "B-Frames", "B-frames between I and P (-1: the preset's)", -1, 16, -1,
                         rw | GST_PARAM_MUTABLE_READY));
    g_object_class_install_property(object, PROP_THREADS,
        g_param_spec_uint("threads", "Threads", "Encoding threads (0: x264 chooses from the CPUs)", 0, 128, 0,
                          rw | GST_PARAM_MUTABLE_READY));
    g_object_class_install_property(object, PROP_TUNE,
        g_param_spec_flags("tune", "Content tuning", "x264's tune (x264enc's values; zerolatency is the one taken)",
                           gk_x264_tune_get_type(), 0, rw | GST_PARAM_MUTABLE_READY));
    g_object_class_install_property(object, PROP_LIVE_ZEROLATENCY,
        g_param_spec_boolean("live-zerolatency", "Zero latency when live",
                             "Tune for zero latency when upstream is live (answers the latency query so), as a "
                             "camera or a network stream is: a frame is not held for a lookahead there",
                             FALSE, rw | GST_PARAM_MUTABLE_READY));

    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit H.264 encoder (x264)", "Codec/Encoder/Video",
                                          "H.264 through libx264, each raw frame released as soon as x264 has copied it",
                                          "GraphKit");
    video->start = start;
    video->stop = stop;
    video->flush = flush;
    video->set_format = set_format;
    video->handle_frame = handle_frame;
    video->finish = finish;
    video->propose_allocation = propose_allocation;
}

static void gk_x264_enc_init(GkX264Enc *self) {
    self->bitrate = DEFAULT_BITRATE;
    self->preset = DEFAULT_PRESET;
    self->bframes = -1;
    self->last_pts = -1;
}

/* Rank none: only a pipeline that names it uses it (encode.h264 does); autoplugging
 * (encodebin) keeps choosing x264enc. */
GST_ELEMENT_REGISTER_DEFINE(gkx264enc, "gkx264enc", GST_RANK_NONE, gk_x264_enc_get_type())
