// HEIF and AVIF decoding through libheif, each picture in a child process (CImageCodecs.h).
#define _GNU_SOURCE
#include "CImageCodecs.h"

#include <errno.h>
#include <libheif/heif.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// libheif's plugins (Debian 13 ships its decoders as plugins) are loaded here, in the caller's
// process, once: a child never calls dlopen, whose lock another thread may have held at fork.
static pthread_once_t library_once = PTHREAD_ONCE_INIT;
static void load_library(void) { heif_init(NULL); }

void *gk_image_shared_alloc(size_t size) {
  void *memory = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? NULL : memory;
}

void gk_image_shared_free(void *memory, size_t size) {
  if (memory) munmap(memory, size ? size : 1);
}

const char *gk_heif_version(void) { return heif_get_version(); }

static void say(gk_image_result *result, gk_image_status status, const char *what, const char *why) {
  result->status = status;
  snprintf(result->message, sizeof result->message, "%s%s%s", what, why && *why ? ": " : "", why ? why : "");
}

// The child's work: everything libheif does with the bytes happens here.
static void decode_in_child(const uint8_t *bytes, size_t length, uint32_t image_id, uint32_t thumbnail_id,
                            int32_t width, int32_t height, int32_t crop_x, int32_t crop_y, int32_t crop_width,
                            int32_t crop_height, uint8_t *pixels, gk_image_result *result) {
  struct heif_context *context = heif_context_alloc();
  if (!context) { say(result, GK_IMAGE_REFUSED, "libheif could not make a context", NULL); return; }
  heif_context_set_maximum_image_size_limit(context, 16384);
  struct heif_error error = heif_context_read_from_memory_without_copy(context, bytes, length, NULL);
  if (error.code != heif_error_Ok) { say(result, GK_IMAGE_REFUSED, "libheif cannot read the file", error.message); return; }
  struct heif_image_handle *handle = NULL;
  error = heif_context_get_image_handle(context, image_id, &handle);
  if (error.code != heif_error_Ok) { say(result, GK_IMAGE_REFUSED, "libheif finds no such image", error.message); return; }
  if (thumbnail_id) {
    struct heif_image_handle *thumbnail = NULL;
    error = heif_image_handle_get_thumbnail(handle, thumbnail_id, &thumbnail);
    if (error.code != heif_error_Ok) { say(result, GK_IMAGE_REFUSED, "libheif finds no such thumbnail", error.message); return; }
    handle = thumbnail;
  }
  result->has_alpha = heif_image_handle_has_alpha_channel(handle);
  struct heif_decoding_options *options = heif_decoding_options_alloc();
  options->ignore_transformations = 1;
  options->convert_hdr_to_8bit = 1;
  struct heif_image *image = NULL;
  error = heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGBA, options);
  if (error.code != heif_error_Ok) { say(result, GK_IMAGE_REFUSED, "libheif cannot decode the picture", error.message); return; }
  result->width = heif_image_get_width(image, heif_channel_interleaved);
  result->height = heif_image_get_height(image, heif_channel_interleaved);
  if (result->width != width || result->height != height) { say(result, GK_IMAGE_OTHER_SIZE, "", NULL); return; }
  int stride = 0;
  const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
  if (!plane || stride < width * 4) { say(result, GK_IMAGE_REFUSED, "libheif gave no picture", NULL); return; }
  if (crop_x < 0 || crop_y < 0 || crop_width < 1 || crop_height < 1 || crop_x > width - crop_width || crop_y > height - crop_height) {
    say(result, GK_IMAGE_REFUSED, "the part asked lies outside the picture", NULL);
    return;
  }
  int premultiplied = heif_image_is_premultiplied_alpha(image);
  for (int32_t y = 0; y < crop_height; y++) {
    const uint8_t *in = plane + (size_t)(y + crop_y) * (size_t)stride + (size_t)crop_x * 4;
    uint8_t *out = pixels + (size_t)y * (size_t)crop_width * 4;
    for (int32_t x = 0; x < crop_width; x++, in += 4, out += 4) {
      uint8_t r = in[0], g = in[1], b = in[2], a = in[3];
      if (premultiplied && a != 0 && a != 255) {
        r = (uint8_t)(r * 255 / a > 255 ? 255 : r * 255 / a);
        g = (uint8_t)(g * 255 / a > 255 ? 255 : g * 255 / a);
        b = (uint8_t)(b * 255 / a > 255 ? 255 : b * 255 / a);
      }
      out[0] = b, out[1] = g, out[2] = r, out[3] = a;
    }
  }
  result->status = GK_IMAGE_DECODED;
}

// The private writable memory the process holds now (VmData: heap, anonymous mappings, the
// arenas' reserved parts once writable), which the child starts with: its bound is counted from
// there. RLIMIT_DATA, unlike RLIMIT_AS, counts memory as malloc makes it writable inside an
// arena it reserved earlier (mprotect), so a decode cannot grow unseen inside inherited arenas.
static uint64_t data_bytes(void) {
  FILE *status = fopen("/proc/self/status", "r");
  unsigned long long kib = 0;
  char line[256];
  while (status && fgets(line, sizeof line, status)) {
    if (sscanf(line, "VmData: %llu kB", &kib) == 1) break;
  }
  if (status) fclose(status);
  return (uint64_t)kib * 1024;
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Waits for `pid` up to `timeout_ms`; kills it past that. Returns 1 with its status in
// `status`, 0 when it was killed for time.
static int wait_for(pid_t pid, int32_t timeout_ms, int *status) {
  int64_t deadline = now_ms() + timeout_ms;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  for (;;) {
    pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {  // reaped by someone else: the shared result says how it went
      *status = 0;
      break;
    }
    int64_t left = deadline - now_ms();
    if (left <= 0) {
      kill(pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
      if (pidfd >= 0) close(pidfd);
      return 0;
    }
    if (pidfd >= 0) {
      struct pollfd p = {.fd = pidfd, .events = POLLIN};
      poll(&p, 1, (int)(left < 1000 ? left : 1000));
    } else {
      struct timespec pause = {0, 5 * 1000000};
      nanosleep(&pause, NULL);
    }
  }
  if (pidfd >= 0) close(pidfd);
  return 1;
}

void gk_heif_decode(const uint8_t *bytes, size_t length, uint32_t image_id, uint32_t thumbnail_id,
                    int32_t width, int32_t height, int32_t crop_x, int32_t crop_y, int32_t crop_width,
                    int32_t crop_height, uint8_t *pixels, uint64_t memory_limit, int32_t timeout_ms,
                    gk_image_result *result) {
  memset(result, 0, sizeof *result);
  pthread_once(&library_once, load_library);
  gk_image_result *shared = gk_image_shared_alloc(sizeof *shared);
  if (!shared) { say(result, GK_IMAGE_NOT_STARTED, "no memory to share with the decoder's process", strerror(errno)); return; }
  shared->status = GK_IMAGE_CRASHED;  // until the child says otherwise
  pid_t pid = fork();
  if (pid < 0) {
    say(result, GK_IMAGE_NOT_STARTED, "cannot start the decoder's process", strerror(errno));
    gk_image_shared_free(shared, sizeof *shared);
    return;
  }
  if (pid == 0) {
    // The child: signals as a fresh process has them (a caller's handlers would run here and
    // report to the caller), no core file, its memory bounded above what it inherited.
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2};
    for (size_t n = 0; n < sizeof reset / sizeof reset[0]; n++) signal(reset[n], SIG_DFL);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    if (memory_limit) {
      uint64_t bound = data_bytes() + memory_limit;
      struct rlimit data = {bound, bound};
      setrlimit(RLIMIT_DATA, &data);
    }
    decode_in_child(bytes, length, image_id, thumbnail_id, width, height, crop_x, crop_y, crop_width, crop_height, pixels, shared);
    _exit(0);
  }
  int status = 0;
  int ended = wait_for(pid, timeout_ms, &status);
  *result = *shared;
  result->message[sizeof result->message - 1] = 0;
  gk_image_shared_free(shared, sizeof *shared);
  if (!ended) {
    result->status = GK_IMAGE_TIMED_OUT;
  } else if (WIFSIGNALED(status)) {
    result->status = GK_IMAGE_CRASHED;
    result->signal = WTERMSIG(status);
  }
}
