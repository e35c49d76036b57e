/*
 * gkrgbtoi420's kernel: packed RGB to I420 in fixed point, two rows at a time (kernel.c). No
 * GStreamer: the element (gkrgbtoi420.c) maps the frames and makes the plan from its caps.
 */
#ifndef GK_RGB_TO_I420_KERNEL_H
#define GK_RGB_TO_I420_KERNEL_H
#include <stdint.h>

/* The fixed-point coefficients (16 fraction bits) for a matrix (Kr, Kb) and range, and where R,
 * G and B are in a 4-byte pixel. */
typedef struct {
    int32_t y[3], u[3], v[3];
    int32_t y_offset;
    int r, g, b;
} gk_rgb_to_i420_plan;

void gk_rgb_to_i420_plan_make(gk_rgb_to_i420_plan *plan, double kr, double kb, int full_range,
                              int r_offset, int g_offset, int b_offset);

/* Y per pixel; per 2x2 block one U and one V, from the block's mean (an odd last column or row
 * counts twice). `src` rows are 4-byte aligned (GStreamer's packed RGB frames always are). */
void gk_rgb_to_i420(const gk_rgb_to_i420_plan *plan, const uint8_t *src, int src_stride, int width, int height,
                    uint8_t *y, int y_stride, uint8_t *u, int u_stride, uint8_t *v, int v_stride);
#endif
