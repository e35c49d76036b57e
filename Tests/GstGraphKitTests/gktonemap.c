/*
 * gktonemap (Sources/GstGraphKit/gktonemap) alone in GStreamer's harness: every output sample
 * against the method done here in double precision (kernel.c's steps, without its tables) on
 * HLG and PQ frames of a spread of values, in each input layout (10-bit and 8-bit); an HDR10 grey ramp that
 * stays monotonic and rolls off up to the source's peak instead of clipping flat, the peak taken
 * from the caps' mastering display when they carry one; the output caps (I420, bt709, no HDR
 * fields); SDR passed through untouched.
 */
#include <math.h>
#include <string.h>
#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/video/video.h>
#include "common.h"

#define KNEE 0.9
#define WHITE 203.0

static double rolloff(double x, double knee, double peak) {
    if (x <= 0) return 0;
    if (peak <= 1) return x < 1 ? x : 1;
    if (x <= knee) return x;
    if (x >= peak) return 1;
    const double u = (x - knee) / (1 - knee), w = (peak - knee) / (1 - knee);
    return knee + (1 - knee) * u * (1 + u / (w * w)) / (1 + u);
}
static double pq_nits(double e) {
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
    if (e <= 0) return 0;
    const double p = pow(e, 1 / m2);
    return 10000 * pow(fmax(p - c1, 0) / (c2 - c3 * p), 1 / m1);
}
static double pq_signal(double nits) {
    const double m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128, c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32;
    const double y = pow(nits / 10000, m1);
    return pow((c1 + c2 * y) / (1 + c3 * y), m2);
}
static double hlg_scene(double e) {
    const double a = 0.17883277, b = 1 - 4 * a, c = 0.5 - a * log(4 * a);
    if (e <= 0) return 0;
    return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12;
}

/* BT.709 R'G'B' (0..1) of one 10-bit BT.2020 limited-range sample, as kernel.c says the method. */
static void exact(gboolean hlg, double peak, int y, int cb, int cr, double out[3]) {
    const double yn = (y - 64) / 876.0, u = (cb - 512) / 896.0, v = (cr - 512) / 896.0;
    const double kr = 0.2627, kb = 0.0593, kg = 1 - kr - kb;
    const double rgb[3] = { yn + 2 * (1 - kr) * v, yn - 2 * (1 - kb) * kb / kg * u - 2 * (1 - kr) * kr / kg * v, yn + 2 * (1 - kb) * u };
    double lin[3];
    for (int i = 0; i < 3; i++) {
        const double s = fmin(fmax(rgb[i], 0), 1);
        lin[i] = hlg ? hlg_scene(s) : pq_nits(s) / WHITE;
    }
    const double lum = fmax(kr * lin[0] + kg * lin[1] + kb * lin[2], 1e-12);
    const double gain = hlg ? rolloff(1000 * pow(lum, 1.2) / WHITE, KNEE, 1000 / WHITE) / lum : rolloff(lum, KNEE, peak / WHITE) / lum;
    static const double m[9] = { 1.6605, -0.5876, -0.0728, -0.1246, 1.1329, -0.0083, -0.0182, -0.1006, 1.1187 };
    double c[3];
    for (int i = 0; i < 3; i++) c[i] = gain * (m[3 * i] * lin[0] + m[3 * i + 1] * lin[1] + m[3 * i + 2] * lin[2]);
    const double l = fmin(fmax(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2], 0), 1);
    const double mn = fmin(c[0], fmin(c[1], c[2])), mx = fmax(c[0], fmax(c[1], c[2]));
    double t = 1;
    if (mn < 0) t = fmin(t, l / (l - mn));
    if (mx > 1) t = fmin(t, (1 - l) / (mx - l));
    for (int i = 0; i < 3; i++) out[i] = pow(fmin(fmax(l + t * (c[i] - l), 0), 1), 1 / 2.4);
}

typedef enum { I420_10LE, P010_10LE, I420, NV12 } Layout;

/* A w×h frame: sample (x, y) of plane p is value(x, y, p) (chroma at half size), a 10-bit value
 * (8-bit layouts take its top 8 bits). */
static GstBuffer *frame10(Layout layout, int w, int h, int (*value)(int x, int y, int plane)) {
    static const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_I420_10LE, GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12 };
    GstVideoInfo info;
    gst_video_info_set_format(&info, formats[layout], w, h);
    GstBuffer *buffer = gst_buffer_new_allocate(NULL, info.size, NULL);
    GstVideoFrame f;
    fail_unless(gst_video_frame_map(&f, &info, buffer, GST_MAP_WRITE));
    const gboolean wide = layout == I420_10LE || layout == P010_10LE, planar = layout == I420_10LE || layout == I420;
    const int shift = layout == P010_10LE ? 6 : 0;
#define AT(plane, x, y) ((guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&f, plane) + (y) * GST_VIDEO_FRAME_PLANE_STRIDE(&f, plane))
#define PUT(plane, x, y, v) do { if (wide) ((guint16 *)AT(plane, x, y))[x] = (guint16)((v) << shift); else AT(plane, x, y)[x] = (guint8)((v) >> 2); } while (0)
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) PUT(0, x, y, value(x, y, 0));
    for (int y = 0; y < (h + 1) / 2; y++)
        for (int x = 0; x < (w + 1) / 2; x++) {
            if (planar) {
                PUT(1, x, y, value(x, y, 1));
                PUT(2, x, y, value(x, y, 2));
            } else {
                PUT(1, 2 * x, y, value(x, y, 1));
                PUT(1, 2 * x + 1, y, value(x, y, 2));
            }
        }
#undef PUT
#undef AT
    gst_video_frame_unmap(&f);
    return buffer;
}

/* A spread of legal 10-bit values, edge cases (black, white, the extremes of chroma) first. */
static int spread(int x, int y, int plane) {
    const guint32 n = (guint32)((y * 97 + x) * 3 + plane) * 2654435761u;
    if (plane == 0) return x < 4 && y < 2 ? (int[]){ 64, 940, 64, 940 }[x] : 64 + (int)(n >> 8) % 877;
    if (x == 0 && y == 0) return plane == 1 ? 64 : 960;
    if (x == 1 && y == 0) return 512;
    return 64 + (int)(n >> 8) % 897;
}

static GstHarness *harness_with_knee(const char *format, const char *colorimetry, int w, int h, const char *extra, double knee) {
    GstHarness *hs = gst_harness_new("gktonemap");
    g_object_set(hs->element, "knee", knee, NULL);
    char *caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=30/1,colorimetry=%s%s", format, w, h, colorimetry,
                                 extra ? extra : "");
    gst_harness_set_src_caps_str(hs, caps);
    g_free(caps);
    return hs;
}
static GstHarness *harness(const char *format, const char *colorimetry, int w, int h, const char *extra) {
    return harness_with_knee(format, colorimetry, w, h, extra, KNEE);
}

static const struct {
    const char *format;
    Layout layout;
    const char *colorimetry;
    gboolean hlg;
    int w, h;
} cases[] = {
    { "I420_10LE", I420_10LE, "bt2100-pq", FALSE, 64, 48 }, { "I420_10LE", I420_10LE, "bt2100-hlg", TRUE, 64, 48 },
    { "P010_10LE", P010_10LE, "bt2100-pq", FALSE, 62, 46 }, { "P010_10LE", P010_10LE, "bt2100-hlg", TRUE, 63, 47 },
    { "I420", I420, "bt2100-pq", FALSE, 64, 48 },           { "NV12", NV12, "bt2100-hlg", TRUE, 62, 46 },
};

GST_START_TEST(test_from_the_plugin_file) { gk_check_from_plugin_file("gktonemap"); }
GST_END_TEST;

/* Every output sample against the exact method on the 10-bit input it came from: luma per pixel,
 * chroma from the 2x2 block's mean R'G'B'. Within one step nearly everywhere; a few steps where
 * a channel of the BT.709 result cancels to near 0 and the tables' relative steps meet the SDR
 * curve's steep start. */
GST_START_TEST(test_every_sample_against_the_exact_method) {
    const int c = __i__;
    const int w = cases[c].w, h = cases[c].h;
    GstHarness *hs = harness(cases[c].format, cases[c].colorimetry, w, h, NULL);
    GstBuffer *out = gst_harness_push_and_pull(hs, frame10(cases[c].layout, w, h, spread));
    fail_unless(out != NULL);
    GstVideoInfo info;
    GstCaps *caps = gk_check_output_caps(hs);
    fail_unless(gst_video_info_from_caps(&info, caps));
    GstVideoFrame f;
    fail_unless(gst_video_frame_map(&f, &info, out, GST_MAP_READ));
    int worst = 0, over_one = 0, count = 0;
    for (int cy = 0; cy < (h + 1) / 2; cy++)
        for (int cx = 0; cx < (w + 1) / 2; cx++) {
            double sum[3] = { 0, 0, 0 };
            for (int d = 0; d < 4; d++) {
                const int x = MIN(2 * cx + (d & 1), w - 1), y = MIN(2 * cy + d / 2, h - 1);
                double rgb[3];
                /* what the element read: 8-bit layouts the top 8 bits, which are (code - 16) / 219 as
                 * their 10-bit value × 4 is (code × 4 - 64) / 876 */
                const int keep = cases[c].layout == I420 || cases[c].layout == NV12 ? ~3 : ~0;
                exact(cases[c].hlg, 1000, spread(x, y, 0) & keep, spread(cx, cy, 1) & keep, spread(cx, cy, 2) & keep, rgb);
                for (int i = 0; i < 3; i++) sum[i] += rgb[i] / 4;
                if ((2 * cx + (d & 1)) < w && (2 * cy + d / 2) < h) {
                    const int want = (int)lround(16 + 219 * (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]));
                    const int got = ((guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&f, 0))[y * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0) + x];
                    worst = MAX(worst, abs(got - want)), over_one += abs(got - want) > 1, count++;
                }
            }
            const double l = 0.2126 * sum[0] + 0.7152 * sum[1] + 0.0722 * sum[2];
            const int u = (int)lround(128 + 224 * (sum[2] - l) / 1.8556), v = (int)lround(128 + 224 * (sum[0] - l) / 1.5748);
            const int gu = ((guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&f, 1))[cy * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 1) + cx];
            const int gv = ((guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&f, 2))[cy * GST_VIDEO_FRAME_PLANE_STRIDE(&f, 2) + cx];
            worst = MAX(worst, MAX(abs(gu - u), abs(gv - v)));
            over_one += (abs(gu - u) > 1) + (abs(gv - v) > 1), count += 2;
        }
    fail_unless(worst <= 4 && over_one * 100 <= count, "%s %s: worst %d, %d of %d samples more than one step off", cases[c].format,
                cases[c].colorimetry, worst, over_one, count);
    gst_video_frame_unmap(&f);
    gst_buffer_unref(out);
    gst_caps_unref(caps);
    gst_harness_teardown(hs);
}
GST_END_TEST;

/* The output caps: I420, BT.709 limited range, and none of the input's HDR fields. */
GST_START_TEST(test_output_caps_say_bt709) {
    GstHarness *hs = harness("I420_10LE", "bt2100-pq", 32, 16,
                             ",mastering-display-info=(string)\"35400:14600:8500:39850:6550:2300:15635:16450:40000000:50\",content-light-level=(string)\"1000:400\"");
    gst_buffer_unref(gst_harness_push_and_pull(hs, frame10(I420_10LE, 32, 16, spread)));
    GstCaps *caps = gk_check_output_caps(hs);
    const GstStructure *s = gst_caps_get_structure(caps, 0);
    fail_unless_equals_string(gst_structure_get_string(s, "format"), "I420");
    fail_unless_equals_string(gst_structure_get_string(s, "colorimetry"), "bt709");
    fail_if(gst_structure_has_field(s, "mastering-display-info"));
    fail_if(gst_structure_has_field(s, "content-light-level"));
    gst_caps_unref(caps);
    gst_harness_teardown(hs);
}
GST_END_TEST;

/* An HDR10 grey ramp, 0 to 4000 nits in PQ across 1024 columns: the output never goes down,
 * nothing below the knee moves, and the highlights keep distinct steps up to the source's peak
 * (1000 nits by default, 4000 from a mastering display), which is SDR white. How many steps they
 * get is the knee's choice: SDR's last 8 codes hold everything from the knee to the peak. */
static double ramp_nits(int x) { return pq_nits(x / 1023.0 * pq_signal(4000)); }
static int ramp(int x, int y, int plane) {
    (void)y;
    return plane ? 512 : 64 + (int)lround(876 * x / 1023.0 * pq_signal(4000));
}
static int first_column_at(double nits) {
    for (int x = 0; x < 1024; x++)
        if (ramp_nits(x) >= nits) return x;
    return 1023;
}

static void check_ramp(const char *extra, double peak, double knee) {
    GstHarness *hs = harness_with_knee("I420_10LE", "bt2100-pq", 1024, 2, extra, knee);
    GstBuffer *out = gst_harness_push_and_pull(hs, frame10(I420_10LE, 1024, 2, ramp));
    GstMapInfo map;
    fail_unless(gst_buffer_map(out, &map, GST_MAP_READ));
    const guint8 *y = map.data;
    for (int x = 1; x < 1024; x++) fail_unless(y[x] >= y[x - 1], "peak %.0f: the ramp goes down at column %d (%d after %d)", peak, x, y[x], y[x - 1]);
    /* below the knee: as SDR, 203 nits being white */
    const int grey = first_column_at(100);
    const int want = (int)lround(16 + 219 * pow(ramp_nits(grey) / WHITE, 1 / 2.4));
    fail_unless(abs(y[grey] - want) <= 1, "peak %.0f: %.1f nits gave %d, not %d", peak, ramp_nits(grey), y[grey], want);
    /* the highlights: rolled off in steps up to white at the peak; a clip at reference white would
     * give one code from 203 nits up */
    const int at_white = y[first_column_at(WHITE)], at_400 = y[first_column_at(400)], at_peak = y[first_column_at(peak)];
    fail_unless(at_white < at_400 && at_400 < at_peak, "peak %.0f, knee %.2f: 203, 400 and %.0f nits gave %d, %d, %d", peak, knee, peak,
                at_white, at_400, at_peak);
    fail_unless(at_peak == 235, "peak %.0f, knee %.2f: the peak gave %d", peak, knee, at_peak);
    int steps = 0;
    for (int x = first_column_at(WHITE) + 1; x <= first_column_at(peak); x++) steps += y[x] != y[x - 1];
    fail_unless(steps >= 4, "peak %.0f, knee %.2f: %d steps from 203 nits to the peak", peak, knee, steps);
    if (knee <= 0.75 && peak <= 1000) fail_unless(y[first_column_at(peak * 0.6)] < at_peak, "peak %.0f, knee %.2f: flat from 60%% of the peak", peak, knee);
    gst_buffer_unmap(out, &map);
    gst_buffer_unref(out);
    double used = 0;
    g_object_get(hs->element, "source-peak", &used, NULL);
    fail_unless(fabs(used - peak) < 0.5, "source-peak %.1f, not %.0f", used, peak);
    gst_harness_teardown(hs);
}

GST_START_TEST(test_an_hdr10_ramp_rolls_off_to_its_peak) {
    const char *mastering4000 = ",mastering-display-info=(string)\"35400:14600:8500:39850:6550:2300:15635:16450:40000000:50\"";
    check_ramp(NULL, 1000, KNEE);
    check_ramp(NULL, 1000, 0.75);
    /* a 4000-nit mastering display (in units of 0.0001 cd/m²) */
    check_ramp(mastering4000, 4000, KNEE);
    check_ramp(mastering4000, 4000, 0.75);
}
GST_END_TEST;

/* SDR (any transfer but HLG and PQ) in I420 or NV12: the same buffer out, caps unchanged. */
GST_START_TEST(test_sdr_passes_through) {
    const char *formats[] = { "I420", "NV12" };
    for (int i = 0; i < 2; i++) {
        GstHarness *hs = harness(formats[i], "bt709", 32, 16, NULL);
        GstBuffer *in = gst_buffer_new_allocate(NULL, 32 * 16 * 3 / 2, NULL);
        gst_buffer_memset(in, 0, 0x5a, 32 * 16 * 3 / 2);
        GstBuffer *out = gst_harness_push_and_pull(hs, gst_buffer_ref(in));
        fail_unless(out == in, "%s: not passed through", formats[i]);
        GstCaps *caps = gk_check_output_caps(hs);
        fail_unless_equals_string(gst_structure_get_string(gst_caps_get_structure(caps, 0), "colorimetry"), "bt709");
        fail_unless_equals_string(gst_structure_get_string(gst_caps_get_structure(caps, 0), "format"), formats[i]);
        gst_caps_unref(caps);
        gst_buffer_unref(out);
        gst_buffer_unref(in);
        gst_harness_teardown(hs);
    }
}
GST_END_TEST;

static Suite *gktonemap_suite(void) {
    TCase *tc;
    Suite *s = gk_check_suite("gktonemap", &tc);
    tcase_add_test(tc, test_from_the_plugin_file);
    tcase_add_loop_test(tc, test_every_sample_against_the_exact_method, 0, G_N_ELEMENTS(cases));
    tcase_add_test(tc, test_output_caps_say_bt709);
    tcase_add_test(tc, test_an_hdr10_ramp_rolls_off_to_its_peak);
    tcase_add_test(tc, test_sdr_passes_through);
    return s;
}

GST_CHECK_MAIN(gktonemap);
