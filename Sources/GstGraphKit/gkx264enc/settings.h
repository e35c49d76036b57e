/*
 * gkx264enc's settings (settings.c): x264's parameters, the profiles downstream names, the
 * avcC record. No element state.
 */
#ifndef GK_X264_SETTINGS_H
#define GK_X264_SETTINGS_H
#include <stdarg.h>
#include <stdint.h>  /* x264.h uses its types without including it */
#include <gst/gst.h>
#include <gst/video/video.h>
#include <x264.h>

/* What the element's properties say, read once under its lock, and where x264 logs. */
typedef struct {
    guint bitrate;      /* kbit/s */
    guint key_int_max;  /* 0: ten seconds of frames (x264enc's) */
    gint preset;        /* index into x264_preset_names */
    gint bframes;       /* -1: the preset's */
    guint threads;      /* 0: x264 chooses */
    gboolean zerolatency; /* x264's tune: no lookahead, no frame threads, no B-frames unless asked */
    gboolean byte_stream;
    void (*log)(void *log_private, int level, const char *format, va_list args);
    void *log_private;
    int log_level;
} GkX264Settings;

/* Fills `p` for `info` and `profile` (x264's name, or NULL); FALSE with the reason in `why`
 * when x264 refuses. */
gboolean gk_x264_make_param(const GkX264Settings *s, const GstVideoInfo *info, const char *profile, x264_param_t *p,
                            char *why, gsize why_size);

/* x264's name for the profile downstream asks for; NULL when it names none. */
const char *gk_x264_profile_for(const char *caps_profile);

/* Each profile decodes every stream of the ones ranked below it; -1 for none of them. */
int gk_x264_profile_rank(const char *profile);

typedef struct {
    const uint8_t *data;  /* the NAL unit, from its header byte on */
    int size;
} GkNal;

/* The properties' types: speed-preset (x264enc's enum: the same nicks, so speed-preset=veryfast
 * means the same to both) and tune (x264enc's flags, of which x264 here takes zerolatency: the same
 * value and nick). */
GType gk_x264_preset_get_type(void);
GType gk_x264_tune_get_type(void);
#define GK_X264_TUNE_ZEROLATENCY 0x4

/* The AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.2.4.1) with one SPS and one PPS. */
GstBuffer *gk_x264_avcc(GkNal sps, GkNal pps);
#endif
