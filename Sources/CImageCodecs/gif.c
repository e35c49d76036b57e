// GIF decoding through giflib, each frame composed on the canvas here (giflib decodes frames, it
// does not compose them), run in the child of child.c.
#include "child.h"

#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const uint8_t *bytes;
  size_t length;
  size_t at;
} memory_reader;

static int read_memory(GifFileType *gif, GifByteType *into, int count) {
  memory_reader *reader = gif->UserData;
  if (count <= 0) return 0;
  size_t left = reader->length - reader->at;
  size_t n = (size_t)count < left ? (size_t)count : left;
  memcpy(into, reader->bytes + reader->at, n);
  reader->at += n;
  return (int)n;
}

// Fills the part of the canvas (w × h, BGRA) at (x, y) of `fw` × `fh`, clipped to it, with `value`.
static void fill(uint8_t *canvas, int32_t w, int32_t h, int x, int y, int fw, int fh, uint8_t value) {
  int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
  int x1 = x + fw > w ? w : x + fw, y1 = y + fh > h ? h : y + fh;
  if (x1 <= x0 || y1 <= y0) return;  // wholly outside the canvas
  for (int row = y0; row < y1; row++) memset(canvas + ((size_t)row * (size_t)w + (size_t)x0) * 4, value, (size_t)(x1 - x0) * 4);
}

void gk_gif_frame(const gk_frame_request *request, gk_image_result *result) {
  memory_reader reader = {request->bytes, request->length, 0};
  int error = 0;
  GifFileType *gif = DGifOpen(&reader, read_memory, &error);
  if (!gif) { gk_image_say(result, GK_IMAGE_REFUSED, "giflib cannot read the file", GifErrorString(error)); return; }
  int32_t w = request->width, h = request->height;
  result->width = gif->SWidth;
  result->height = gif->SHeight;
  if (gif->SWidth != w || gif->SHeight != h) {
    gk_image_say(result, GK_IMAGE_OTHER_SIZE, "", NULL);
    DGifCloseFile(gif, &error);
    return;
  }
  uint8_t *canvas = request->pixels;
  memset(canvas, 0, (size_t)w * (size_t)h * 4);
  uint8_t *saved = NULL;  // the canvas before a frame that disposes to the previous one
  GifByteType *line = NULL;
  int transparent = -1, disposal = 0;
  // The frame before's disposal and place, done before the next frame is drawn.
  int last_disposal = 0, lx = 0, ly = 0, lw = 0, lh = 0;
  uint32_t frame = 0;
  const char *failure = NULL;
  for (;;) {
    GifRecordType type;
    if (DGifGetRecordType(gif, &type) == GIF_ERROR) { failure = GifErrorString(gif->Error); break; }
    if (type == TERMINATE_RECORD_TYPE) { failure = "the file ends before the frame"; break; }
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType *block = NULL;
      if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) { failure = GifErrorString(gif->Error); break; }
      if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) {
        disposal = (block[1] >> 2) & 7;
        transparent = (block[1] & 1) ? block[4] : -1;
      }
      while (block) {
        if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) { failure = GifErrorString(gif->Error); break; }
      }
      if (failure) break;
      continue;
    }
    if (type != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif) == GIF_ERROR) { failure = GifErrorString(gif->Error); break; }
    GifImageDesc *desc = &gif->Image;
    int fx = desc->Left, fy = desc->Top, fw = desc->Width, fh = desc->Height;
    if (fw <= 0 || fh <= 0 || fw > 65535 || fh > 65535) { failure = "a frame of no size"; break; }
    ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
    // What the frame before leaves.
    if (last_disposal == 2) fill(canvas, w, h, lx, ly, lw, lh, 0);
    else if (last_disposal == 3 && saved) memcpy(canvas, saved, (size_t)w * (size_t)h * 4);
    if (disposal == 3) {
      if (!saved) saved = malloc((size_t)w * (size_t)h * 4);
      if (!saved) { failure = "no memory for the canvas"; break; }
      memcpy(saved, canvas, (size_t)w * (size_t)h * 4);
    }
    line = realloc(line, (size_t)fw);
    if (!line) { failure = "no memory for a line"; break; }
    // Interlaced rows come in four passes.
    static const int start[] = {0, 4, 2, 1}, step[] = {8, 8, 4, 2};
    int passes = desc->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes && !failure; pass++) {
      for (int row = desc->Interlace ? start[pass] : 0; row < fh; row += desc->Interlace ? step[pass] : 1) {
        if (DGifGetLine(gif, line, fw) == GIF_ERROR) { failure = GifErrorString(gif->Error); break; }
        int y = fy + row;
        if (y < 0 || y >= h) continue;
        for (int col = 0; col < fw; col++) {
          int x = fx + col;
          if (x < 0 || x >= w || line[col] == transparent) continue;
          uint8_t *out = canvas + ((size_t)y * (size_t)w + (size_t)x) * 4;
          if (map && line[col] < map->ColorCount) {
            GifColorType c = map->Colors[line[col]];
            out[0] = c.Blue, out[1] = c.Green, out[2] = c.Red, out[3] = 255;
          } else {
            out[0] = out[1] = out[2] = 0, out[3] = 255;
          }
        }
      }
    }
    if (failure) break;
    if (frame == request->index) {
      result->status = GK_IMAGE_DECODED;
      break;
    }
    frame++;
    last_disposal = disposal, lx = fx, ly = fy, lw = fw, lh = fh;
    disposal = 0, transparent = -1;
  }
  if (failure) gk_image_say(result, GK_IMAGE_REFUSED, "giflib cannot decode the frame", failure);
  free(saved);
  free(line);
  DGifCloseFile(gif, &error);
}
