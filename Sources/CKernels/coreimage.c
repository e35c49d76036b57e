#include "CKernels.h"

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
static inline size_t ci_color_matrix_avx2(const float m[20], const uint8_t *src, const uint8_t src_byte_of[4],
                                          uint8_t *dst, const uint8_t dst_byte_of[4], size_t count,
                                          const int keep_alpha, const int alpha_in) {
    __m256 w[4][5];
    for (int c = 0; c < 4; c++)
        for (int j = 0; j < 5; j++) w[c][j] = _mm256_set1_ps(m[5 * c + j]);
    __m128i in_shift[4], out_shift[4];
    for (int c = 0; c < 4; c++) {
        in_shift[c] = _mm_cvtsi32_si128(8 * src_byte_of[c]);
        out_shift[c] = _mm_cvtsi32_si128(8 * dst_byte_of[c]);
    }
    const __m256i low = _mm256_set1_epi32(0xff);
    const __m256 top = _mm256_set1_ps(255.0f), zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
    const int outputs = keep_alpha ? 3 : 4;
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i p = _mm256_loadu_si256((const __m256i *)(src + 4 * i));
        const __m256i alpha = _mm256_and_si256(_mm256_srl_epi32(p, in_shift[3]), low);
        const int opaque = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(alpha, low))) == 0xff;
        __m256 u[4];
        for (int c = 0; c < 3; c++) u[c] = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srl_epi32(p, in_shift[c]), low));
        u[3] = _mm256_cvtepi32_ps(alpha);
        if (!opaque) {
            /* s = 255 / A, 0 where A is 0 (the division gives +inf there; the mask clears it). */
            const __m256 s = _mm256_and_ps(_mm256_div_ps(top, u[3]), _mm256_cmp_ps(u[3], zero, _CMP_GT_OQ));
            for (int c = 0; c < 3; c++) u[c] = _mm256_mul_ps(u[c], s);
        }
        __m256 o[4];
        for (int c = 0; c < outputs; c++) {
            __m256 x = _mm256_add_ps(w[c][4], _mm256_mul_ps(u[0], w[c][0]));
            x = _mm256_add_ps(x, _mm256_mul_ps(u[1], w[c][1]));
            x = _mm256_add_ps(x, _mm256_mul_ps(u[2], w[c][2]));
            if (alpha_in) x = _mm256_add_ps(x, _mm256_mul_ps(u[3], w[c][3]));
            /* min(x, 255) keeps NaN (the second operand is returned when either is NaN, so put
             * x second), then max(·, 0) with the NaN first gives 0: the scalar path's order. */
            x = _mm256_min_ps(top, x);
            o[c] = _mm256_max_ps(x, zero);
        }
        if (keep_alpha) o[3] = u[3];
        const int premultiply = !(keep_alpha && opaque);
        const __m256 f = premultiply ? _mm256_div_ps(o[3], top) : top;
        __m256i out = _mm256_setzero_si256();
        for (int c = 0; c < 3; c++) {
            const __m256 x = premultiply ? _mm256_mul_ps(o[c], f) : o[c];
            out = _mm256_or_si256(out, _mm256_sll_epi32(_mm256_cvttps_epi32(_mm256_add_ps(x, half)), out_shift[c]));
        }
        out = _mm256_or_si256(out, _mm256_sll_epi32(_mm256_cvttps_epi32(_mm256_add_ps(o[3], half)), out_shift[3]));
        _mm256_storeu_si256((__m256i *)(dst + 4 * i), out);
    }
    return i;
}

__attribute__((target("avx2")))
static size_t ci_color_matrix_avx2_variant(const float m[20], const uint8_t *src, const uint8_t src_byte_of[4],
                                           uint8_t *dst, const uint8_t dst_byte_of[4], size_t count) {
    const int keep_alpha = m[15] == 0 && m[16] == 0 && m[17] == 0 && m[18] == 1 && m[19] == 0;
    const int alpha_in = m[3] != 0 || m[8] != 0 || m[13] != 0 || (!keep_alpha && m[18] != 0);
    if (keep_alpha)
        return alpha_in ? ci_color_matrix_avx2(m, src, src_byte_of, dst, dst_byte_of, count, 1, 1)
                        : ci_color_matrix_avx2(m, src, src_byte_of, dst, dst_byte_of, count, 1, 0);
    return alpha_in ? ci_color_matrix_avx2(m, src, src_byte_of, dst, dst_byte_of, count, 0, 1)
                    : ci_color_matrix_avx2(m, src, src_byte_of, dst, dst_byte_of, count, 0, 0);
}

#endif

void gk_ci_color_matrix(const float m[20], const uint8_t *src, const uint8_t src_byte_of[4],
                        uint8_t *dst, const uint8_t dst_byte_of[4], size_t count) {
    size_t done = 0;
#if defined(__x86_64__)
    static int known = -1;
    int avx2 = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (avx2 < 0) {
        avx2 = gk_cpu_has_avx2();
        __atomic_store_n(&known, avx2, __ATOMIC_RELAXED);
    }
    if (avx2) done = ci_color_matrix_avx2_variant(m, src, src_byte_of, dst, dst_byte_of, count);
#endif
    gk_ci_color_matrix_scalar(m, src + 4 * done, src_byte_of, dst + 4 * done, dst_byte_of, count - done);
}
#pragma clang fp contract(on)
