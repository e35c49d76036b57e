#ifndef GRAPHKIT_KERNELS_H
#define GRAPHKIT_KERNELS_H
/*
 * Arithmetic kernels that need instructions Swift cannot ask for: baseline x86-64 (SSE2) has
 * no 32-bit integer min or max, and Swift has no per-function target features, so a kernel
 * that should use AVX2 where the CPU has it lives here and picks its path once, at run time.
 * No GStreamer: plain memory in, numbers out.
 */
#include <stddef.h>
#include <stdint.h>

/* Over `frames` interleaved 16-bit stereo frames, the least and greatest of
 * (left + right) / 2 with C division (truncating toward zero): audiowaveform's combined value.
 * frames may be 0: then *min_value is INT32_MAX and *max_value INT32_MIN. */
void gk_stereo_half_sum_range(const int16_t *samples, size_t frames, int32_t *min_value, int32_t *max_value);

/* The two paths, for tests that check each against the plain arithmetic. The AVX2 one must be
 * called only where gk_cpu_has_avx2() is 1. */
void gk_stereo_half_sum_range_sse2(const int16_t *samples, size_t frames, int32_t *min_value, int32_t *max_value);
void gk_stereo_half_sum_range_avx2(const int16_t *samples, size_t frames, int32_t *min_value, int32_t *max_value);
int gk_cpu_has_avx2(void);

#endif
