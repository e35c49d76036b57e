#include "CKernels.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* CoreImage's colour matrix on premultiplied pixels (CKernels.h says the arithmetic). Multiplies
 * and adds stay separate and in one order in both paths (contraction off), so both give the same
 * bytes. */
#pragma clang fp contract(off)


/* NaN goes to 0, as the vector path's max(0, min(255, NaN)) ordering below gives. */
static inline float clamp255_nan(float x) {
    float y = x > 255.0f ? 255.0f : x;   /* NaN stays NaN */
    return y > 0.0f ? y : 0.0f;          /* NaN becomes 0 */
}

void gk_ci_color_matrix_scalar(const float m[20], const uint8_t *src, const uint8_t src_byte_of[4],
                               uint8_t *dst, const uint8_t dst_byte_of[4], size_t count) {
    for (size_t i = 0; i < count; i++) {
        const uint8_t *p = src + 4 * i;
        float a = (float)p[src_byte_of[3]];
        float s = a > 0.0f ? 255.0f / a : 0.0f;
        float u[4] = {(float)p[src_byte_of[0]] * s, (float)p[src_byte_of[1]] * s, (float)p[src_byte_of[2]] * s, a};
        float o[4];
        for (int c = 0; c < 4; c++) {
            const float *row = m + 5 * c;
            float x = row[4] + u[0] * row[0];
            x = x + u[1] * row[1];
            x = x + u[2] * row[2];
            x = x + u[3] * row[3];
            o[c] = clamp255_nan(x);
        }
        float f = o[3] / 255.0f;
        uint8_t out[4];
        for (int c = 0; c < 3; c++) out[c] = (uint8_t)(int)(o[c] * f + 0.5f);
        out[3] = (uint8_t)(int)(o[3] + 0.5f);
        uint8_t *q = dst + 4 * i;
        for (int c = 0; c < 4; c++) q[dst_byte_of[c]] = out[c];
    }

}

#if defined(__x86_64__)

/* 8 pixels a step. keep_alpha (the alpha row is (0, 0, 0, 1) with no bias: o_A is A exactly) and
 * alpha_in (some row weighs A; a weight of 0 adds +0, so leaving the term out changes nothing)
 * are constants in each caller, so each combination is its own loop. A step whose 8 pixels are
 * all opaque skips both divisions: 255 / 255 is exactly 1, so u = v and, with alpha kept, the
 * premultiplication by 1 changes nothing. Same bytes as the scalar path either way. */
__attribute__((target("avx2"), always_inline))
static inline size_t ci_color_matrix_avx2(const float m[20], const uint8_t *src, size_t src_row_bytes, const uint8_t src_byte_of[4],
                                          uint8_t *dst, size_t dst_row_bytes, const uint8_t dst_byte_of[4], size_t count,
                                          size_t rows, const int keep_alpha, const int alpha_in, const int bias,
                                          const int bounded) {
    __m256 w[4][5];
    for (int c = 0; c < 4; c++)
        for (int j = 0; j < 5; j++) w[c][j] = _mm256_set1_ps(m[5 * c + j]);
    /* pick[c]: channel c's byte of each pixel into the low byte of its 32-bit lane, the rest 0.
     * order: after the packs a 128-bit lane holds R of its 4 pixels, then G, B and A; this puts
     * each at its byte of each destination pixel. */
    uint8_t pick_bytes[4][32], order_bytes[32];
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 32; k++) pick_bytes[c][k] = k % 4 == 0 ? (uint8_t)(k % 16 + src_byte_of[c]) : 0x80;
    for (int k = 0; k < 32; k++) {
        int pixel = k % 16 / 4, byte = k % 4, channel = 0;
        while (channel < 3 && dst_byte_of[channel] != byte) channel++;
        order_bytes[k] = (uint8_t)(channel * 4 + pixel);
    }
    __m256i pick[4];
    for (int c = 0; c < 4; c++) pick[c] = _mm256_loadu_si256((const __m256i *)pick_bytes[c]);
    const __m256i order = _mm256_loadu_si256((const __m256i *)order_bytes);
    const __m256i opaque_alpha = _mm256_set1_epi32(0xff);
    const __m256 top = _mm256_set1_ps(255.0f), zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
    const int outputs = keep_alpha ? 3 : 4;
    size_t i = 0;
    for (size_t row = 0; row < rows; row++, src += src_row_bytes, dst += dst_row_bytes)
    for (i = 0; i + 8 <= count; i += 8) {
        const __m256i p = _mm256_loadu_si256((const __m256i *)(src + 4 * i));
        const __m256i alpha = _mm256_shuffle_epi8(p, pick[3]);
        const int opaque = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(alpha, opaque_alpha))) == 0xff;
        __m256 u[4];
        for (int c = 0; c < 3; c++) u[c] = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(p, pick[c]));
        u[3] = _mm256_cvtepi32_ps(alpha);
        if (!opaque) {
            /* s = 255 / A, 0 where A is 0 (the division gives +inf there; the mask clears it). */
            const __m256 s = _mm256_and_ps(_mm256_div_ps(top, u[3]), _mm256_cmp_ps(u[3], zero, _CMP_GT_OQ));
            for (int c = 0; c < 3; c++) u[c] = _mm256_mul_ps(u[c], s);
        }
        __m256 o[4];
        for (int c = 0; c < outputs; c++) {
            /* A bias of 0 adds +0: left out, nothing changes (the clamp takes −0 to 0 as well). */
            __m256 x = bias ? _mm256_add_ps(w[c][4], _mm256_mul_ps(u[0], w[c][0])) : _mm256_mul_ps(u[0], w[c][0]);
            x = _mm256_add_ps(x, _mm256_mul_ps(u[1], w[c][1]));
            x = _mm256_add_ps(x, _mm256_mul_ps(u[2], w[c][2]));
            if (alpha_in) x = _mm256_add_ps(x, _mm256_mul_ps(u[3], w[c][3]));
            o[c] = x;
        }
        if (keep_alpha) o[3] = u[3];
        const int premultiply = !(keep_alpha && opaque);
        /* Without the premultiplication, and with no sum able to reach ±2^30 (so the conversion
         * cannot overflow), the saturating packs below clamp as the scalar path does: below 0
         * (and NaN, which converts to INT32_MIN) to 0, above 255 to 255. Else clamp here:
         * min(x, 255) keeps NaN (the second operand is returned when either is NaN, so x goes
         * second), then max(·, 0) with the NaN first gives 0: the scalar path's order. */
        if (premultiply || !bounded)
            for (int c = 0; c < outputs; c++) o[c] = _mm256_max_ps(_mm256_min_ps(top, o[c]), zero);
        const __m256 f = premultiply ? _mm256_div_ps(o[3], top) : top;
        __m256i b[4];
        for (int c = 0; c < 3; c++)
            b[c] = _mm256_cvttps_epi32(_mm256_add_ps(premultiply ? _mm256_mul_ps(o[c], f) : o[c], half));
        b[3] = keep_alpha ? alpha : _mm256_cvttps_epi32(_mm256_add_ps(o[3], half));
        const __m256i packed = _mm256_packus_epi16(_mm256_packs_epi32(b[0], b[1]), _mm256_packs_epi32(b[2], b[3]));
        _mm256_storeu_si256((__m256i *)(dst + 4 * i), _mm256_shuffle_epi8(packed, order));
    }
    return i;
}

__attribute__((target("avx2")))
static size_t ci_color_matrix_avx2_variant(const float m[20], const uint8_t *src, size_t src_row_bytes, const uint8_t src_byte_of[4],
                                           uint8_t *dst, size_t dst_row_bytes, const uint8_t dst_byte_of[4], size_t count,
                                           size_t rows) {
    const int keep_alpha = m[15] == 0 && m[16] == 0 && m[17] == 0 && m[18] == 1 && m[19] == 0;
    const int alpha_in = m[3] != 0 || m[8] != 0 || m[13] != 0 || (!keep_alpha && m[18] != 0);
    const int bias = m[4] != 0 || m[9] != 0 || m[14] != 0 || (!keep_alpha && m[19] != 0);
    double largest = 0;
    for (int c = 0; c < 4; c++) {
        double sum = fabs((double)m[5 * c + 4]);
        for (int j = 0; j < 4; j++) sum += 255.0 * fabs((double)m[5 * c + j]);
        if (sum > largest) largest = sum;
    }
    const int bounded = largest < 0x1p30;  /* false for NaN or infinite weights too */
#define VARIANT(ka, ai, bi, bd) \
    if (keep_alpha == ka && alpha_in == ai && bias == bi && bounded == bd) \
        return ci_color_matrix_avx2(m, src, src_row_bytes, src_byte_of, dst, dst_row_bytes, dst_byte_of, count, rows, ka, ai, bi, bd);
    VARIANT(1, 0, 0, 1) VARIANT(1, 0, 1, 1) VARIANT(1, 1, 0, 1) VARIANT(1, 1, 1, 1)
    VARIANT(0, 0, 0, 1) VARIANT(0, 0, 1, 1) VARIANT(0, 1, 0, 1) VARIANT(0, 1, 1, 1)
#undef VARIANT
    /* Unbounded sums: the clamp is always done, whatever the rest. */
    return ci_color_matrix_avx2(m, src, src_row_bytes, src_byte_of, dst, dst_row_bytes, dst_byte_of, count, rows, 0, 1, 1, 0);
}

#endif

void gk_ci_color_matrix(const float m[20], const uint8_t *src, size_t src_row_bytes, const uint8_t src_byte_of[4],
                        uint8_t *dst, size_t dst_row_bytes, const uint8_t dst_byte_of[4], size_t width, size_t height) {
    size_t done = 0;
#if defined(__x86_64__)
    static int known = -1;
    int avx2 = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (avx2 < 0) {
        avx2 = gk_cpu_has_avx2();
        __atomic_store_n(&known, avx2, __ATOMIC_RELAXED);
    }
    if (avx2 && width >= 8 && height > 0)
        done = ci_color_matrix_avx2_variant(m, src, src_row_bytes, src_byte_of, dst, dst_row_bytes, dst_byte_of, width, height);
#endif
    for (size_t row = 0; row < height; row++)
        gk_ci_color_matrix_scalar(m, src + row * src_row_bytes + 4 * done, src_byte_of, dst + row * dst_row_bytes + 4 * done,
                                  dst_byte_of, width - done);
}
#pragma clang fp contract(on)
