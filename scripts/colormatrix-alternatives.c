/*
 * The figures behind BENCHMARKS.md's notes on effect.colorMatrix: what the shipped AVX2 kernel
 * does on one and on two threads, what it costs on a row that sits in L1, and the two faster
 * alternatives that were not taken, each with how many of its bytes differ from the definition:
 * 16-bit fixed point with pmaddwd (as vImage's 8-bit matrix multiply works), and fused
 * multiply-adds (one rounding a term; Swift's addingProduct would give the same bytes, but on a
 * CPU without FMA it compiles to a call to libm's fmaf for each lane).
 * A measurement, not part of GraphKit. Run:
 *   mkdir -p out && clang -O2 -pthread -I Sources/CKernels/include scripts/colormatrix-alternatives.c \
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

/* The definition's bytes (the Swift path's and the kernel's), against which the alternatives'
 * are counted. */
static int exact(int o, int r, int g, int b) {
    const float *row = &sepia[4 * o];
    float v = 0.0f + (float)r * row[0] + (float)g * row[1] + (float)b * row[2];
    v = v < 0 ? 0 : v > 255 ? 255 : v;
    return (int)(v + 0.5f);
}

/* Sepia in Q14 with pmaddwd, 8 pixels a step (BGRA): each pixel's (B, G) and (R, A) word pairs
 * against weights for two outputs at a time; rounded by adding 2^13, clamped by the packs. */
static int16_t q[3][3];  /* the sepia weights in Q14 */

__attribute__((target("avx2")))
static void fixed_point(const uint32_t *s, uint32_t *d, size_t n) {
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

/* The shipped kernel's loop for sepia (alpha kept, no A weights, bounded), with each sum fused:
 * fma(B, m2, fma(G, m1, fma(R, m0, ½))), truncated. The ½ rides in the first addend, so the
 * rounding is still half up and costs nothing. */
__attribute__((target("avx2,fma")))
static void fused(const uint32_t *s, uint32_t *d, size_t n) {
    __m256 w[3][3];
    __m256i pick[3];
    for (int c = 0; c < 3; c++) {
        for (int j = 0; j < 3; j++) w[c][j] = _mm256_set1_ps(plan.m[4 * c + j]);
        pick[c] = _mm256_loadu_si256((const __m256i *)plan.pick[c]);
    }
    const __m256i order = _mm256_loadu_si256((const __m256i *)plan.order);
    const __m256 half = _mm256_set1_ps(0.5f);
    for (size_t i = 0; i + 8 <= n; i += 8) {
        const __m256i p = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256 v[3];
        __m256i o[4];
        for (int j = 0; j < 3; j++) v[j] = _mm256_cvtepi32_ps(_mm256_shuffle_epi8(p, pick[j]));
        for (int c = 0; c < 3; c++) {
            __m256 sum = _mm256_fmadd_ps(v[0], w[c][0], half);
            sum = _mm256_fmadd_ps(v[1], w[c][1], sum);
            o[c] = _mm256_cvttps_epi32(_mm256_fmadd_ps(v[2], w[c][2], sum));
        }
        o[3] = _mm256_srli_epi32(p, 24);
        const __m256i packed = _mm256_packus_epi16(_mm256_packs_epi32(o[0], o[1]), _mm256_packs_epi32(o[2], o[3]));
        _mm256_storeu_si256((__m256i *)(d + i), _mm256_shuffle_epi8(packed, order));
    }
}

/* Output o (R, G, B) of one pixel, as each alternative's scalar arithmetic gives it. */
static int fused_scalar(int o, int r, int g, int b) {
    const float *row = &sepia[4 * o];
    float v = fmaf((float)b, row[2], fmaf((float)g, row[1], fmaf((float)r, row[0], 0.5f)));
    return v < 0 ? 0 : v > 255 ? 255 : (int)v;
}

static int fixed_scalar(int o, int r, int g, int b) {
    int v = (r * q[o][0] + g * q[o][1] + b * q[o][2] + 8192) >> 14;
    return v > 255 ? 255 : v;
}

/* Runs `kernel` on every RGB value (BGRA, with varied alpha) and checks each output against
 * `scalar`, and that alpha is kept. */
static int matches(void (*kernel)(const uint32_t *, uint32_t *, size_t), int (*scalar)(int, int, int, int), const char *name) {
    const size_t n = (size_t)1 << 24;
    uint32_t *pixels = malloc(n * 4);
    for (size_t i = 0; i < n; i++) pixels[i] = (uint32_t)i | (uint32_t)(i * 7 % 256) << 24;
    kernel(pixels, pixels, n);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        const int b = i & 255, g = i >> 8 & 255, r = i >> 16 & 255, a = i * 7 % 256;
        const uint32_t p = pixels[i];
        ok = scalar(0, r, g, b) == (int)(p >> 16 & 255) && scalar(1, r, g, b) == (int)(p >> 8 & 255) &&
             scalar(2, r, g, b) == (int)(p & 255) && (int)(p >> 24) == a;
        if (!ok) printf("%s kernel wrong at R %d G %d B %d\n", name, r, g, b);
    }
    free(pixels);
    return ok;
}

/* The core's clock in GHz, to turn ns into cycles: a chain of dependent adds runs at one a cycle. */
static double clock_ghz(void) {
    long n = 500000000, x = 0;
    const double t = now();
    __asm__ volatile("1: add $1, %0\n add $1, %0\n add $1, %0\n add $1, %0\n sub $1, %1\n jnz 1b" : "+r"(x), "+r"(n));
    return 4 * 500000000.0 / (now() - t) / 1e9;
}

typedef struct { uint32_t *pixels; size_t count; pthread_barrier_t *barrier; int fused; } Half;

static void *run_half(void *arg) {
    Half *h = arg;
    for (int f = 0; f < FRAMES; f++) {
        if (h->fused) fused(h->pixels, h->pixels, h->count);
        else gk_color_matrix_avx2(&plan, h->pixels, h->pixels, h->count);
        pthread_barrier_wait(h->barrier);
    }
    return NULL;
}

/* Half a frame on each of two threads, with a barrier at the end of each frame. */
static double two_threads(uint32_t *frame, size_t n, int use_fused) {
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    Half a = {frame, n / 2, &barrier, use_fused}, b = {frame + n / 2, n - n / 2, &barrier, use_fused};
    pthread_t other;
    const double t = now();
    pthread_create(&other, NULL, run_half, &b);
    run_half(&a);
    pthread_join(other, NULL);
    const double fps = FRAMES / (now() - t);
    pthread_barrier_destroy(&barrier);
    return fps;
}

int main(void) {
    const size_t n = (size_t)W * H;
    uint32_t *frame = aligned_alloc(64, n * 4), *copy = aligned_alloc(64, n * 4);
    for (size_t i = 0; i < n * 4; i++) ((uint8_t *)frame)[i] = (uint8_t)(i * 31);
    gk_color_matrix_plan_make(&plan, sepia, no_bias, bgra, 1);
    if (!plan.avx2 || !__builtin_cpu_supports("fma")) { puts("no AVX2 and FMA here"); return 1; }

    double t = now();
    for (int f = 0; f < FRAMES; f++) {
        memcpy(copy, frame, n * 4);
        __asm__ volatile("" : : "r"(copy) : "memory");
    }
    const double memcpy_fps = FRAMES / (now() - t);

    t = now();
    for (int f = 0; f < FRAMES; f++) gk_color_matrix_avx2(&plan, frame, frame, n);
    const double one = FRAMES / (now() - t);

    const double two = two_threads(frame, n, 0);

    /* One 1920-pixel row, over and over: in L1, so arithmetic alone. */
    t = now();
    for (int k = 0; k < 200000; k++) gk_color_matrix_avx2(&plan, frame, frame, W);
    const double ns_per_pixel = (now() - t) / (200000.0 * W) * 1e9;

    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 3; i++) q[o][i] = (int16_t)lrintf(sepia[4 * o + i] * 16384);
    t = now();
    for (int f = 0; f < FRAMES; f++) fixed_point(frame, frame, n);
    const double fixed = FRAMES / (now() - t);

    t = now();
    for (int f = 0; f < FRAMES; f++) fused(frame, frame, n);
    const double fma_fps = FRAMES / (now() - t);
    const double fma_two = two_threads(frame, n, 1);
    t = now();
    for (int k = 0; k < 200000; k++) fused(frame, frame, W);
    const double fma_ns_per_pixel = (now() - t) / (200000.0 * W) * 1e9;

    if (!matches(fused, fused_scalar, "fused") || !matches(fixed_point, fixed_scalar, "fixed point"))
        return 1;

    long differ = 0, fused_differ = 0;
    for (int r = 0; r < 256; r++)
        for (int g = 0; g < 256; g++)
            for (int bl = 0; bl < 256; bl++)
                for (int o = 0; o < 3; o++) {
                    const int e = exact(o, r, g, bl);
                    differ += fixed_scalar(o, r, g, bl) != e;
                    fused_differ += fused_scalar(o, r, g, bl) != e;
                }

    printf("1080p BGRA sepia, frames/s (%d frames each):\n", FRAMES);
    printf("  memcpy, one thread              %6.0f\n", memcpy_fps);
    printf("  kernel, one thread              %6.0f  (%.2fx memcpy)\n", one, one / memcpy_fps);
    printf("  kernel, two threads             %6.0f  (%.2fx memcpy)\n", two, two / memcpy_fps);
    printf("  16-bit fixed point, one thread  %6.0f  (%.2fx memcpy, %.2fx the kernel)\n", fixed, fixed / memcpy_fps, fixed / one);
    printf("  fused multiply-add, one thread  %6.0f  (%.2fx memcpy, %.2fx the kernel)\n", fma_fps, fma_fps / memcpy_fps, fma_fps / one);
    printf("  fused multiply-add, two threads %6.0f  (%.2fx memcpy)\n", fma_two, fma_two / memcpy_fps);
    const double ghz = clock_ghz();
    printf("on a row in L1, ns a pixel: kernel %.3f, fused %.3f; at %.2f GHz, cycles a pixel: %.2f, %.2f\n",
           ns_per_pixel, fma_ns_per_pixel, ghz, ns_per_pixel * ghz, fma_ns_per_pixel * ghz);
    printf("against the definition's bytes, over every RGB value: fixed point %ld of %d outputs differ (%.2f %%), fused %ld (%.4f %%)\n",
           differ, 3 << 24, 100.0 * differ / (3 << 24), fused_differ, 100.0 * fused_differ / (3 << 24));
    return 0;
}
