#include "CKernels.h"

#include <limits.h>

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

#endif

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
