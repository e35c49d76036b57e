// JPEG through libjpeg-turbo: decoding, run in the child of child.c, and encoding of pictures
// GraphKit made (Nodes' JPEGEncoder), in the caller. libjpeg's errors longjmp back here, as it
// asks, and become the message.
#include "child.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct failure {
  struct jpeg_error_mgr manager;
  jmp_buf back;
  char message[JMSG_LENGTH_MAX];
};

static void failed(j_common_ptr info) {
  struct failure *f = (struct failure *)info->err;
  (*info->err->format_message)(info, f->message);
  longjmp(f->back, 1);
}

static void quiet(j_common_ptr info, int level) { (void)info, (void)level; }

void gk_jpeg_frame(const gk_frame_request *request, gk_image_result *result) {
  struct jpeg_decompress_struct info;
  struct failure f;
  memset(&info, 0, sizeof info);
  f.message[0] = 0;
  info.err = jpeg_std_error(&f.manager);
  f.manager.error_exit = failed;
  f.manager.emit_message = quiet;
  if (setjmp(f.back)) {
    jpeg_destroy_decompress(&info);
    gk_image_say(result, GK_IMAGE_REFUSED, "libjpeg cannot decode the picture", f.message);
    return;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, request->bytes, (unsigned long)request->length);
  jpeg_read_header(&info, TRUE);
  info.out_color_space = JCS_EXT_BGRA;  // grey and YCbCr converted by libjpeg-turbo
  // CMYK and YCCK come out as CMYK (libjpeg-turbo converts YCCK to it), made BGRA below.
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) info.out_color_space = JCS_CMYK;
  jpeg_start_decompress(&info);
  result->width = (int32_t)info.output_width;
  result->height = (int32_t)info.output_height;
  if ((int32_t)info.output_width != request->width || (int32_t)info.output_height != request->height) {
    jpeg_destroy_decompress(&info);
    gk_image_say(result, GK_IMAGE_OTHER_SIZE, "", NULL);
    return;
  }
  size_t stride = (size_t)request->width * 4;
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = request->pixels + (size_t)info.output_scanline * stride;
    jpeg_read_scanlines(&info, &row, 1);
  }
  if (info.out_color_space == JCS_CMYK) {
    // Adobe's CMYK JPEGs store the inks inverted: each of C, M, Y, K is 255 less the ink.
    int inverted = info.saw_Adobe_marker;
    for (size_t n = 0; n < (size_t)request->width * (size_t)request->height; n++) {
      uint8_t *p = request->pixels + n * 4;
      unsigned c = p[0], m = p[1], y = p[2], k = p[3];
      if (!inverted) c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
      p[2] = (uint8_t)(c * k / 255), p[1] = (uint8_t)(m * k / 255), p[0] = (uint8_t)(y * k / 255), p[3] = 255;
    }
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  result->status = GK_IMAGE_DECODED;
}

int gk_jpeg_encode_bgra(const uint8_t *pixels, int width, int height, size_t bytes_per_row, int quality,
                        uint8_t **out, size_t *size, char *error, size_t error_size) {
  struct jpeg_compress_struct info;
  struct failure f;
  unsigned char *buffer = NULL;
  unsigned long length = 0;
  memset(&info, 0, sizeof info);
  info.err = jpeg_std_error(&f.manager);
  f.manager.error_exit = failed;
  f.manager.emit_message = quiet;
  f.message[0] = 0;
  if (setjmp(f.back)) {
    jpeg_destroy_compress(&info);
    free(buffer);
    snprintf(error, error_size, "%s", f.message);
    return 0;
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &buffer, &length);
  info.image_width = (JDIMENSION)width;
  info.image_height = (JDIMENSION)height;
  info.input_components = 4;
  info.in_color_space = JCS_EXT_BGRA;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  for (int c = 0; c < info.num_components; c++) info.comp_info[c].h_samp_factor = info.comp_info[c].v_samp_factor = 1;
  info.dct_method = JDCT_ISLOW;
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = (JSAMPROW)(pixels + (size_t)info.next_scanline * bytes_per_row);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  *out = buffer;
  *size = length;
  return 1;
}
