#ifndef GK_AVDEC_LIBAV_H
#define GK_AVDEC_LIBAV_H
/*
 * libavcodec, loaded when the first gkavdec starts rather than when GraphKit loads.
 *
 * GraphKit's elements are linked into every process that uses GraphKit; linking libavcodec
 * there would map it and its codec libraries (libx265, libdav1d, libvpx, ...) in every graphctl
 * run, a WAV's loudness or a batch of metadata reads included. So gkavdec calls libavcodec
 * through this table, which gk_av_load fills from the libavcodec this build was compiled for
 * (its headers' major version: the same file gstreamer1.0-libav uses). The signatures come from
 * the headers themselves (__typeof__), so a call through the table is checked as a direct one.
 */
#include <stdarg.h>
#include <libavcodec/avcodec.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>

#define GK_AV_FUNCTIONS(X) \
    X(avcodec_find_decoder) X(avcodec_alloc_context3) X(avcodec_open2) X(avcodec_free_context) \
    X(avcodec_send_packet) X(avcodec_receive_frame) X(avcodec_flush_buffers) \
    X(avcodec_default_get_buffer2) X(avcodec_align_dimensions2) X(av_packet_alloc) X(av_packet_free) \
    X(av_frame_alloc) X(av_frame_free) X(av_frame_unref) X(av_mallocz) X(av_strerror) \
    X(av_log_get_level) X(av_log_set_callback) X(av_get_pix_fmt_name) X(av_pix_fmt_desc_get) \
    X(av_image_fill_linesizes) X(av_image_fill_plane_sizes) X(av_image_get_linesize) X(av_image_copy_plane) \
    X(av_buffer_pool_init) X(av_buffer_pool_get) X(av_buffer_pool_uninit) X(av_buffer_ref) X(av_buffer_unref) \
    X(av_buffer_allocz)

typedef struct {
#define GK_AV_MEMBER(name) __typeof__(&name) name;
    GK_AV_FUNCTIONS(GK_AV_MEMBER)
#undef GK_AV_MEMBER
} GkAv;

/* The loaded library's functions: filled once gk_av_load has returned NULL, never before. */
extern GkAv gk_av;

/* Loads libavcodec once for the process (thread-safe; later calls return the first answer) and
 * sends its log to `log` (libav's callback is process-wide). NULL when loaded, else why not: a
 * sentence naming the file, kept for the process. */
const char *gk_av_load(void (*log)(void *, int, const char *, va_list));

#endif
