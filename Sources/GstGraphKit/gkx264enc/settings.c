/*
 * gkx264enc's settings: x264's parameters for the element's properties and a stream's format
 * (as x264enc and ffmpeg's libx264 set them for the same settings), the profiles downstream
 * names, and the avcC record of x264's headers. No element state: gkx264enc.c reads its
 * properties under its lock and hands them here.
 */
#include "settings.h"

#include <string.h>

/* x264's name for the profile downstream asks for; NULL when it names none. */
const char *gk_x264_profile_for(const char *caps_profile) {
    if (!caps_profile) return NULL;
    if (!strcmp(caps_profile, "constrained-baseline") || !strcmp(caps_profile, "baseline")) return "baseline";
    if (!strcmp(caps_profile, "main")) return "main";
    if (!strcmp(caps_profile, "high")) return "high";
    return NULL;
}

/* Each profile decodes every stream of the ones ranked below it. */
int gk_x264_profile_rank(const char *profile) {
    static const char *const order[] = { "constrained-baseline", "baseline", "main", "high" };
    for (int i = 0; profile && i < (int)G_N_ELEMENTS(order); i++)
        if (!strcmp(profile, order[i])) return i;
    return -1;
}

gboolean gk_x264_make_param(const GkX264Settings *s, const GstVideoInfo *info, const char *profile, x264_param_t *p,
                            char *why, gsize why_size) {
    const guint bitrate = s->bitrate, key_int_max = s->key_int_max, threads = s->threads;
    const gint preset = s->preset, bframes = s->bframes;
    /* The tune before anything else is set, as x264's command line applies it: a B-frame count
     * given (bframes >= 0) is still applied after it. */
    if (x264_param_default_preset(p, x264_preset_names[preset], s->zerolatency ? "zerolatency" : NULL) < 0) {
        g_snprintf(why, why_size, "x264 has no preset \"%s\"%s", x264_preset_names[preset], s->zerolatency ? " with tune zerolatency" : "");
        return FALSE;
    }
    /* The preset resets the log callback: set it after. */
    p->pf_log = s->log;
    p->p_log_private = s->log_private;
    p->i_log_level = s->log_level;

    p->i_threads = threads ? (int)threads : X264_THREADS_AUTO;
    p->i_csp = GST_VIDEO_INFO_FORMAT(info) == GST_VIDEO_FORMAT_NV12 ? X264_CSP_NV12 : X264_CSP_I420;
    p->i_width = GST_VIDEO_INFO_WIDTH(info);
    p->i_height = GST_VIDEO_INFO_HEIGHT(info);
    const gboolean constant_rate = info->fps_n > 0 && info->fps_d > 0;
    if (constant_rate) {
        /* Rate control by frame rate: for constant-rate input the same as ffmpeg's timestamps
         * in 1/fps (x264 then writes the same VUI timing), and the same as x264enc. */
        p->b_vfr_input = 0;
        p->i_fps_num = (uint32_t)info->fps_n;
        p->i_fps_den = (uint32_t)info->fps_d;
    } else {
        p->b_vfr_input = 1;
    }
    /* PTS go to x264 in nanoseconds, as GStreamer has them. */
    p->i_timebase_num = 1;
    p->i_timebase_den = GST_SECOND;
    if (key_int_max) p->i_keyint_max = (int)key_int_max;
    else if (constant_rate) p->i_keyint_max = (int)MIN(G_MAXINT / 2, 10 * info->fps_n / info->fps_d);
    if (bframes >= 0) p->i_bframe = bframes;

    /* An average bit rate without a VBV (ffmpeg's -b:v, x264enc's with vbv-buf-capacity=0). */
    p->rc.i_rc_method = X264_RC_ABR;
    p->rc.i_bitrate = (int)bitrate;
    p->rc.i_vbv_max_bitrate = 0;
    p->rc.i_vbv_buffer_size = 0;
    p->analyse.b_psnr = 0;
    p->analyse.b_ssim = 0;

    if (info->par_n > 0 && info->par_d > 0) {
        p->vui.i_sar_width = info->par_n;
        p->vui.i_sar_height = info->par_d;
    }
    /* The colour the frames are in (gkrgbtoi420 writes down the matrix it used), so that a
     * player converts them back with the same one. vui.i_vidformat (PAL, NTSC) is left
     * unspecified as ffmpeg leaves it: x264enc guesses it from the frame size, but it only
     * describes an analogue source, which GraphKit does not know. */
    p->vui.i_colorprim = (int)gst_video_color_primaries_to_iso(info->colorimetry.primaries);
    p->vui.i_transfer = (int)gst_video_transfer_function_to_iso(info->colorimetry.transfer);
    p->vui.i_colmatrix = (int)gst_video_color_matrix_to_iso(info->colorimetry.matrix);
    p->vui.b_fullrange = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
    switch (info->chroma_site) {
    case GST_VIDEO_CHROMA_SITE_JPEG: p->vui.i_chroma_loc = 1; break;
    case GST_VIDEO_CHROMA_SITE_DV: p->vui.i_chroma_loc = 2; break;
    case GST_VIDEO_CHROMA_SITE_V_COSITED: p->vui.i_chroma_loc = 3; break;
    default: p->vui.i_chroma_loc = 0; break;  /* MPEG-2's, H.264's default: not written */
    }

    if (GST_VIDEO_INFO_IS_INTERLACED(info)) {
        p->b_interlaced = 1;
        /* An unknown order is taken as x264's default, top field first (x264enc takes bottom). */
        p->b_tff = GST_VIDEO_INFO_FIELD_ORDER(info) != GST_VIDEO_FIELD_ORDER_BOTTOM_FIELD_FIRST;
        /* Mixed: each frame says whether it is interlaced (handle_frame). */
        p->b_pic_struct = GST_VIDEO_INFO_INTERLACE_MODE(info) == GST_VIDEO_INTERLACE_MODE_MIXED;
    }

    /* x264 writes SPS and PPS before every IDR frame (its default, and x264enc's): a byte
     * stream needs them, and an avc stream read from any keyframe on (sink.app) finds them;
     * mp4mux takes them from codec_data as well. ffmpeg writes them to the MP4's header only. */
    p->b_repeat_headers = 1;
    p->b_annexb = s->byte_stream;
    p->b_aud = 0;

    if (profile && x264_param_apply_profile(p, profile) < 0) {
        /* x264 says why on stderr only, and only its own option names. */
        g_snprintf(why, why_size, "these settings do not fit the %s profile", profile);
        return FALSE;
    }
    return TRUE;
}

/* The AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.2.4.1) for mp4mux, with the one SPS
 * and PPS x264 writes. */
GstBuffer *gk_x264_avcc(GkNal sps, GkNal pps) {
    const gsize size = 5 + 1 + 2 + (gsize)sps.size + 1 + 2 + (gsize)pps.size;
    guint8 *avcc = g_malloc(size), *w = avcc;
    *w++ = 1;             /* configurationVersion */
    *w++ = sps.data[1];   /* AVCProfileIndication */
    *w++ = sps.data[2];   /* profile_compatibility */
    *w++ = sps.data[3];   /* AVCLevelIndication */
    *w++ = 0xfc | 3;      /* lengthSizeMinusOne: x264 writes 4-byte lengths */
    *w++ = 0xe0 | 1;      /* numOfSequenceParameterSets */
    GST_WRITE_UINT16_BE(w, (guint16)sps.size);
    memcpy(w + 2, sps.data, (size_t)sps.size);
    w += 2 + sps.size;
    *w++ = 1;             /* numOfPictureParameterSets */
    GST_WRITE_UINT16_BE(w, (guint16)pps.size);
    memcpy(w + 2, pps.data, (size_t)pps.size);
    return gst_buffer_new_wrapped(avcc, size);
}

/* ---- the properties' types ---- */

/* x264enc's enum has the same nicks, so speed-preset=veryfast means the same to both. */
GType gk_x264_preset_get_type(void) {
    static gsize type = 0;
    if (g_once_init_enter(&type)) {
        static GEnumValue values[G_N_ELEMENTS(x264_preset_names)];
        for (guint i = 0; x264_preset_names[i]; i++) {
            values[i].value = (gint)i;
            values[i].value_name = x264_preset_names[i];
            values[i].value_nick = x264_preset_names[i];
        }
        g_once_init_leave(&type, g_enum_register_static("GkX264EncPreset", values));
    }
    return (GType)type;
}

GType gk_x264_tune_get_type(void) {
    static gsize type = 0;
    if (g_once_init_enter(&type)) {
        static const GFlagsValue values[] = {
            { GK_X264_TUNE_ZEROLATENCY, "No lookahead, no frame threads (slices instead), no B-frames: each frame out as it is encoded", "zerolatency" },
            { 0, NULL, NULL },
        };
        g_once_init_leave(&type, g_flags_register_static("GkX264EncTune", values));
    }
    return (GType)type;
}
