// TIFF decoding through libtiff's RGBA reader, run in the child of child.c.
#include "child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

typedef struct {
  const uint8_t *bytes;
  size_t length;
  size_t at;
} memory_file;

static tmsize_t read_proc(thandle_t handle, void *into, tmsize_t count) {
  memory_file *file = handle;
  if (count <= 0 || file->at >= file->length) return 0;
  size_t left = file->length - file->at;
  size_t n = (size_t)count < left ? (size_t)count : left;
  memcpy(into, file->bytes + file->at, n);
  file->at += n;
  return (tmsize_t)n;
}

static tmsize_t write_proc(thandle_t handle, void *from, tmsize_t count) { (void)handle, (void)from, (void)count; return -1; }

static toff_t seek_proc(thandle_t handle, toff_t offset, int whence) {
  memory_file *file = handle;
  uint64_t base = whence == SEEK_CUR ? file->at : whence == SEEK_END ? file->length : 0;
  if (offset > UINT64_MAX - base) return (toff_t)-1;
  file->at = (size_t)(base + offset);
  return (toff_t)file->at;
}

static int close_proc(thandle_t handle) { (void)handle; return 0; }
static toff_t size_proc(thandle_t handle) { return ((memory_file *)handle)->length; }

// libtiff's warnings and errors would go to the terminal: the error is kept for the result.
static char last_error[256];
static void on_error(const char *module, const char *format, va_list args) {
  (void)module;
  vsnprintf(last_error, sizeof last_error, format, args);
}
static void on_warning(const char *module, const char *format, va_list args) { (void)module, (void)format, (void)args; }

void gk_tiff_frame(const gk_frame_request *request, gk_image_result *result) {
  TIFFSetErrorHandler(on_error);
  TIFFSetWarningHandler(on_warning);
  memory_file file = {request->bytes, request->length, 0};
  TIFF *tiff = TIFFClientOpen("picture", "rm", &file, read_proc, write_proc, seek_proc, close_proc, size_proc, NULL, NULL);
  if (!tiff) { gk_image_say(result, GK_IMAGE_REFUSED, "libtiff cannot read the file", last_error); return; }
  if (request->index > 65535 || !TIFFSetDirectory(tiff, (tdir_t)request->index)) {
    gk_image_say(result, GK_IMAGE_REFUSED, "libtiff finds no such page", last_error);
    TIFFClose(tiff);
    return;
  }
  char message[1024] = "";
  TIFFRGBAImage image;
  if (!TIFFRGBAImageOK(tiff, message) || !TIFFRGBAImageBegin(&image, tiff, 0, message)) {
    gk_image_say(result, GK_IMAGE_REFUSED, "libtiff cannot decode the page", message);
    TIFFClose(tiff);
    return;
  }
  result->width = (int32_t)image.width;
  result->height = (int32_t)image.height;
  if ((int32_t)image.width != request->width || (int32_t)image.height != request->height) {
    gk_image_say(result, GK_IMAGE_OTHER_SIZE, "", NULL);
    TIFFRGBAImageEnd(&image);
    TIFFClose(tiff);
    return;
  }
  image.req_orientation = image.orientation;  // rows as stored: the caller applies the orientation
  // libtiff writes ABGR words (R in the low byte), alpha premultiplied; into the shared picture.
  uint32_t *raster = (uint32_t *)request->pixels;
  int ok = TIFFRGBAImageGet(&image, raster, image.width, image.height);
  TIFFRGBAImageEnd(&image);
  TIFFClose(tiff);
  if (!ok) { gk_image_say(result, GK_IMAGE_REFUSED, "libtiff cannot decode the page", last_error); return; }
  size_t count = (size_t)request->width * (size_t)request->height;
  for (size_t n = 0; n < count; n++) {
    uint32_t v = raster[n];
    uint8_t *out = request->pixels + n * 4;
    out[0] = (uint8_t)(v >> 16), out[1] = (uint8_t)(v >> 8), out[2] = (uint8_t)v, out[3] = (uint8_t)(v >> 24);
    gk_image_unpremultiply(out);
  }
  result->status = GK_IMAGE_DECODED;
}
