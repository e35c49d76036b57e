// The child process every decode of CImageCodecs runs in (child.h).
#define _GNU_SOURCE
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *gk_image_shared_alloc(size_t size) {
  void *memory = mmap(NULL, size ? size : 1, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? NULL : memory;
}

void gk_image_shared_free(void *memory, size_t size) {
  if (memory) munmap(memory, size ? size : 1);
}

void gk_image_say(gk_image_result *result, gk_image_status status, const char *what, const char *why) {
  result->status = status;
  snprintf(result->message, sizeof result->message, "%s%s%s", what, why && *why ? ": " : "", why ? why : "");
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

void gk_image_run_in_child(gk_image_work work, void *context, uint64_t memory_limit, int32_t timeout_ms,
                           gk_image_result *result) {
  memset(result, 0, sizeof *result);
  gk_image_result *shared = gk_image_shared_alloc(sizeof *shared);
  if (!shared) { gk_image_say(result, GK_IMAGE_NOT_STARTED, "no memory to share with the decoder's process", strerror(errno)); return; }
  shared->status = GK_IMAGE_CRASHED;  // until the child says otherwise
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    gk_image_say(result, GK_IMAGE_NOT_STARTED, "cannot start the decoder's process", strerror(errno));
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
    // No way to the caller's files, sockets or terminal: standard input and output from
    // /dev/null (a library's stray print cannot reach a caller's JSON), standard error kept
    // for diagnostics, every other descriptor closed; no privilege gained by exec.
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) dup2(null, 0), dup2(null, 1);
    close_range(3, ~0U, 0);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    // Gone with the thread that waits for it: a caller that exits on a signal leaves no decode.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);  // it had gone before the line above
    if (memory_limit) {
      uint64_t bound = data_bytes() + memory_limit;
      struct rlimit data = {bound, bound};
      setrlimit(RLIMIT_DATA, &data);
    }
    work(context, shared);
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

static void decode_frame(void *context, gk_image_result *result) {
  const gk_frame_request *request = context;
  switch (request->format) {
  case GK_IMAGE_FORMAT_WEBP: gk_webp_frame(request, result); break;
  case GK_IMAGE_FORMAT_GIF: gk_gif_frame(request, result); break;
  case GK_IMAGE_FORMAT_TIFF: gk_tiff_frame(request, result); break;
  case GK_IMAGE_FORMAT_JPEG: gk_jpeg_frame(request, result); break;
  default: gk_image_say(result, GK_IMAGE_REFUSED, "no decoder for this format", NULL); break;
  }
}

void gk_image_decode_frame(gk_image_format format, const uint8_t *bytes, size_t length, uint32_t index,
                           int32_t width, int32_t height, uint8_t *pixels, uint64_t memory_limit, int32_t timeout_ms,
                           gk_image_result *result) {
  gk_frame_request request = {format, bytes, length, index, width, height, pixels};
  gk_image_run_in_child(decode_frame, &request, memory_limit, timeout_ms, result);
}
