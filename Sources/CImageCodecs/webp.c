// WebP decoding through libwebp's animation decoder (still pictures are one frame to it), run in
// the child of child.c.
#include "child.h"

#include <string.h>
#include <webp/demux.h>

void gk_webp_frame(const gk_frame_request *request, gk_image_result *result) {
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) { gk_image_say(result, GK_IMAGE_REFUSED, "libwebp is not the version built against", NULL); return; }
  options.color_mode = MODE_BGRA;  // straight alpha
  options.use_threads = 0;
  WebPData data = {request->bytes, request->length};
  WebPAnimDecoder *decoder = WebPAnimDecoderNew(&data, &options);
  if (!decoder) { gk_image_say(result, GK_IMAGE_REFUSED, "libwebp cannot read the file", NULL); return; }
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(decoder, &info)) {
    gk_image_say(result, GK_IMAGE_REFUSED, "libwebp cannot read the file's canvas", NULL);
    WebPAnimDecoderDelete(decoder);
    return;
  }
  result->width = (int32_t)info.canvas_width;
  result->height = (int32_t)info.canvas_height;
  if ((int32_t)info.canvas_width != request->width || (int32_t)info.canvas_height != request->height) {
    gk_image_say(result, GK_IMAGE_OTHER_SIZE, "", NULL);
    WebPAnimDecoderDelete(decoder);
    return;
  }
  if (request->index >= info.frame_count) {
    gk_image_say(result, GK_IMAGE_REFUSED, "libwebp finds fewer frames than the file lists", NULL);
    WebPAnimDecoderDelete(decoder);
    return;
  }
  uint8_t *canvas = NULL;
  int timestamp = 0;
  for (uint32_t n = 0; n <= request->index; n++) {
    if (!WebPAnimDecoderGetNext(decoder, &canvas, &timestamp)) {
      gk_image_say(result, GK_IMAGE_REFUSED, "libwebp cannot decode the frame", n == request->index ? NULL : "or one before it");
      WebPAnimDecoderDelete(decoder);
      return;
    }
  }
  memcpy(request->pixels, canvas, (size_t)request->width * (size_t)request->height * 4);
  WebPAnimDecoderDelete(decoder);
  result->status = GK_IMAGE_DECODED;
}
