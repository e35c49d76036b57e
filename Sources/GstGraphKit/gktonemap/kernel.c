/*
 * gktonemap's kernel (kernel.h). Per pixel, in single-precision float with tables:
 *
 *   Y'CbCr (the input's matrix and range) → non-linear R'G'B'
 *   → linear light, a 4096-entry table on the signal:
 *       HLG: scene light E, BT.2100's inverse OETF;
 *       PQ:  display light in units of reference white, BT.2100's EOTF (ST 2084) / reference white
 *   → one gain per pixel from its luminance Y (a 4096-entry table, indexed by sqrt(Y)):
 *       HLG: BT.2100's OOTF for the nominal 1000-nit display (system gamma 1.2,
 *            Fd = 1000 · Ys^0.2 · E), then divided by reference white (BT.2408: 203 nits = SDR white);
 *       both: the highlights' roll-off (gk_tonemap_rolloff) on that luminance, from the knee up to
 *            the source's peak (PQ: the mastering display's, else the element's property; HLG:
 *            the nominal 1000 nits), so that the peak becomes SDR white and nothing clips flat.
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
 * 203-nit SDR white from a 1000-nit source that is 100 nits, which takes SDR white down to 165
 * nits (Y' 215 of 235): every SDR-graded picture in an HDR10 file would come out dim. Reinhard's
 * extended operator (Reinhard et al. 2002, eq. 4: L (1 + L / Lwhite²) / (1 + L)) above a knee
 * keeps everything below the knee exact, rolls the rest off smoothly (slope 1 at the knee) and
 * puts the source's peak at SDR white.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kernel.h"

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
    /* The gain table covers the linear values the signal table gives. */
    const double y_max = s->transfer == GK_TONEMAP_HLG ? 1.0 : 10000 / white;
    plan->gain_index_scale = (float)(GK_TONEMAP_GAIN_SIZE - 1);
    const double peak = s->transfer == GK_TONEMAP_HLG ? hlg_peak / white : s->source_peak / white;
    for (int i = 0; i < GK_TONEMAP_GAIN_SIZE; i++) {
        double f = (double)i / (GK_TONEMAP_GAIN_SIZE - 1);
        double y = f * f * y_max;
        if (y < 1e-9) y = 1e-9;  /* the limit at black */
        double gain;
        if (s->transfer == GK_TONEMAP_HLG) {
            const double display = hlg_peak * pow(y, hlg_gamma) / white;  /* luminance, SDR white = 1 */
            gain = gk_tonemap_rolloff(display, s->knee, peak) / y;
        } else {
            gain = gk_tonemap_rolloff(y, s->knee, peak) / y;
        }
        plan->gain[i] = (float)gain;
    }
    /* Indexed by sqrt(L): steps of at most 0.06 of a code near black, where L^(1/2.4) is steepest. */
    for (int i = 0; i < GK_TONEMAP_OETF_SIZE; i++) {
        const double f = (double)i / (GK_TONEMAP_OETF_SIZE - 1);
        plan->oetf[i] = (float)bt1886_inverse_eotf(f * f);
    }
    plan->y_max_inverse = (float)(1 / y_max);

    if (plan->scratch_width < width) {
        free(plan->scratch);
        /* two luma rows, Cb and Cr, each width + 1 (an odd width's last pixel twice) */
        plan->scratch = malloc(sizeof(float) * 4 * (size_t)(width + 2));
        if (!plan->scratch) {
            plan->scratch_width = 0;
            return 0;
        }
        plan->scratch_width = width;
    }
    return 1;
}

static inline int index_of(float v, float scale, int last) {
    int i = (int)(v * scale + 0.5f);
    return i < 0 ? 0 : i > last ? last : i;
}

/* One pixel: normalised Y', Cb, Cr in; BT.709 R'G'B' (0..1) out. */
static inline void to_sdr(const gk_tonemap_plan *p, float y, float cb, float cr, float *out) {
    const float sig = GK_TONEMAP_SIGNAL_SIZE - 1;
    float r = p->signal_to_linear[index_of(y + p->cr_r * cr, sig, GK_TONEMAP_SIGNAL_SIZE - 1)];
    float g = p->signal_to_linear[index_of(y + p->cb_g * cb + p->cr_g * cr, sig, GK_TONEMAP_SIGNAL_SIZE - 1)];
    float b = p->signal_to_linear[index_of(y + p->cb_b * cb, sig, GK_TONEMAP_SIGNAL_SIZE - 1)];
    const float lum = fmaxf(p->lr * r + p->lg * g + p->lb * b, 0.0f);
    const float gain = p->gain[index_of(sqrtf(lum * p->y_max_inverse), p->gain_index_scale, GK_TONEMAP_GAIN_SIZE - 1)];
    r *= gain, g *= gain, b *= gain;
    const float *m = p->m;
    float r7 = m[0] * r + m[1] * g + m[2] * b;
    float g7 = m[3] * r + m[4] * g + m[5] * b;
    float b7 = m[6] * r + m[7] * g + m[8] * b;
    const float mn = fminf(r7, fminf(g7, b7)), mx = fmaxf(r7, fmaxf(g7, b7));
    if (mn < 0 || mx > 1) {
        float l = 0.2126f * r7 + 0.7152f * g7 + 0.0722f * b7;
        l = l < 0 ? 0 : l > 1 ? 1 : l;
        float t = 1;
        if (mn < 0) t = fminf(t, l / (l - mn));
        if (mx > 1) t = fminf(t, (1 - l) / (mx - l));
        r7 = l + t * (r7 - l), g7 = l + t * (g7 - l), b7 = l + t * (b7 - l);
    }
    const float o = GK_TONEMAP_OETF_SIZE - 1;
    out[0] = p->oetf[index_of(sqrtf(fmaxf(r7, 0.0f)), o, GK_TONEMAP_OETF_SIZE - 1)];
    out[1] = p->oetf[index_of(sqrtf(fmaxf(g7, 0.0f)), o, GK_TONEMAP_OETF_SIZE - 1)];
    out[2] = p->oetf[index_of(sqrtf(fmaxf(b7, 0.0f)), o, GK_TONEMAP_OETF_SIZE - 1)];
}

static inline uint8_t round8(float v) { return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5f); }

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
    const int pairs = (width + 1) / 2;
    float *y0 = p->scratch, *y1 = y0 + width + 2, *cb = y1 + width + 2, *cr = cb + width + 2;
    for (int row = 0; row < height; row += 2) {
        const int second = row + 1 < height;
        load_luma(p, src[0] + (size_t)row * src_stride[0], width, y0);
        load_luma(p, src[0] + (size_t)(second ? row + 1 : row) * src_stride[0], width, y1);
        load_chroma(p, src[1] + (size_t)(row / 2) * src_stride[1], src[2] ? src[2] + (size_t)(row / 2) * src_stride[2] : NULL, pairs, cb, cr);
        uint8_t *oy0 = y + (size_t)row * y_stride, *oy1 = second ? y + (size_t)(row + 1) * y_stride : NULL;
        uint8_t *ou = u + (size_t)(row / 2) * u_stride, *ov = v + (size_t)(row / 2) * v_stride;
        for (int cx = 0; cx < pairs; cx++) {
            float a[3], b[3], c[3], d[3];
            to_sdr(p, y0[2 * cx], cb[cx], cr[cx], a);
            to_sdr(p, y0[2 * cx + 1], cb[cx], cr[cx], b);
            to_sdr(p, y1[2 * cx], cb[cx], cr[cx], c);
            to_sdr(p, y1[2 * cx + 1], cb[cx], cr[cx], d);
            oy0[2 * cx] = round8(16 + 219 * (0.2126f * a[0] + 0.7152f * a[1] + 0.0722f * a[2]));
            if (2 * cx + 1 < width) oy0[2 * cx + 1] = round8(16 + 219 * (0.2126f * b[0] + 0.7152f * b[1] + 0.0722f * b[2]));
            if (oy1) {
                oy1[2 * cx] = round8(16 + 219 * (0.2126f * c[0] + 0.7152f * c[1] + 0.0722f * c[2]));
                if (2 * cx + 1 < width) oy1[2 * cx + 1] = round8(16 + 219 * (0.2126f * d[0] + 0.7152f * d[1] + 0.0722f * d[2]));
            }
            const float r = 0.25f * (a[0] + b[0] + c[0] + d[0]), g = 0.25f * (a[1] + b[1] + c[1] + d[1]),
                        bl = 0.25f * (a[2] + b[2] + c[2] + d[2]);
            const float luma = 0.2126f * r + 0.7152f * g + 0.0722f * bl;
            ou[cx] = round8(128 + 224 * (bl - luma) / 1.8556f);
            ov[cx] = round8(128 + 224 * (r - luma) / 1.5748f);
        }
    }
}
