#include "CKernels.h"

#include <limits.h>
#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* (l + r) / 2 truncates toward zero, and halving never lowers a value, so the range of the
 * halves is the halves of the range of the sums. */
static void scalar_tail(const int16_t *s, size_t from, size_t frames, int32_t *lo, int32_t *hi) {
    for (size_t f = from; f < frames; f++) {
        int32_t v = ((int32_t)s[2 * f] + (int32_t)s[2 * f + 1]) / 2;
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
    }
}

#if defined(__x86_64__)

/* 8 frames a step. pmaddwd against ones gives each frame's exact sum in a 32-bit lane; the
 * truncated half fits 16 bits, so it is packed and kept with the 16-bit min and max SSE2 has. */
void gk_stereo_half_sum_range_sse2(const int16_t *s, size_t frames, int32_t *min_value, int32_t *max_value) {
    const __m128i ones = _mm_set1_epi16(1);
    __m128i lo = _mm_set1_epi16(INT16_MAX), hi = _mm_set1_epi16(INT16_MIN);
    size_t f = 0;
    for (; f + 8 <= frames; f += 8) {
        __m128i a = _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(s + 2 * f)), ones);
        __m128i b = _mm_madd_epi16(_mm_loadu_si128((const __m128i *)(s + 2 * f + 8)), ones);
        a = _mm_srai_epi32(_mm_add_epi32(a, _mm_srli_epi32(a, 31)), 1);
        b = _mm_srai_epi32(_mm_add_epi32(b, _mm_srli_epi32(b, 31)), 1);
        __m128i v = _mm_packs_epi32(a, b);
        lo = _mm_min_epi16(lo, v);
        hi = _mm_max_epi16(hi, v);
    }
    int32_t l = INT32_MAX, h = INT32_MIN;
    if (f > 0) {
        /* Across the 8 lanes: halves, then quarters, then neighbours. */
        lo = _mm_min_epi16(lo, _mm_shuffle_epi32(lo, _MM_SHUFFLE(1, 0, 3, 2)));
        hi = _mm_max_epi16(hi, _mm_shuffle_epi32(hi, _MM_SHUFFLE(1, 0, 3, 2)));
        lo = _mm_min_epi16(lo, _mm_shuffle_epi32(lo, _MM_SHUFFLE(2, 3, 0, 1)));
        hi = _mm_max_epi16(hi, _mm_shuffle_epi32(hi, _MM_SHUFFLE(2, 3, 0, 1)));
        lo = _mm_min_epi16(lo, _mm_shufflelo_epi16(lo, _MM_SHUFFLE(2, 3, 0, 1)));
        hi = _mm_max_epi16(hi, _mm_shufflelo_epi16(hi, _MM_SHUFFLE(2, 3, 0, 1)));
        l = (int16_t)_mm_extract_epi16(lo, 0);
        h = (int16_t)_mm_extract_epi16(hi, 0);
    }
    scalar_tail(s, f, frames, &l, &h);
    *min_value = l;
    *max_value = h;
}

/* 16 frames a step: the sums stay 32-bit (AVX2 has 32-bit min and max), halved once at the end. */
__attribute__((target("avx2")))
void gk_stereo_half_sum_range_avx2(const int16_t *s, size_t frames, int32_t *min_value, int32_t *max_value) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i lo0 = _mm256_set1_epi32(INT32_MAX), lo1 = lo0;
    __m256i hi0 = _mm256_set1_epi32(INT32_MIN), hi1 = hi0;
    size_t f = 0;
    for (; f + 16 <= frames; f += 16) {
        __m256i a = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(s + 2 * f)), ones);
        __m256i b = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(s + 2 * f + 16)), ones);
        lo0 = _mm256_min_epi32(lo0, a);
        hi0 = _mm256_max_epi32(hi0, a);
        lo1 = _mm256_min_epi32(lo1, b);
        hi1 = _mm256_max_epi32(hi1, b);
    }
    int32_t l = INT32_MAX, h = INT32_MIN;
    if (f > 0) {
        /* Across the 8 lanes: the two 128-bit halves, then halves, then neighbours. */
        __m256i lo8 = _mm256_min_epi32(lo0, lo1), hi8 = _mm256_max_epi32(hi0, hi1);
        __m128i lo4 = _mm_min_epi32(_mm256_castsi256_si128(lo8), _mm256_extracti128_si256(lo8, 1));
        __m128i hi4 = _mm_max_epi32(_mm256_castsi256_si128(hi8), _mm256_extracti128_si256(hi8, 1));
        lo4 = _mm_min_epi32(lo4, _mm_shuffle_epi32(lo4, _MM_SHUFFLE(1, 0, 3, 2)));
        hi4 = _mm_max_epi32(hi4, _mm_shuffle_epi32(hi4, _MM_SHUFFLE(1, 0, 3, 2)));
        lo4 = _mm_min_epi32(lo4, _mm_shuffle_epi32(lo4, _MM_SHUFFLE(2, 3, 0, 1)));
        hi4 = _mm_max_epi32(hi4, _mm_shuffle_epi32(hi4, _MM_SHUFFLE(2, 3, 0, 1)));
        l = _mm_cvtsi128_si32(lo4) / 2;
        h = _mm_cvtsi128_si32(hi4) / 2;
    }
    scalar_tail(s, f, frames, &l, &h);
    *min_value = l;
    *max_value = h;
}

int gk_cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

/* The colour matrix, 8 pixels a step. Multiplies and adds stay separate and in the order of the
 * Swift path (target avx2 without fma, contraction off), so both give the same bytes.
 * The flags are constants in each caller below, so each combination is its own loop:
 * keep_alpha (alpha copied), alpha_in (some used row weighs A), bias (some used bias is not 0),
 * bounded (no sum can reach ±2^30, so the conversion cannot overflow and the packs alone clamp). */
#pragma clang fp contract(off)
__attribute__((target("avx2"), always_inline))
static inline size_t color_matrix_avx2(const gk_color_matrix_plan *plan, const uint32_t *src, uint32_t *dst,
                                       size_t count, const int keep_alpha, const int alpha_in,
                                       const int bias, const int bounded) {
    const int outputs = keep_alpha ? 3 : 4, inputs = alpha_in ? 4 : 3;
    __m256 w[4][4], b[4];
    __m256i pick[4];
    for (int c = 0; c < 4; c++) {
        for (int j = 0; j < 4; j++) w[c][j] = _mm256_set1_ps(plan->m[4 * c + j]);
        b[c] = _mm256_set1_ps(plan->k[c]);
        pick[c] = _mm256_loadu_si256((const __m256i *)plan->pick[c]);
    }
    const __m256i order = _mm256_loadu_si256((const __m256i *)plan->order);
    const __m256 top = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f);

    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i p = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256 v[4];
        for (int j = 0; j < inputs; j++) v[j] = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(p, pick[j]));
        __m256i o[4];
        for (int c = 0; c < outputs; c++) {
            __m256 s = bias ? _mm256_add_ps(b[c], _mm256_mul_ps(v[0], w[c][0])) : _mm256_mul_ps(v[0], w[c][0]);
            for (int j = 1; j < inputs; j++) s = _mm256_add_ps(s, _mm256_mul_ps(v[j], w[c][j]));
            /* Unbounded: min(255, s) first, with NaN kept as NaN (it converts to INT32_MIN, then
             * packs to 0, as the Swift path's max(0, NaN) gives 0). Below 0, the packs clamp. */
            if (!bounded) s = _mm256_min_ps(top, s);
            o[c] = _mm256_cvttps_epi32(_mm256_add_ps(s, half));
        }
        if (keep_alpha) o[3] = _mm256_srli_epi32(p, 24);
        const __m256i packed = _mm256_packus_epi16(_mm256_packs_epi32(o[0], o[1]), _mm256_packs_epi32(o[2], o[3]));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_shuffle_epi8(packed, order));
    }
    return i;
}
#pragma clang fp contract(on)

/* The loop this plan chose. */
__attribute__((target("avx2")))
static size_t color_matrix_avx2_variant(const gk_color_matrix_plan *plan, const uint32_t *src, uint32_t *dst,
                                        size_t count) {
#define VARIANT(ka, ai, bi, bd) \
    case ka << 3 | ai << 2 | bi << 1 | bd: return color_matrix_avx2(plan, src, dst, count, ka, ai, bi, bd);
    switch (plan->variant) {
    VARIANT(0, 0, 0, 0) VARIANT(0, 0, 0, 1) VARIANT(0, 0, 1, 0) VARIANT(0, 0, 1, 1)
    VARIANT(0, 1, 0, 0) VARIANT(0, 1, 0, 1) VARIANT(0, 1, 1, 0) VARIANT(0, 1, 1, 1)
    VARIANT(1, 0, 0, 0) VARIANT(1, 0, 0, 1) VARIANT(1, 0, 1, 0) VARIANT(1, 0, 1, 1)
    VARIANT(1, 1, 0, 0) VARIANT(1, 1, 0, 1) VARIANT(1, 1, 1, 0) default: VARIANT(1, 1, 1, 1)
    }
#undef VARIANT
}

/* gk_cpu_has_avx2, asked once. */
static int has_avx2(void) {
    static int known = -1;
    int avx2 = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (avx2 < 0) {
        avx2 = gk_cpu_has_avx2();
        __atomic_store_n(&known, avx2, __ATOMIC_RELAXED);
    }
    return avx2;
}

size_t gk_color_matrix_avx2(const gk_color_matrix_plan *plan, const uint32_t *src, uint32_t *dst, size_t count) {
    return plan->avx2 ? color_matrix_avx2_variant(plan, src, dst, count) : 0;
}

/* 8 pixels a step. pmaddwd gives each pixel's two weighted pairs, hadd joins them, in pixel
 * order; then ((s + 500) >> 3) × 33555 >> 22, the exact division by 1000 of the Swift path.
 * The luma byte goes to R, G and B with one shuffle. */
__attribute__((target("avx2")))
static size_t grayscale_avx2(const uint32_t *src, uint32_t *dst, size_t count, const uint8_t *byte_of) {
    int16_t weight_words[16] = {0};
    for (int i = 0; i < 16; i += 4) {
        weight_words[i + byte_of[0]] = 299;
        weight_words[i + byte_of[1]] = 587;
        weight_words[i + byte_of[2]] = 114;
    }
    const __m256i weights = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)weight_words));
    const __m256i round = _mm256_set1_epi32(500), reciprocal = _mm256_set1_epi32(33555);
    const __m256i alpha = _mm256_set1_epi32((int)0xFF000000u), zero = _mm256_setzero_si256();
    /* The low byte of each lane into bytes 0, 1 and 2 of that lane; byte 3 zero. */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, -128, 4, 4, 4, -128, 8, 8, 8, -128, 12, 12, 12, -128,
                                            0, 0, 0, -128, 4, 4, 4, -128, 8, 8, 8, -128, 12, 12, 12, -128);
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256i p = _mm256_loadu_si256((const __m256i *)(src + i));
        const __m256i low = _mm256_madd_epi16(_mm256_unpacklo_epi8(p, zero), weights);
        const __m256i high = _mm256_madd_epi16(_mm256_unpackhi_epi8(p, zero), weights);
        const __m256i s = _mm256_add_epi32(_mm256_hadd_epi32(low, high), round);
        const __m256i y = _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_srli_epi32(s, 3), reciprocal), 22);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_or_si256(_mm256_shuffle_epi8(y, spread), _mm256_and_si256(p, alpha)));
    }
    return i;
}

size_t gk_grayscale_avx2(const uint32_t *src, uint32_t *dst, size_t count, const uint8_t byte_of[3]) {
    return has_avx2() ? grayscale_avx2(src, dst, count, byte_of) : 0;
}

#else

void gk_stereo_half_sum_range_sse2(const int16_t *s, size_t frames, int32_t *min_value, int32_t *max_value) {
    int32_t l = INT32_MAX, h = INT32_MIN;
    scalar_tail(s, 0, frames, &l, &h);
    *min_value = l;
    *max_value = h;
}

void gk_stereo_half_sum_range_avx2(const int16_t *s, size_t frames, int32_t *min_value, int32_t *max_value) {
    gk_stereo_half_sum_range_sse2(s, frames, min_value, max_value);
}

int gk_cpu_has_avx2(void) { return 0; }

size_t gk_color_matrix_avx2(const gk_color_matrix_plan *plan, const uint32_t *src, uint32_t *dst, size_t count) {
    (void)plan; (void)src; (void)dst; (void)count;
    return 0;
}

size_t gk_grayscale_avx2(const uint32_t *src, uint32_t *dst, size_t count, const uint8_t byte_of[3]) {
    (void)src; (void)dst; (void)count; (void)byte_of;
    return 0;
}

#endif

void gk_color_matrix_plan_make(gk_color_matrix_plan *plan, const float m[16], const float k[4],
                               const uint8_t byte_of[4], int keep_alpha) {
    const int rows = keep_alpha ? 3 : 4;
    int alpha_in = 0, bias = 0;
    double largest = 0;
    for (int c = 0; c < 4; c++) {
        for (int j = 0; j < 4; j++) plan->m[4 * c + j] = m[4 * c + j];
        plan->k[c] = k[c];
        if (c >= rows) continue;
        alpha_in |= m[4 * c + 3] != 0;
        bias |= k[c] != 0;
        double sum = fabs(k[c]);
        for (int j = 0; j < 4; j++) sum += 255.0 * fabs(m[4 * c + j]);
        if (sum > largest) largest = sum;
    }
    plan->variant = (keep_alpha ? 8 : 0) | (alpha_in ? 4 : 0) | (bias ? 2 : 0) | (largest < 0x1p30 ? 1 : 0);
    /* pick[c]: channel c's byte of each pixel into the low byte of its 32-bit lane, the rest 0.
     * order: after packing, a 128-bit lane holds R of its 4 pixels, then G, B and A; this puts
     * each back at its byte in each pixel. */
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 32; i++) plan->pick[c][i] = i % 4 == 0 ? (uint8_t)(i % 16 + byte_of[c]) : 0x80;
    for (int i = 0; i < 32; i++) {
        int pixel = i % 16 / 4, byte = i % 4, channel = 0;
        while (channel < 3 && byte_of[channel] != byte) channel++;
        plan->order[i] = (uint8_t)(channel * 4 + pixel);
    }
    plan->avx2 = gk_cpu_has_avx2();
}

typedef void (*range_fn)(const int16_t *, size_t, int32_t *, int32_t *);

void gk_stereo_half_sum_range(const int16_t *samples, size_t frames, int32_t *min_value, int32_t *max_value) {
    static range_fn chosen;
    range_fn fn = __atomic_load_n(&chosen, __ATOMIC_RELAXED);
    if (fn == NULL) {
        /* Any thread may choose; every one chooses the same. */
        fn = gk_cpu_has_avx2() ? gk_stereo_half_sum_range_avx2 : gk_stereo_half_sum_range_sse2;
        __atomic_store_n(&chosen, fn, __ATOMIC_RELAXED);
    }
    fn(samples, frames, min_value, max_value);
}

uint64_t gk_sum_abs_diff(const uint8_t *a, const uint8_t *b, size_t n) {
    uint64_t total = 0;
    size_t i = 0;
#if defined(__SSE2__)
    /* psadbw sums eight differences into each 64-bit half: no lane can overflow. */
    __m128i sums = _mm_setzero_si128();
    for (; i + 16 <= n; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(a + i)), y = _mm_loadu_si128((const __m128i *)(b + i));
        sums = _mm_add_epi64(sums, _mm_sad_epu8(x, y));
    }
    total = (uint64_t)_mm_cvtsi128_si64(sums) + (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
#endif
    for (; i < n; i++) total += (uint64_t)(a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
    return total;
}

void gk_luma_half(const uint8_t *src, size_t stride, size_t width, size_t height, uint8_t *dst) {
    if (width == 0) return;
    for (size_t y = 0; y < height; y++) {
        const uint8_t *row = src + 2 * y * stride;
        uint8_t *out = dst + y * width;
        size_t x = 0;
#if defined(__SSE2__)
        /* A decoded frame comes from memory, not the cache (other frames were decoded since),
         * and rows two apart defeat the hardware's prefetch: the next row read is asked for a
         * cache line at a time while this one is read (half the time a 1080p frame took,
         * measured). A prefetch reads nothing, and the last row asks for none. */
        const uint8_t *next = y + 1 < height ? row + 2 * stride : NULL;
        /* Sixteen outputs from 32 bytes, the even ones (the low byte of each 16-bit lane), while
         * the 32 bytes are all within the row's 2·width − 1 that may be read. */
        const __m128i low = _mm_set1_epi16(0x00ff);
        for (; 2 * (x + 16) <= 2 * width - 1; x += 16) {
            if (next && (x & 31) == 0) _mm_prefetch((const char *)(next + 2 * x), _MM_HINT_T0);
            __m128i p = _mm_and_si128(_mm_loadu_si128((const __m128i *)(row + 2 * x)), low);
            __m128i q = _mm_and_si128(_mm_loadu_si128((const __m128i *)(row + 2 * x + 16)), low);
            _mm_storeu_si128((__m128i *)(out + x), _mm_packus_epi16(p, q));
        }
#endif
        for (; x < width; x++) out[x] = row[2 * x];
    }
}
