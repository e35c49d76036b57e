/*
 * gkrgbtoi420's kernel (kernel.h): the arithmetic of videoconvert for these formats (BT.601,
 * BT.709 or BT.2020, either range), in fixed point.
 */
#include <math.h>
#include <stddef.h>
#include "kernel.h"

void gk_rgb_to_i420_plan_make(gk_rgb_to_i420_plan *plan, double kr, double kb, int full_range,
                              int r_offset, int g_offset, int b_offset) {
    const double kg = 1.0 - kr - kb;
    const double ys = full_range ? 1.0 : 219.0 / 255.0, cs = full_range ? 1.0 : 224.0 / 255.0;
    const double one = 1 << 16;
    /* Y' = off + ys (kr R + kg G + kb B); Cb = 128 + cs (B - Y)/(2(1 - kb)); Cr likewise. */
    plan->y[0] = (int32_t)lrint(ys * kr * one);
    plan->y[1] = (int32_t)lrint(ys * kg * one);
    plan->y[2] = (int32_t)lrint(ys * kb * one);
    const double cb = cs / (2.0 * (1.0 - kb)), cr = cs / (2.0 * (1.0 - kr));
    plan->u[0] = (int32_t)lrint(-kr * cb * one);
    plan->u[1] = (int32_t)lrint(-kg * cb * one);
    plan->u[2] = (int32_t)lrint((1.0 - kb) * cb * one);
    plan->v[0] = (int32_t)lrint((1.0 - kr) * cr * one);
    plan->v[1] = (int32_t)lrint(-kg * cr * one);
    plan->v[2] = (int32_t)lrint(-kb * cr * one);
    plan->y_offset = full_range ? 0 : 16;
    plan->r = r_offset;
    plan->g = g_offset;
    plan->b = b_offset;
}

static inline uint8_t clamp8(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

/* The rows are read as 32-bit pixels and split with shifts (R, G and B at bit 8 × their byte
 * offset, little-endian), which compilers turn into vector code; byte loads at a stride of 4
 * they do not. Each function is compiled twice, for AVX2 and for the baseline, and the AVX2
 * one is called where the CPU has it. */
#define GK_ROWS(SUFFIX, TARGET)                                                                         \
TARGET static void luma_row_##SUFFIX(const gk_rgb_to_i420_plan *p, const uint32_t *src, uint8_t *dst, int width) { \
    const int32_t yr = p->y[0], yg = p->y[1], yb = p->y[2];                                             \
    const int32_t add = (p->y_offset << 16) + (1 << 15);                                                \
    const int rs = 8 * p->r, gs = 8 * p->g, bs = 8 * p->b;                                              \
    for (int x = 0; x < width; x++) {                                                                   \
        const uint32_t px = src[x];                                                                     \
        const int32_t r = (int32_t)((px >> rs) & 255), g = (int32_t)((px >> gs) & 255), b = (int32_t)((px >> bs) & 255); \
        /* Never above 255 nor below 0 (the coefficients are positive and sum to at most 1). */      \
        dst[x] = (uint8_t)((yr * r + yg * g + yb * b + add) >> 16);                                     \
    }                                                                                                   \
}                                                                                                       \
TARGET static void chroma_row_##SUFFIX(const gk_rgb_to_i420_plan *p, const uint32_t *row0, const uint32_t *row1, \
                                       uint8_t *u, uint8_t *v, int width) {                             \
    const int32_t ur = p->u[0], ug = p->u[1], ub = p->u[2], vr = p->v[0], vg = p->v[1], vb = p->v[2];   \
    const int rs = 8 * p->r, gs = 8 * p->g, bs = 8 * p->b;                                              \
    const int32_t add = (128 << 18) + (1 << 17);                                                        \
    const int pairs = width / 2;                                                                        \
    for (int cx = 0; cx < pairs; cx++) {                                                                \
        const uint32_t a0 = row0[2 * cx], a1 = row0[2 * cx + 1], b0 = row1[2 * cx], b1 = row1[2 * cx + 1]; \
        const int32_t r = (int32_t)(((a0 >> rs) & 255) + ((a1 >> rs) & 255) + ((b0 >> rs) & 255) + ((b1 >> rs) & 255)); \
        const int32_t g = (int32_t)(((a0 >> gs) & 255) + ((a1 >> gs) & 255) + ((b0 >> gs) & 255) + ((b1 >> gs) & 255)); \
        const int32_t b = (int32_t)(((a0 >> bs) & 255) + ((a1 >> bs) & 255) + ((b0 >> bs) & 255) + ((b1 >> bs) & 255)); \
        u[cx] = clamp8((ur * r + ug * g + ub * b + add) >> 18);                                         \
        v[cx] = clamp8((vr * r + vg * g + vb * b + add) >> 18);                                         \
    }                                                                                                   \
    if (width & 1) {  /* the last column's pixel twice */                                              \
        const uint32_t a0 = row0[width - 1], b0 = row1[width - 1];                                      \
        const int32_t r = (int32_t)(2 * (((a0 >> rs) & 255) + ((b0 >> rs) & 255)));                   \
        const int32_t g = (int32_t)(2 * (((a0 >> gs) & 255) + ((b0 >> gs) & 255)));                   \
        const int32_t b = (int32_t)(2 * (((a0 >> bs) & 255) + ((b0 >> bs) & 255)));                   \
        u[pairs] = clamp8((ur * r + ug * g + ub * b + add) >> 18);                                      \
        v[pairs] = clamp8((vr * r + vg * g + vb * b + add) >> 18);                                      \
    }                                                                                                   \
}                                                                                                       \
TARGET static void convert_##SUFFIX(const gk_rgb_to_i420_plan *plan, const uint8_t *src, int src_stride, int width, int height, \
                                    uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride) { \
    for (int row = 0; row < height; row += 2) {                                                         \
        const uint32_t *row0 = (const uint32_t *)(src + (size_t)row * src_stride);                     \
        const uint32_t *row1 = row + 1 < height ? (const uint32_t *)(src + (size_t)(row + 1) * src_stride) : row0; \
        luma_row_##SUFFIX(plan, row0, y + (size_t)row * y_stride, width);                               \
        if (row + 1 < height) luma_row_##SUFFIX(plan, row1, y + (size_t)(row + 1) * y_stride, width);   \
        chroma_row_##SUFFIX(plan, row0, row1, u + (size_t)(row / 2) * u_stride, v + (size_t)(row / 2) * v_stride, width); \
    }                                                                                                   \
}

GK_ROWS(baseline, )
GK_ROWS(avx2, __attribute__((target("avx2"))))

void gk_rgb_to_i420(const gk_rgb_to_i420_plan *plan, const uint8_t *src, int src_stride, int width, int height,
                    uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride) {
    /* A read of libgcc's CPU model, filled at start-up: nothing to cache. */
    if (__builtin_cpu_supports("avx2")) convert_avx2(plan, src, src_stride, width, height, y, y_stride, u, u_stride, v, v_stride);
    else convert_baseline(plan, src, src_stride, width, height, y, y_stride, u, u_stride, v, v_stride);
}
