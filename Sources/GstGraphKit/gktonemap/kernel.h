/*
 * gktonemap's kernel: HDR (HLG or PQ, BT.2020) Y'CbCr 4:2:0 to SDR BT.709 I420, through lookup
 * tables made once per stream (kernel.c says the method). No GStreamer: the element
 * (gktonemap.c) reads the caps and maps the frames.
 */
#ifndef GK_TONEMAP_KERNEL_H
#define GK_TONEMAP_KERNEL_H
#include <stdint.h>

typedef enum { GK_TONEMAP_HLG, GK_TONEMAP_PQ } gk_tonemap_transfer;

/* How the input's samples are laid out. */
typedef enum {
    GK_TONEMAP_I420,        /* 8-bit planar */
    GK_TONEMAP_NV12,        /* 8-bit, Cb Cr interleaved */
    GK_TONEMAP_I420_10LE,   /* 10-bit planar, in the low bits of 16-bit words */
    GK_TONEMAP_P010_10LE,   /* 10-bit, Cb Cr interleaved, in the high bits of 16-bit words */
} gk_tonemap_layout;

typedef struct {
    gk_tonemap_transfer transfer;
    double kr, kb;           /* the input's Y'CbCr matrix */
    int full_range;          /* the input's range (the output is always limited) */
    int bt2020_primaries;    /* else BT.709 primaries: no gamut mapping */
    double reference_white;  /* nits that become SDR white (BT.2408: 203) */
    double source_peak;      /* PQ: the brightest nits in the source (the mastering display's peak) */
    double knee;             /* the fraction of reference white where the highlights' roll-off starts */
} gk_tonemap_settings;

#define GK_TONEMAP_SIGNAL_SIZE 4096
/* tone curve: 2^-24 to 2^7 (31 octaves), 256 entries an octave, and 2^7 */
#define GK_TONEMAP_GAIN_LOWEST (-24)
#define GK_TONEMAP_GAIN_BITS 8
#define GK_TONEMAP_GAIN_SIZE (31 * 256 + 1)
/* output: 2^-22 to 1 (22 octaves), 1024 entries an octave, and 1 itself */
#define GK_TONEMAP_OETF_LOWEST (-22)
#define GK_TONEMAP_OETF_BITS 10
#define GK_TONEMAP_OETF_SIZE (22 * 1024 + 1)

typedef struct {
    gk_tonemap_layout layout;
    int bits;
    /* code → normalised Y' (0..1) and Cb, Cr (-0.5..0.5) */
    float y_offset, y_scale, c_offset, c_scale;
    /* R' = Y' + cr_r Cr; G' = Y' + cb_g Cb + cr_g Cr; B' = Y' + cb_b Cb */
    float cr_r, cb_g, cr_g, cb_b;
    /* the input's luminance weights on linear light */
    float lr, lg, lb;
    /* linear BT.2020 (or BT.709) RGB → linear BT.709 RGB */
    float m[9];
    float signal_to_linear[GK_TONEMAP_SIGNAL_SIZE];  /* signal 0..1 → linear light (see kernel.c) */
    float tone[GK_TONEMAP_GAIN_SIZE];                /* luminance → SDR luminance (the tone curve), by octaves */
    float oetf[GK_TONEMAP_OETF_SIZE];                /* SDR light 0..1 → R'G'B' 0..1 (BT.1886), by octaves */
    /* rows of the frame as floats (kernel.c's gk_tonemap_frame) */
    float *scratch;
    int scratch_width;
} gk_tonemap_plan;

/* Fills the tables for `settings` and input samples laid out as `layout`, for frames up to
 * `width` wide. Returns 0 when the scratch rows cannot be allocated. */
int gk_tonemap_plan_make(gk_tonemap_plan *plan, const gk_tonemap_settings *settings, gk_tonemap_layout layout, int width);
void gk_tonemap_plan_clear(gk_tonemap_plan *plan);

/* One frame: `src[0]` the luma plane, `src[1]` (and `src[2]` for planar layouts) the chroma;
 * strides in bytes. Output I420, limited range BT.709. */
void gk_tonemap_frame(gk_tonemap_plan *plan, const uint8_t *const src[3], const int src_stride[3], int width, int height,
                      uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride);

/* The tone curve alone, on linear light relative to reference white (1 = SDR white), for tests
 * and docs: identity up to `knee`, then Reinhard's extended operator up to `peak` (which becomes
 * 1), 1 above. */
double gk_tonemap_rolloff(double x, double knee, double peak);
#endif
