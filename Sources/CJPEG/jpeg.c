// JPEG encoding through libjpeg-turbo (CJPEG.h): its errors longjmp back here, as libjpeg asks.
#include "CJPEG.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct failure {
  struct jpeg_error_mgr manager;
  jmp_buf back;
  char *error;
  size_t error_size;
};

static void failed(j_common_ptr info) {
  struct failure *f = (struct failure *)info->err;
  if (f->error && f->error_size) (*info->err->format_message)(info, f->error);
  longjmp(f->back, 1);
}

static void quiet(j_common_ptr info, int level) { (void)info, (void)level; }

int gk_jpeg_encode_bgra(const uint8_t *pixels, int width, int height, size_t bytes_per_row, int quality,
                        uint8_t **out, size_t *size, char *error, size_t error_size) {
  struct jpeg_compress_struct info;
  struct failure f;
  unsigned char *buffer = NULL;
  unsigned long length = 0;
  char message[JMSG_LENGTH_MAX] = "";
  memset(&info, 0, sizeof info);
  info.err = jpeg_std_error(&f.manager);
  f.manager.error_exit = failed;
  f.manager.emit_message = quiet;
  f.error = message;
  f.error_size = sizeof message;
  if (setjmp(f.back)) {
    jpeg_destroy_compress(&info);
    free(buffer);
    snprintf(error, error_size, "%s", message);
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
