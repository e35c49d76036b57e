/*
 * The figures behind BENCHMARKS.md's notes on effect.colorMatrix: what the shipped AVX2 kernel
 * does on one and on two threads, what it costs on a row that sits in L1, and the one faster
 * alternative that was not taken (16-bit fixed point with pmaddwd, as vImage's 8-bit matrix
 * multiply works), with how many of its bytes differ from the exact definition.
 * A measurement, not part of GraphKit. Run:
 *   clang -O2 -pthread -I Sources/CKernels/include scripts/colormatrix-alternatives.c \
 *       Sources/CKernels/kernels.c -lm -o out/colormatrix-alternatives && out/colormatrix-alternatives
 */
#include "CKernels.h"

#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { W = 1920, H = 1080, FRAMES = 300 };
static const float sepia[16] = {0.393f, 0.769f, 0.189f, 0, 0.349f, 0.686f, 0.168f, 0, 0.272f, 0.534f, 0.131f, 0, 0, 0, 0, 1};
static const float no_bias[4] = {0, 0, 0, 0};
static const uint8_t bgra[4] = {2, 1, 0, 3};
static gk_color_matrix_plan plan;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The rounding of the Swift path and the kernel, for the fixed-point comparison. */
static int exact(const float *row, int r, int g, int b) {
    float v = 0.0f + (float)r * row[0] + (float)g * row[1] + (float)b * row[2];
    v = v < 0 ? 0 : v > 255 ? 255 : v;
    return (int)(v + 0.5f);
}

/* Sepia in Q14 with pmaddwd, 8 pixels a step (BGRA): each pixel's (B, G) and (R, A) word pairs
 * against weights for two outputs at a time; rounded by adding 2^13, clamped by the packs. */
__attribute__((target("avx2")))
static void fixed_point(const uint32_t *s, uint32_t *d, size_t n, const int16_t q[3][3]) {
    /* Per pixel, x holds the word pairs (B, G), (R, A) and y the same swapped. Outputs B and G
     * come from x against (bB, bG | gR, 0) plus y against (bR, 0 | gB, gG); R and A likewise. */
#define PAIRS(a, b, c, d) _mm256_setr_epi16(a, b, c, d, a, b, c, d, a, b, c, d, a, b, c, d)
    const __m256i bgX = PAIRS(q[2][2], q[2][1], q[1][0], 0), bgY = PAIRS(q[2][0], 0, q[1][2], q[1][1]);
    const __m256i raX = PAIRS(q[0][2], q[0][1], 0, 16384), raY = PAIRS(q[0][0], 0, 0, 0);
#undef PAIRS
    const __m256i half = _mm256_set1_epi32(8192), zero = _mm256_setzero_si256();
    for (size_t i = 0; i + 8 <= n; i += 8) {
        __m256i p = _mm256_loadu_si256((const __m256i *)(s + i)), o[2];
        for (int h = 0; h < 2; h++) {
            /* Two pixels per 128-bit lane as words B G R A; swapped: R A B G. */
            __m256i x = h ? _mm256_unpackhi_epi8(p, zero) : _mm256_unpacklo_epi8(p, zero);
            __m256i y = _mm256_shuffle_epi32(x, 0xB1);
            __m256i bg = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(x, bgX), _mm256_madd_epi16(y, bgY)), half);
            __m256i ra = _mm256_add_epi32(_mm256_add_epi32(_mm256_madd_epi16(x, raX), _mm256_madd_epi16(y, raY)), half);
            bg = _mm256_srai_epi32(bg, 14);
            ra = _mm256_srai_epi32(ra, 14);
            o[h] = _mm256_packs_epi32(_mm256_unpacklo_epi64(bg, ra), _mm256_unpackhi_epi64(bg, ra));
        }
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_packus_epi16(o[0], o[1]));
    }
}

typedef struct { uint32_t *pixels; size_t count; pthread_barrier_t *barrier; } Half;

static void *run_half(void *arg) {
    Half *h = arg;
    for (int f = 0; f < FRAMES; f++) {
        gk_color_matrix_avx2(&plan, h->pixels, h->pixels, h->count);
        pthread_barrier_wait(h->barrier);
    }
    return NULL;
}

int main(void) {
    const size_t n = (size_t)W * H;
    uint32_t *frame = aligned_alloc(64, n * 4), *copy = aligned_alloc(64, n * 4);
    for (size_t i = 0; i < n * 4; i++) ((uint8_t *)frame)[i] = (uint8_t)(i * 31);
    gk_color_matrix_plan_make(&plan, sepia, no_bias, bgra, 1);
    if (!plan.avx2) { puts("no AVX2 here"); return 1; }

    double t = now();
    for (int f = 0; f < FRAMES; f++) {
        memcpy(copy, frame, n * 4);
        __asm__ volatile("" : : "r"(copy) : "memory");
    }
    const double memcpy_fps = FRAMES / (now() - t);

    t = now();
    for (int f = 0; f < FRAMES; f++) gk_color_matrix_avx2(&plan, frame, frame, n);
    const double one = FRAMES / (now() - t);

    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    Half a = {frame, n / 2, &barrier}, b = {frame + n / 2, n - n / 2, &barrier};
    pthread_t other;
    t = now();
    pthread_create(&other, NULL, run_half, &b);
    run_half(&a);
    pthread_join(other, NULL);
    const double two = FRAMES / (now() - t);

    /* One 1920-pixel row, over and over: in L1, so arithmetic alone. */
    t = now();
    for (int k = 0; k < 200000; k++) gk_color_matrix_avx2(&plan, frame, frame, W);
    const double ns_per_pixel = (now() - t) / (200000.0 * W) * 1e9;

    int16_t q[3][3];
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 3; i++) q[o][i] = (int16_t)lrintf(sepia[4 * o + i] * 16384);
    t = now();
    for (int f = 0; f < FRAMES; f++) fixed_point(frame, frame, n, (const int16_t(*)[3])q);
    const double fixed = FRAMES / (now() - t);

    /* The vector fixed point is the scalar fixed point below, checked on a fresh frame. */
    for (size_t i = 0; i < n * 4; i++) ((uint8_t *)copy)[i] = (uint8_t)(i * 31);
    memcpy(frame, copy, n * 4);
    fixed_point(frame, frame, n, (const int16_t(*)[3])q);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *in = (const uint8_t *)&copy[i], *out = (const uint8_t *)&frame[i];
        for (int o = 0; o < 3; o++) {
            int v = (in[2] * q[o][0] + in[1] * q[o][1] + in[0] * q[o][2] + 8192) >> 14;
            if ((v > 255 ? 255 : v) != out[2 - o] || out[3] != in[3]) { printf("fixed point kernel wrong at %zu\n", i); return 1; }
        }
    }

    long differ = 0;
    for (int r = 0; r < 256; r++)
        for (int g = 0; g < 256; g++)
            for (int bl = 0; bl < 256; bl++)
                for (int o = 0; o < 3; o++) {
                    int v = (r * q[o][0] + g * q[o][1] + bl * q[o][2] + 8192) >> 14;
                    differ += (v > 255 ? 255 : v) != exact(&sepia[4 * o], r, g, bl);
                }

    printf("1080p BGRA sepia, frames/s (%d frames each):\n", FRAMES);
    printf("  memcpy, one thread              %6.0f\n", memcpy_fps);
    printf("  kernel, one thread              %6.0f  (%.2fx memcpy)\n", one, one / memcpy_fps);
    printf("  kernel, two threads             %6.0f  (%.2fx memcpy)\n", two, two / memcpy_fps);
    printf("  16-bit fixed point, one thread  %6.0f  (%.2fx memcpy, %.2fx the kernel)\n", fixed, fixed / memcpy_fps, fixed / one);
    printf("kernel on a row in L1: %.3f ns a pixel\n", ns_per_pixel);
    printf("fixed point against the exact bytes: %ld of %d outputs differ (%.2f %%)\n", differ, 3 << 24, 100.0 * differ / (3 << 24));
    return 0;
}
