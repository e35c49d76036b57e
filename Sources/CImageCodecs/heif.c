// HEIF and AVIF decoding through libheif, each picture in a child process (CImageCodecs.h).
#define _GNU_SOURCE
#include "child.h"

#include <dlfcn.h>
#include <libheif/heif.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

// libheif is opened when the first picture is decoded, not when the program starts: it links
// the HEVC and AV1 codecs (libde265, libx265, libdav1d, libaom on Debian 12), which a program that
// decodes no HEIF must not map (graphctl's footprint). Opened, and its plugins loaded (Debian 13
// ships its decoders as plugins), in the caller's process, once: a child never calls dlopen,
// whose lock another thread may have held at fork.
static struct {
  __typeof__(heif_init) *heif_init;
  __typeof__(heif_get_version) *heif_get_version;
  __typeof__(heif_context_alloc) *heif_context_alloc;
  __typeof__(heif_context_set_maximum_image_size_limit) *heif_context_set_maximum_image_size_limit;
  __typeof__(heif_context_read_from_memory_without_copy) *heif_context_read_from_memory_without_copy;
  __typeof__(heif_context_get_image_handle) *heif_context_get_image_handle;
  __typeof__(heif_image_handle_get_thumbnail) *heif_image_handle_get_thumbnail;
  __typeof__(heif_image_handle_has_alpha_channel) *heif_image_handle_has_alpha_channel;
  __typeof__(heif_decoding_options_alloc) *heif_decoding_options_alloc;
  __typeof__(heif_decode_image) *heif_decode_image;
  __typeof__(heif_image_get_width) *heif_image_get_width;
  __typeof__(heif_image_get_height) *heif_image_get_height;
  __typeof__(heif_image_get_plane_readonly) *heif_image_get_plane_readonly;
  __typeof__(heif_image_is_premultiplied_alpha) *heif_image_is_premultiplied_alpha;
  const char *missing;  // why libheif could not be opened, or NULL
} lib;
static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static char missing[256];

static void load_library(void) {
  void *handle = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    snprintf(missing, sizeof missing, "libheif is not installed (libheif1): %s", dlerror());
    lib.missing = missing;
    return;
  }
#define FIND(name)                                                                              \
  if (!(lib.name = (__typeof__(name) *)dlsym(handle, #name))) {                                  \
    snprintf(missing, sizeof missing, "this libheif has no %s: GraphKit needs libheif 1.13 or later", #name); \
    lib.missing = missing;                                                                       \
    return;                                                                                      \
  }
  FIND(heif_init)
  FIND(heif_get_version)
  FIND(heif_context_alloc)
  FIND(heif_context_set_maximum_image_size_limit)
  FIND(heif_context_read_from_memory_without_copy)
  FIND(heif_context_get_image_handle)
  FIND(heif_image_handle_get_thumbnail)
  FIND(heif_image_handle_has_alpha_channel)
  FIND(heif_decoding_options_alloc)
  FIND(heif_decode_image)
  FIND(heif_image_get_width)
  FIND(heif_image_get_height)
  FIND(heif_image_get_plane_readonly)
  FIND(heif_image_is_premultiplied_alpha)
#undef FIND
  lib.heif_init(NULL);
}

const char *gk_heif_version(void) {
  pthread_once(&library_once, load_library);
  return lib.missing ? "none" : lib.heif_get_version();
}

// The child's work: everything libheif does with the bytes happens here.
static void decode_in_child(const uint8_t *bytes, size_t length, uint32_t image_id, uint32_t thumbnail_id,
                            int32_t width, int32_t height, int32_t crop_x, int32_t crop_y, int32_t crop_width,
                            int32_t crop_height, uint8_t *pixels, gk_image_result *result) {
  struct heif_context *context = lib.heif_context_alloc();
  if (!context) { gk_image_say(result, GK_IMAGE_REFUSED, "libheif could not make a context", NULL); return; }
  lib.heif_context_set_maximum_image_size_limit(context, 16384);
  struct heif_error error = lib.heif_context_read_from_memory_without_copy(context, bytes, length, NULL);
  if (error.code != heif_error_Ok) { gk_image_say(result, GK_IMAGE_REFUSED, "libheif cannot read the file", error.message); return; }
  struct heif_image_handle *handle = NULL;
  error = lib.heif_context_get_image_handle(context, image_id, &handle);
  if (error.code != heif_error_Ok) { gk_image_say(result, GK_IMAGE_REFUSED, "libheif finds no such image", error.message); return; }
  if (thumbnail_id) {
    struct heif_image_handle *thumbnail = NULL;
    error = lib.heif_image_handle_get_thumbnail(handle, thumbnail_id, &thumbnail);
    if (error.code != heif_error_Ok) { gk_image_say(result, GK_IMAGE_REFUSED, "libheif finds no such thumbnail", error.message); return; }
    handle = thumbnail;
  }
  result->has_alpha = lib.heif_image_handle_has_alpha_channel(handle);
  struct heif_decoding_options *options = lib.heif_decoding_options_alloc();
  options->ignore_transformations = 1;
  options->convert_hdr_to_8bit = 1;
  struct heif_image *image = NULL;
  error = lib.heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options);
  if (error.code != heif_error_Ok) { gk_image_say(result, GK_IMAGE_REFUSED, "libheif cannot decode the picture", error.message); return; }
  result->width = lib.heif_image_get_width(image, heif_channel_interleaved);
  result->height = lib.heif_image_get_height(image, heif_channel_interleaved);
  if (result->width != width || result->height != height) { gk_image_say(result, GK_IMAGE_OTHER_SIZE, "", NULL); return; }
  int stride = 0;
  const uint8_t *plane = lib.heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
  if (!plane || stride < width * 4) { gk_image_say(result, GK_IMAGE_REFUSED, "libheif gave no picture", NULL); return; }
  if (crop_x < 0 || crop_y < 0 || crop_width < 1 || crop_height < 1 || crop_x > width - crop_width || crop_y > height - crop_height) {
    gk_image_say(result, GK_IMAGE_REFUSED, "the part asked lies outside the picture", NULL);
    return;
  }
  int premultiplied = lib.heif_image_is_premultiplied_alpha(image);
  for (int32_t y = 0; y < crop_height; y++) {
    const uint8_t *in = plane + (size_t)(y + crop_y) * (size_t)stride + (size_t)crop_x * 4;
    uint8_t *out = pixels + (size_t)y * (size_t)crop_width * 4;
    for (int32_t x = 0; x < crop_width; x++, in += 4, out += 4) {
      out[0] = in[2], out[1] = in[1], out[2] = in[0], out[3] = in[3];
      if (premultiplied) gk_image_unpremultiply(out);
    }
  }
  result->status = GK_IMAGE_DECODED;
}

typedef struct {
  const uint8_t *bytes;
  size_t length;
  uint32_t image_id, thumbnail_id;
  int32_t width, height, crop_x, crop_y, crop_width, crop_height;
  uint8_t *pixels;
} heif_request;

static void decode_request(void *context, gk_image_result *result) {
  const heif_request *r = context;
  decode_in_child(r->bytes, r->length, r->image_id, r->thumbnail_id, r->width, r->height, r->crop_x, r->crop_y,
                  r->crop_width, r->crop_height, r->pixels, result);
}

void gk_heif_decode(const uint8_t *bytes, size_t length, uint32_t image_id, uint32_t thumbnail_id,
                    int32_t width, int32_t height, int32_t crop_x, int32_t crop_y, int32_t crop_width,
                    int32_t crop_height, uint8_t *pixels, uint64_t memory_limit, int32_t timeout_ms,
                    gk_image_result *result) {
  pthread_once(&library_once, load_library);
  if (lib.missing) {
    memset(result, 0, sizeof *result);
    gk_image_say(result, GK_IMAGE_NOT_STARTED, lib.missing, NULL);
    return;
  }
  heif_request request = {bytes, length, image_id, thumbnail_id, width, height, crop_x, crop_y, crop_width, crop_height, pixels};
  gk_image_run_in_child(decode_request, &request, memory_limit, timeout_ms, result);
}
