// What the decoders of CImageCodecs share (not part of its interface): the child process each
// decode runs in, and how a result says why.
#ifndef GK_IMAGE_CHILD_H
#define GK_IMAGE_CHILD_H

#include "CImageCodecs.h"

/// A decode's work, run in the child: reads `context`, writes the picture where the context says
/// and its outcome in `result` (shared with the caller).
typedef void (*gk_image_work)(void *context, gk_image_result *result);

/// Runs `work` in a child process (fork, no exec) with a fresh signal state, no core file, and at
/// most `memory_limit` bytes of private memory above what it inherits (RLIMIT_DATA; 0: no bound),
/// killed after `timeout_ms`; `result` says how it ended (GK_IMAGE_CRASHED with the signal,
/// GK_IMAGE_TIMED_OUT, or what the work wrote).
void gk_image_run_in_child(gk_image_work work, void *context, uint64_t memory_limit, int32_t timeout_ms,
                           gk_image_result *result);

/// Sets `result`'s status and message: "what: why" (why may be NULL or empty).
void gk_image_say(gk_image_result *result, gk_image_status status, const char *what, const char *why);

/// Straight alpha from premultiplied: each of B, G, R times 255 / A, at most 255.
static inline void gk_image_unpremultiply(uint8_t *bgra) {
  uint8_t a = bgra[3];
  if (a == 0 || a == 255) return;
  for (int c = 0; c < 3; c++) {
    unsigned v = (unsigned)bgra[c] * 255u / a;
    bgra[c] = (uint8_t)(v > 255 ? 255 : v);
  }
}

/// The frame decoders, each run in the child by gk_image_decode_frame: picture `index` of the
/// file, `width` × `height`, written as BGRA with straight alpha to `pixels`.
typedef struct {
  gk_image_format format;
  const uint8_t *bytes;
  size_t length;
  uint32_t index;
  int32_t width;
  int32_t height;
  uint8_t *pixels;
} gk_frame_request;

void gk_webp_frame(const gk_frame_request *request, gk_image_result *result);
void gk_gif_frame(const gk_frame_request *request, gk_image_result *result);
void gk_tiff_frame(const gk_frame_request *request, gk_image_result *result);
void gk_jpeg_frame(const gk_frame_request *request, gk_image_result *result);

#endif
