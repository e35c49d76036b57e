#ifndef CJPEG_H
#define CJPEG_H

#include <stddef.h>
#include <stdint.h>

// JPEG files written by libjpeg-turbo from BGRA pictures GraphKit made (never from a file's
// bytes): Nodes' JPEGEncoder. No GStreamer.

/// Encodes a `width` × `height` BGRA picture whose rows start `bytes_per_row` apart as a baseline
/// JFIF JPEG of `quality` (1-100, libjpeg's scale), chroma at full resolution (4:4:4). Returns
/// the file in `*out` (malloc'd: the caller frees it) of `*size` bytes, or 0 with a reason in
/// `error` (libjpeg's own words).
int gk_jpeg_encode_bgra(const uint8_t *pixels, int width, int height, size_t bytes_per_row, int quality,
                        uint8_t **out, size_t *size, char *error, size_t error_size);

#endif
