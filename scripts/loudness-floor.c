/*
 * The figure behind BENCHMARKS.md's note on issue 51's "within 1.2x the decode-only floor": the
 * least arithmetic an EBU R128 / BS.1770 meter does on 10 minutes of 44.1 kHz stereo, held in
 * memory (no decoding, no reading), in plain C at -O3 -march=native -ffast-math:
 * - the K-weighting, two cascaded biquads per channel (a recurrence: each output needs the one
 *   before, so only the two channels overlap) and the squares summed;
 * - the true peak, 4x oversampling by a 48-tap polyphase filter (12 taps a phase: 48
 *   multiply-adds per channel-sample, as libebur128's), vectorized across time.
 * Best of three rounds. A measurement, not part of GraphKit. Run:
 *   mkdir -p out && gcc -O3 -march=native -ffast-math scripts/loudness-floor.c -lm -o out/loudness-floor && out/loudness-floor
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    const long frames = 44100L * 600;
    float *x = malloc(sizeof(float) * frames * 2), *s = malloc(sizeof(float) * frames), *o = malloc(sizeof(float) * frames);
    if (!x || !s || !o) return 1;
    srand(1);
    for (long i = 0; i < frames * 2; i++) x[i] = (float)(rand() / (double)RAND_MAX * 2 - 1) * 0.5f;
    /* BS.1770's K-weighting at 48 kHz (the cost does not depend on the values). */
    const float b0 = 1.53512486f, b1 = -2.69169619f, b2 = 1.19839281f, a1 = -1.69065929f, a2 = 0.73248077f;
    const float c1 = -2.0f, d1 = -1.99004745f, d2 = 0.99007225f;
    float h[4][12];
    for (int p = 0; p < 4; p++)
        for (int k = 0; k < 12; k++) h[p][k] = sinf((p * 12 + k) * 0.3f) / (p * 12 + k + 1);
    double best[2] = {1e9, 1e9};
    double sum[2] = {0, 0};
    float peak = 0;
    for (int round = 0; round < 3; round++) {
        double t0 = now();
        float z1[2] = {0}, z2[2] = {0}, w1[2] = {0}, w2[2] = {0};
        sum[0] = sum[1] = 0;
        for (long i = 0; i < frames; i++) {
            for (int c = 0; c < 2; c++) {
                float in = x[2 * i + c];
                float y = b0 * in + z1[c];
                z1[c] = b1 * in - a1 * y + z2[c];
                z2[c] = b2 * in - a2 * y;
                float v = y + w1[c];
                w1[c] = c1 * y - d1 * v + w2[c];
                w2[c] = y - d2 * v;
                sum[c] += v * v;
            }
        }
        double t1 = now();
        peak = 0;
        for (int c = 0; c < 2; c++) {
            for (long i = 0; i < frames; i++) s[i] = x[2 * i + c];
            for (int p = 0; p < 4; p++) {
                for (long i = 12; i < frames; i++) {
                    float acc = 0;
                    for (int k = 0; k < 12; k++) acc += h[p][k] * s[i - k];
                    o[i] = acc;
                }
                for (long i = 12; i < frames; i++) peak = fabsf(o[i]) > peak ? fabsf(o[i]) : peak;
            }
        }
        double t2 = now();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
    }
    printf("K-weighting and squares %.3f s, true peak %.3f s, together %.3f s (checks: %g %g)\n", best[0], best[1],
           best[0] + best[1], sum[0] + sum[1], peak);
    return 0;
}
