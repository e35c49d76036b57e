#ifndef CIMAGECODECS_H
#define CIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

// Decoding of image files through their field libraries (libheif for HEIF and AVIF, libwebp,
// giflib, libtiff, libjpeg-turbo), each call in a child process of its own (fork, no exec) whose
// crash, hang or runaway allocation costs that one picture, never the caller's process: hostile
// bytes meet the C libraries only there. The child holds no descriptor of the caller's but
// standard error, and gains no privilege; it is not a sandbox against code run by an exploit
// (no seccomp filter: it shares the caller's memory as it was at the fork).
// No GStreamer.

/// What a decode ended with.
typedef enum {
  GK_IMAGE_DECODED = 0,
  /// The library refused the file or the picture; `message` says why (its own words).
  GK_IMAGE_REFUSED = 1,
  /// The picture decoded to another size than asked: `width` and `height` say which.
  GK_IMAGE_OTHER_SIZE = 2,
  /// The child died of a signal (`signal`), or exited without a result.
  GK_IMAGE_CRASHED = 3,
  /// The child ran past its time and was killed.
  GK_IMAGE_TIMED_OUT = 4,
  /// The child could not be made (fork or memory): `message` says why.
  GK_IMAGE_NOT_STARTED = 5,
} gk_image_status;

typedef struct {
  gk_image_status status;
  int32_t width;
  int32_t height;
  int32_t has_alpha;
  int32_t signal;
  char message[512];
} gk_image_result;

/// Memory the child can write and the caller read: `size` bytes shared across fork (anonymous,
/// MAP_SHARED), zero-filled; NULL when it cannot be had. Freed with gk_image_shared_free.
void *gk_image_shared_alloc(size_t size);
void gk_image_shared_free(void *memory, size_t size);

/// Decodes the image `image_id` of the HEIF or AVIF file in `bytes` (or its thumbnail
/// `thumbnail_id` when not 0) to 8-bit BGRA, unpremultiplied, as stored (its rotation and mirror
/// not applied: the caller applies the orientation), when it decodes to exactly `width` ×
/// `height`; and writes the part of it at (`crop_x`, `crop_y`) of `crop_width` × `crop_height`
/// (its clean aperture, or all of it) into `pixels`: shared memory from gk_image_shared_alloc of
/// at least crop_width × crop_height × 4 bytes, rows crop_width × 4 bytes apart. In a child
/// process limited to `memory_limit` bytes of private memory (RLIMIT_DATA, above what it
/// inherited) and killed after `timeout_ms`.
void gk_heif_decode(const uint8_t *bytes, size_t length, uint32_t image_id, uint32_t thumbnail_id,
                    int32_t width, int32_t height, int32_t crop_x, int32_t crop_y, int32_t crop_width,
                    int32_t crop_height, uint8_t *pixels, uint64_t memory_limit, int32_t timeout_ms,
                    gk_image_result *result);

/// The formats gk_image_decode_frame decodes.
typedef enum {
  GK_IMAGE_FORMAT_WEBP = 1,
  GK_IMAGE_FORMAT_GIF = 2,
  GK_IMAGE_FORMAT_TIFF = 3,
  GK_IMAGE_FORMAT_JPEG = 4,
} gk_image_format;

/// Decodes picture `index` of the file in `bytes` to 8-bit BGRA with straight alpha, when it is
/// `width` × `height`, into `pixels` (shared memory from gk_image_shared_alloc of at least
/// width × height × 4 bytes, rows width × 4 bytes apart): a WebP's frame (libwebp's animation
/// decoder: each frame on the canvas as the frames before it leave it), a GIF's frame (giflib,
/// composed here by each frame's disposal and transparency, the canvas transparent at first),
/// a TIFF's page (libtiff's RGBA reader, rows as stored: its orientation not applied), a JPEG
/// (libjpeg-turbo; CMYK converted, Adobe's inverted inks read as such). In a child
/// process limited as for gk_heif_decode.
void gk_image_decode_frame(gk_image_format format, const uint8_t *bytes, size_t length, uint32_t index,
                           int32_t width, int32_t height, uint8_t *pixels, uint64_t memory_limit, int32_t timeout_ms,
                           gk_image_result *result);

// JPEG files written by libjpeg-turbo from BGRA pictures GraphKit made (never from a file's
// bytes), in the caller's process: Nodes' JPEGEncoder.

/// Encodes a `width` × `height` BGRA picture whose rows start `bytes_per_row` apart as a baseline
/// JFIF JPEG of `quality` (1-100, libjpeg's scale), chroma at full resolution (4:4:4). Returns
/// the file in `*out` (malloc'd: the caller frees it) of `*size` bytes, or 0 with a reason in
/// `error` (libjpeg's own words).
int gk_jpeg_encode_bgra(const uint8_t *pixels, int width, int height, size_t bytes_per_row, int quality,
                        uint8_t **out, size_t *size, char *error, size_t error_size);

/// libheif's version, "1.15.1".
const char *gk_heif_version(void);

#endif
