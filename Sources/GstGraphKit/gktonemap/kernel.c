/*
 * gktonemap's kernel (kernel.h). Per pixel, in single-precision float with tables:
 *
 *   Y'CbCr (the input's matrix and range) → non-linear R'G'B'
 *   → linear light, a 4096-entry table on the signal:
 *       HLG: scene light E, BT.2100's inverse OETF;
 *       PQ:  display light in units of reference white, BT.2100's EOTF (ST 2084) / reference white
 *   → one gain per pixel from its luminance Y: the tone curve below at Y (a table by octaves of Y,
 *     256 entries each, linear between entries so that the result stays monotonic) divided by Y:
 *       HLG: BT.2100's OOTF for the nominal 1000-nit display (system gamma 1.2,
 *            Fd = 1000 · Ys^0.2 · E), then divided by reference white (BT.2408: 203 nits = SDR white);
 *       both: the highlights' roll-off (gk_tonemap_rolloff) on that luminance, from the knee up to
 *            the source's peak (PQ: the mastering display's, else the element's property; HLG:
 *            the nominal 1000 nits), so that the peak becomes SDR white and the highlights keep
 *            steps rather than clipping at reference white. SDR's top 8 codes hold all of them:
 *            with the knee at 0.9, a 1000-nit source's 203, 300, 400 nits give Y' 230, 234, 234
 *            and 600 up 235 (the harness test's ramp); a lower knee spreads them and dims white.
 *       The gain scales R, G and B alike, so hue and saturation stay as they were.
 *   → BT.2020 to BT.709 primaries (BT.2087's 3x3 matrix, in linear light)
 *   → a colour outside BT.709 (a channel below 0 or above 1) moved toward the grey of its own
 *     luminance just far enough to fit, rather than clipped per channel: hue and luminance kept
 *     (a per-channel clip turns saturated greens yellow). Colours inside are left exactly as they
 *     are, so SDR content carried in BT.2020 comes back unchanged.
 *   → the SDR display's signal: BT.1886's EOTF inverted (L^(1/2.4), a 16384-entry table), so that
 *     the SDR picture on an SDR display gives the light the HDR one gives, scaled to reference
 *     white (display light, as BT.2408 converts and as zimg/ffmpeg's zscale does the other way)
 *   → BT.709 Y'CbCr, limited range; Y' per pixel, Cb Cr per 2x2 block from the block's mean R'G'B'
 *     (as gkrgbtoi420 does).
 *
 * Why not BT.2390's EETF for PQ: its knee start follows from the target's peak
 * (KS = 1.5 · maxLum − 0.5 in PQ units, the highest at which its spline stays monotonic). Into a
 * 203-nit SDR white from a 1000-nit source that is 88 nits, which takes SDR white down to 159
 * nits (Y' 214 of 235, computed): every SDR-graded picture in an HDR10 file would come out dim. Reinhard's
 * extended operator (Reinhard et al. 2002, eq. 4: L (1 + L / Lwhite²) / (1 + L)) above a knee
 * keeps everything below the knee exact, rolls the rest off smoothly (slope 1 at the knee) and
 * puts the source's peak at SDR white.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel.h"

/* The tables' indices, all computed in vector registers (the loops below are vectorised, their
 * table reads become gathers):
 *   signal: v · 4095, rounded, within the table;
 *   gain and output: a float's exponent and its top mantissa bits (GK_TONEMAP_*_BITS a power of
 *   two), so that steps are relative, as fine near black as near white. */
static inline int32_t signal_index(float v) {
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return (int32_t)(v * (float)(GK_TONEMAP_SIGNAL_SIZE - 1) + 0.5f);
}
static inline uint32_t bits_of(float v) {
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}
static inline float float_of(uint32_t b) {
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}
/* Entry i of a table of `bits` mantissa bits per octave from 2^lowest: [2^lowest, ...]. */
static inline int32_t log_index(float v, int lowest, int bits, int32_t last) {
    const float low = float_of((uint32_t)(127 + lowest) << 23);
    v = v < low ? low : v;
    int32_t i = (int32_t)(bits_of(v) >> (23 - bits)) - ((127 + lowest) << bits);
    return i > last ? last : i;
}
/* Where entry i's range starts. */
static double log_start(int32_t i, int lowest, int bits) {
    return float_of((uint32_t)(i + ((127 + lowest) << bits)) << (23 - bits));
}
/* The middle of entry i's range, where its value is computed. */
static double log_entry(int32_t i, int lowest, int bits) {
    const uint32_t b = ((uint32_t)(i + ((127 + lowest) << bits)) << (23 - bits)) | (1u << (22 - bits));
    return float_of(b);
}

double gk_tonemap_rolloff(double x, double knee, double peak) {
    if (x <= 0) return 0;
    if (peak <= 1) return x < 1 ? x : 1;  /* nothing above SDR white to make room for */
    if (x <= knee) return x;
    if (x >= peak) return 1;
    const double u = (x - knee) / (1 - knee), w = (peak - knee) / (1 - knee);
    return knee + (1 - knee) * u * (1 + u / (w * w)) / (1 + u);
}

static double hlg_inverse_oetf(double e) {
    const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a);
    if (e <= 0) return 0;
    if (e <= 0.5) return e * e / 3;
    return (exp((e - c) / a) + b) / 12;
}

static double pq_eotf_nits(double e) {
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128;
    const double c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
    if (e <= 0) return 0;
    const double p = pow(e, 1 / m2);
    const double num = p - c1 > 0 ? p - c1 : 0;
    return 10000 * pow(num / (c2 - c3 * p), 1 / m1);
}

/* BT.1886's EOTF inverted (a black level of 0): the SDR display's light to its signal. */
static double bt1886_inverse_eotf(double l) { return l <= 0 ? 0 : pow(l, 1 / 2.4); }

void gk_tonemap_plan_clear(gk_tonemap_plan *plan) {
    free(plan->scratch);
    plan->scratch = NULL;
    plan->scratch_width = 0;
}

int gk_tonemap_plan_make(gk_tonemap_plan *plan, const gk_tonemap_settings *s, gk_tonemap_layout layout, int width) {
    plan->layout = layout;
    plan->bits = layout == GK_TONEMAP_I420_10LE || layout == GK_TONEMAP_P010_10LE ? 10 : 8;
    const double max = (1 << plan->bits) - 1, unit = 1 << (plan->bits - 8);
    plan->y_offset = s->full_range ? 0 : (float)(16 * unit);
    plan->y_scale = (float)(1 / (s->full_range ? max : 219 * unit));
    plan->c_offset = (float)(128 * unit);
    plan->c_scale = (float)(1 / (s->full_range ? max : 224 * unit));
    const double kr = s->kr, kb = s->kb, kg = 1 - kr - kb;
    plan->cr_r = (float)(2 * (1 - kr));
    plan->cb_b = (float)(2 * (1 - kb));
    plan->cb_g = (float)(-2 * (1 - kb) * kb / kg);
    plan->cr_g = (float)(-2 * (1 - kr) * kr / kg);

    /* Luminance of the input's linear RGB: its primaries' (BT.2020 or BT.709). */
    const double lr = s->bt2020_primaries ? 0.2627 : 0.2126, lb = s->bt2020_primaries ? 0.0593 : 0.0722;
    plan->lr = (float)lr;
    plan->lg = (float)(1 - lr - lb);
    plan->lb = (float)lb;
    /* BT.2087's BT.2020 → BT.709 matrix on linear light; identity for BT.709 primaries. */
    static const double to709[9] = { 1.6605, -0.5876, -0.0728, -0.1246, 1.1329, -0.0083, -0.0182, -0.1006, 1.1187 };
    static const double same[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
    for (int i = 0; i < 9; i++) plan->m[i] = (float)(s->bt2020_primaries ? to709[i] : same[i]);

    const double white = s->reference_white;
    const double hlg_peak = 1000, hlg_gamma = 1.2;  /* BT.2100's nominal display: gamma 1.2 at 1000 nits */
    for (int i = 0; i < GK_TONEMAP_SIGNAL_SIZE; i++) {
        const double e = (double)i / (GK_TONEMAP_SIGNAL_SIZE - 1);
        plan->signal_to_linear[i] = (float)(s->transfer == GK_TONEMAP_HLG ? hlg_inverse_oetf(e) : pq_eotf_nits(e) / white);
    }
    /* The gain table covers the luminances the signal table gives (HLG: up to 1; PQ: up to
     * 10000 nits / reference white < 2^7), by octaves. */
    const double peak = s->transfer == GK_TONEMAP_HLG ? hlg_peak / white : s->source_peak / white;
    /* The SDR luminance (SDR white 1) for the input's linear luminance at the start of each entry. */
    for (int i = 0; i < GK_TONEMAP_GAIN_SIZE; i++) {
        const double y = log_start(i, GK_TONEMAP_GAIN_LOWEST, GK_TONEMAP_GAIN_BITS);
        const double display = s->transfer == GK_TONEMAP_HLG ? hlg_peak * pow(y, hlg_gamma) / white : y;
        plan->tone[i] = (float)gk_tonemap_rolloff(display, s->knee, peak);
    }
    /* By octaves from 2^-22 (0.08 of a code at most; entry 0, everything darker, is black) up to
     * 1 (the last entry); steps of 0.1% in light, 0.1 of a code at white. */
    for (int i = 0; i < GK_TONEMAP_OETF_SIZE; i++) plan->oetf[i] = (float)bt1886_inverse_eotf(log_entry(i, GK_TONEMAP_OETF_LOWEST, GK_TONEMAP_OETF_BITS));
    plan->oetf[0] = 0;
    plan->oetf[GK_TONEMAP_OETF_SIZE - 1] = 1;

    if (plan->scratch_width < width) {
        free(plan->scratch);
        /* two luma rows, Cb and Cr, Cb and Cr per pixel, two rows of R'G'B', each width + 2
         * (an odd width's last pixel twice) */
        plan->scratch = malloc(sizeof(float) * 12 * (size_t)(width + 2));
        if (!plan->scratch) {
            plan->scratch_width = 0;
            return 0;
        }
        plan->scratch_width = width;
    }
    return 1;
}

/* One row of pixels: normalised Y', Cb, Cr (chroma already one per pixel) in; BT.709 R'G'B'
 * (0..1) out. No branches, so that it vectorises. */
#define GK_TONEMAP_ROW(SUFFIX, TARGET)                                                                      \
TARGET static void row_##SUFFIX(const gk_tonemap_plan *restrict p, const float *restrict ys, const float *restrict cbs, \
                                const float *restrict crs, int n, float *restrict ro, float *restrict go, float *restrict bo) { \
    const float *restrict lin = p->signal_to_linear, *restrict tone = p->tone, *restrict oetf = p->oetf;   \
    const float lowest = float_of((uint32_t)(127 + GK_TONEMAP_GAIN_LOWEST) << 23);                          \
    const int32_t base = (127 + GK_TONEMAP_GAIN_LOWEST) << GK_TONEMAP_GAIN_BITS;                            \
    const uint32_t fraction_mask = (1u << (23 - GK_TONEMAP_GAIN_BITS)) - 1;                                 \
    const float fraction_scale = 1.0f / (float)(1u << (23 - GK_TONEMAP_GAIN_BITS));                         \
    const float crr = p->cr_r, cbg = p->cb_g, crg = p->cr_g, cbb = p->cb_b, lr = p->lr, lg = p->lg, lb = p->lb; \
    const float m0 = p->m[0], m1 = p->m[1], m2 = p->m[2], m3 = p->m[3], m4 = p->m[4], m5 = p->m[5],          \
                m6 = p->m[6], m7 = p->m[7], m8 = p->m[8];                                                    \
    /* Table reads become gathers (AVX2, AVX-512) or lane-by-lane loads (SSE2): clang's cost model \
     * for a generic CPU would keep the loop scalar, 77 ms a 1080p frame on one core; vectorised, \
     * 20 ms (SSE2 or AVX2 alike on this EPYC), 13.7 ms with AVX-512 (BENCHMARKS.md). */                             \
    _Pragma("clang loop vectorize(enable) vectorize_width(16)")                                              \
    for (int x = 0; x < n; x++) {                                                                           \
        const float y = ys[x], cb = cbs[x], cr = crs[x];                                                    \
        float r = lin[signal_index(y + crr * cr)];                                                          \
        float g = lin[signal_index(y + cbg * cb + crg * cr)];                                               \
        float b = lin[signal_index(y + cbb * cb)];                                                          \
        /* The tone curve at the luminance, linear between its entries (so that it stays monotonic: \
         * a gain per entry would make a sawtooth where the curve is flat), as a gain. */            \
        const float lum = fmaxf(lr * r + lg * g + lb * b, lowest);                                          \
        int32_t i = (int32_t)(bits_of(lum) >> (23 - GK_TONEMAP_GAIN_BITS)) - base;                          \
        i = i > GK_TONEMAP_GAIN_SIZE - 2 ? GK_TONEMAP_GAIN_SIZE - 2 : i;                                    \
        const float frac = (float)(bits_of(lum) & fraction_mask) * fraction_scale;                          \
        const float k = (tone[i] + frac * (tone[i + 1] - tone[i])) / lum;                                   \
        r *= k, g *= k, b *= k;                                                                             \
        float r7 = m0 * r + m1 * g + m2 * b, g7 = m3 * r + m4 * g + m5 * b, b7 = m6 * r + m7 * g + m8 * b;  \
        /* Outside BT.709: toward the grey of the same luminance, just far enough. */                      \
        float l = 0.2126f * r7 + 0.7152f * g7 + 0.0722f * b7;                                               \
        l = l < 0.0f ? 0.0f : l > 1.0f ? 1.0f : l;                                                          \
        const float mn = r7 < g7 ? (r7 < b7 ? r7 : b7) : (g7 < b7 ? g7 : b7);                               \
        const float mx = r7 > g7 ? (r7 > b7 ? r7 : b7) : (g7 > b7 ? g7 : b7);                               \
        const float below = mn < 0.0f ? l / (l - mn + 1e-20f) : 1.0f;                                       \
        const float above = mx > 1.0f ? (1.0f - l) / (mx - l + 1e-20f) : 1.0f;                              \
        const float t = below < above ? below : above;                                                      \
        r7 = l + t * (r7 - l), g7 = l + t * (g7 - l), b7 = l + t * (b7 - l);                                \
        ro[x] = oetf[log_index(r7, GK_TONEMAP_OETF_LOWEST, GK_TONEMAP_OETF_BITS, GK_TONEMAP_OETF_SIZE - 1)];  \
        go[x] = oetf[log_index(g7, GK_TONEMAP_OETF_LOWEST, GK_TONEMAP_OETF_BITS, GK_TONEMAP_OETF_SIZE - 1)];  \
        bo[x] = oetf[log_index(b7, GK_TONEMAP_OETF_LOWEST, GK_TONEMAP_OETF_BITS, GK_TONEMAP_OETF_SIZE - 1)];  \
    }                                                                                                       \
}                                                                                                           \
/* Y' per pixel of two rows, Cb Cr per 2x2 block from the mean R'G'B' (rows width + 1 long). */            \
TARGET static void pack_##SUFFIX(const float *restrict r0, const float *restrict g0, const float *restrict b0,  \
                                 const float *restrict r1, const float *restrict g1, const float *restrict b1,  \
                                 int width, uint8_t *restrict oy0, uint8_t *restrict oy1, uint8_t *restrict ou, uint8_t *restrict ov) { \
    for (int x = 0; x < width; x++) oy0[x] = (uint8_t)(16.5f + 219.0f * (0.2126f * r0[x] + 0.7152f * g0[x] + 0.0722f * b0[x])); \
    if (oy1)                                                                                                \
        for (int x = 0; x < width; x++) oy1[x] = (uint8_t)(16.5f + 219.0f * (0.2126f * r1[x] + 0.7152f * g1[x] + 0.0722f * b1[x])); \
    const int pairs = (width + 1) / 2;                                                                      \
    for (int c = 0; c < pairs; c++) {                                                                       \
        const float r = 0.25f * (r0[2 * c] + r0[2 * c + 1] + r1[2 * c] + r1[2 * c + 1]);                    \
        const float g = 0.25f * (g0[2 * c] + g0[2 * c + 1] + g1[2 * c] + g1[2 * c + 1]);                    \
        const float b = 0.25f * (b0[2 * c] + b0[2 * c + 1] + b1[2 * c] + b1[2 * c + 1]);                    \
        const float l = 0.2126f * r + 0.7152f * g + 0.0722f * b;                                            \
        ou[c] = (uint8_t)(128.5f + (224.0f / 1.8556f) * (b - l));                                           \
        ov[c] = (uint8_t)(128.5f + (224.0f / 1.5748f) * (r - l));                                           \
    }                                                                                                       \
}

/* Compiled three times: the baseline (SSE2), AVX2 and AVX-512, chosen per CPU (gk_tonemap_frame). */
GK_TONEMAP_ROW(baseline, )
GK_TONEMAP_ROW(avx2, __attribute__((target("avx2,fma"))))
GK_TONEMAP_ROW(avx512, __attribute__((target("avx512f,avx512vl,avx512bw,avx2,fma"))))

/* Luma of a row as normalised floats (an odd width's last pixel repeated). */
static void load_luma(const gk_tonemap_plan *p, const uint8_t *row, int width, float *out) {
    const float off = p->y_offset, scale = p->y_scale;
    if (p->bits == 8) {
        for (int x = 0; x < width; x++) out[x] = ((float)row[x] - off) * scale;
    } else {
        const uint16_t *w = (const uint16_t *)row;
        const int shift = p->layout == GK_TONEMAP_P010_10LE ? 6 : 0;
        for (int x = 0; x < width; x++) out[x] = ((float)(w[x] >> shift) - off) * scale;
    }
    out[width] = out[width - 1];
}

static void load_chroma(const gk_tonemap_plan *p, const uint8_t *a, const uint8_t *b, int count, float *cb, float *cr) {
    const float off = p->c_offset, scale = p->c_scale;
    switch (p->layout) {
    case GK_TONEMAP_I420:
        for (int x = 0; x < count; x++) cb[x] = ((float)a[x] - off) * scale, cr[x] = ((float)b[x] - off) * scale;
        break;
    case GK_TONEMAP_NV12:
        for (int x = 0; x < count; x++) cb[x] = ((float)a[2 * x] - off) * scale, cr[x] = ((float)a[2 * x + 1] - off) * scale;
        break;
    case GK_TONEMAP_I420_10LE: {
        const uint16_t *u = (const uint16_t *)a, *v = (const uint16_t *)b;
        for (int x = 0; x < count; x++) cb[x] = ((float)u[x] - off) * scale, cr[x] = ((float)v[x] - off) * scale;
        break;
    }
    case GK_TONEMAP_P010_10LE: {
        const uint16_t *uv = (const uint16_t *)a;
        for (int x = 0; x < count; x++) cb[x] = ((float)(uv[2 * x] >> 6) - off) * scale, cr[x] = ((float)(uv[2 * x + 1] >> 6) - off) * scale;
        break;
    }
    }
}

void gk_tonemap_frame(gk_tonemap_plan *p, const uint8_t *const src[3], const int src_stride[3], int width, int height,
                      uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride) {
    const int pairs = (width + 1) / 2, n = 2 * pairs;
    const size_t row = (size_t)width + 2;
    float *yy[2] = { p->scratch, p->scratch + row }, *cb = p->scratch + 2 * row, *cr = p->scratch + 3 * row;
    float *cbx = p->scratch + 4 * row, *crx = p->scratch + 5 * row;
    float *rgb[2][3];
    for (int k = 0; k < 6; k++) rgb[k / 3][k % 3] = p->scratch + (size_t)(6 + k) * row;
    const int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
    for (int line = 0; line < height; line += 2) {
        const int second = line + 1 < height;
        load_luma(p, src[0] + (size_t)line * src_stride[0], width, yy[0]);
        load_luma(p, src[0] + (size_t)(second ? line + 1 : line) * src_stride[0], width, yy[1]);
        load_chroma(p, src[1] + (size_t)(line / 2) * src_stride[1], src[2] ? src[2] + (size_t)(line / 2) * src_stride[2] : NULL, pairs, cb, cr);
        for (int c = 0; c < pairs; c++) cbx[2 * c] = cbx[2 * c + 1] = cb[c], crx[2 * c] = crx[2 * c + 1] = cr[c];
        for (int k = 0; k < 2; k++) {
            if (avx512) row_avx512(p, yy[k], cbx, crx, n, rgb[k][0], rgb[k][1], rgb[k][2]);
            else if (avx2) row_avx2(p, yy[k], cbx, crx, n, rgb[k][0], rgb[k][1], rgb[k][2]);
            else row_baseline(p, yy[k], cbx, crx, n, rgb[k][0], rgb[k][1], rgb[k][2]);
        }
        uint8_t *oy0 = y + (size_t)line * y_stride, *oy1 = second ? y + (size_t)(line + 1) * y_stride : NULL;
        uint8_t *ou = u + (size_t)(line / 2) * u_stride, *ov = v + (size_t)(line / 2) * v_stride;
        if (avx512) pack_avx512(rgb[0][0], rgb[0][1], rgb[0][2], rgb[1][0], rgb[1][1], rgb[1][2], width, oy0, oy1, ou, ov);
        else if (avx2) pack_avx2(rgb[0][0], rgb[0][1], rgb[0][2], rgb[1][0], rgb[1][1], rgb[1][2], width, oy0, oy1, ou, ov);
        else pack_baseline(rgb[0][0], rgb[0][1], rgb[0][2], rgb[1][0], rgb[1][1], rgb[1][2], width, oy0, oy1, ou, ov);
    }
}
