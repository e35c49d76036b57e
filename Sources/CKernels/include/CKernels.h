#ifndef GRAPHKIT_KERNELS_H
#define GRAPHKIT_KERNELS_H
/*
 * Arithmetic kernels that need instructions Swift cannot ask for: baseline x86-64 (SSE2) has
 * no 32-bit integer min, max or multiply, no byte shuffle and only 4 float lanes, and Swift has
 * no per-function target features, so a kernel that should use AVX2 where the CPU has it lives
 * here and picks its path once, at run time. Each gives the same numbers as the Swift code it
 * stands in for, which stays as the path for other CPUs. No GStreamer: plain memory in, numbers
 * out.
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

/* A 4×4 colour matrix on packed 8-bit pixels (BGRA or RGBA), the AVX2 path of effect.colorMatrix.
 * m holds the rows for outputs R, G, B, A, each with the weights of inputs R, G, B, A; k the bias
 * of each output, in stored-value units. byte_of[c] is the byte of channel c (R, G, B, A) in a
 * pixel; alpha is always byte 3. Each output is, in single precision and in this order,
 * k + R·m0 + G·m1 + B·m2 + A·m3 (the A term and k are left out where all are 0: no value changes),
 * then ⌊min(max(x, 0), 255) + 0.5⌋. With keep_alpha, alpha is copied and its row not used.
 * A plan holds what the kernel works out once for a matrix and a byte order: make it when either
 * changes, then run it on each row. */
typedef struct {
    float m[16], k[4];
    uint8_t pick[4][32], order[32];  /* the shuffles that take channels out and put them back */
    int variant;                     /* the loop: kept alpha, A weights, bias, sums bounded */
    int avx2;                        /* whether the CPU has AVX2 */
} gk_color_matrix_plan;

void gk_color_matrix_plan_make(gk_color_matrix_plan *plan, const float m[16], const float k[4],
                               const uint8_t byte_of[4], int keep_alpha);

/* src and dst may be the same memory. Does whole groups of 8 pixels and returns how many pixels
 * it did: count rounded down to a multiple of 8, or 0 where the CPU has no AVX2. */
size_t gk_color_matrix_avx2(const gk_color_matrix_plan *plan, const uint32_t *src, uint32_t *dst, size_t count);

/* BT.601 luma, (299 R + 587 G + 114 B + 500) / 1000, written to R, G and B; alpha (byte 3) kept.
 * The AVX2 path of effect.grayscale, exact in integers. byte_of[c] is the byte of R, G and B in
 * a pixel. src and dst may be the same memory. Returns how many pixels it did: count rounded down
 * to a multiple of 8, or 0 where the CPU has no AVX2. */
size_t gk_grayscale_avx2(const uint32_t *src, uint32_t *dst, size_t count, const uint8_t byte_of[3]);

/* Σ |a[i] − b[i]| over n bytes, exactly (the scene score's sum): SSE2's sum of absolute
 * differences sixteen bytes at a time on x86-64, one by one elsewhere. */
uint64_t gk_sum_abs_diff(const uint8_t *a, const uint8_t *b, size_t n);

/* The luma thumbnail of scene and black detection: dst (width × height, no padding) takes byte
 * 2x of row 2y of src (rows `stride` bytes apart), for x < width, y < height. src must hold the
 * bytes up to byte 2·(width − 1) of row 2·(height − 1), and no more is read. */
void gk_luma_half(const uint8_t *src, size_t stride, size_t width, size_t height, uint8_t *dst);

/* CoreImage's colour matrix on premultiplied 8-bit pixels (CIContext's one-pass render of a chain
 * of colour filters). m holds 4 rows (outputs R, G, B, A) of 5: the weights of unpremultiplied
 * R, G, B, A in stored-value units (0…255), then the bias in the same units. Per pixel, in single
 * precision and in this order: s = 255 / A (0 where A is 0); u = (R·s, G·s, B·s, A);
 * o_c = k_c + u_R·m_c0 + u_G·m_c1 + u_B·m_c2 + u_A·m_c3, each clamped to 0…255; then R, G, B
 * are premultiplied, o_c · (o_A / 255), and every value stored as ⌊x + 0.5⌋. An opaque pixel is
 * left unpremultiplied and premultiplied exactly (255 / 255 is 1). src_byte_of[c] and
 * dst_byte_of[c] are the bytes of channel c (R, G, B, A) in a source and a destination pixel.
 * width × height pixels, rows src_row_bytes and dst_row_bytes apart. src and dst may be the same
 * memory. AVX2 where the CPU has it, 8 pixels a step; the same arithmetic one pixel at a time
 * elsewhere and for each row's tail, with the same bytes. */
void gk_ci_color_matrix(const float m[20], const uint8_t *src, size_t src_row_bytes, const uint8_t src_byte_of[4],
                        uint8_t *dst, size_t dst_row_bytes, const uint8_t dst_byte_of[4], size_t width, size_t height);
/* The one-pixel-at-a-time path alone, for the tests that compare the two. */
void gk_ci_color_matrix_scalar(const float m[20], const uint8_t *src, const uint8_t src_byte_of[4],
                               uint8_t *dst, const uint8_t dst_byte_of[4], size_t count);

#endif
