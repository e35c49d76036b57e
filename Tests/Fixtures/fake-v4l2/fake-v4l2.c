/* A V4L2 camera that is not there, for tests on machines without one: preloaded
 * (LD_PRELOAD) into a process, it makes the path in FAKE_V4L2_PATH a capture device that
 * v4l2src can open, negotiate and read (read() I/O, 320x240 YUYV at 30 frames a second, a
 * bright bar moving 4 pixels a frame over grey). For the first FAKE_V4L2_BUSY_COUNT
 * attempts, setting the format fails with EBUSY, as a camera another program streams from
 * does.
 * Everything else passes through to the C library. Test fixture only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define WIDTH 320
#define HEIGHT 240
#define FPS 30
#define MAX_FDS 64

/* The open fake descriptors, and the clock of the current opening (restarted when the first
 * descriptor is opened after the last was closed, so a second capture starts at its frame 0):
 * all under `lock`, since any thread opens and closes. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fake_fds[MAX_FDS];
static int fake_count;
static uint64_t frames_read;
static struct timespec started;

static const char *fake_path(void) { return getenv("FAKE_V4L2_PATH"); }
static int is_fake_path(const char *p) { const char *f = fake_path(); return p && f && strcmp(p, f) == 0; }
static int is_fake_fd(int fd) {
    pthread_mutex_lock(&lock);
    int found = 0;
    for (int i = 0; i < fake_count; i++) if (fake_fds[i] == fd) found = 1;
    pthread_mutex_unlock(&lock);
    return found;
}
static void forget_fd(int fd) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < fake_count; i++)
        if (fake_fds[i] == fd) { fake_fds[i] = fake_fds[--fake_count]; break; }
    pthread_mutex_unlock(&lock);
}


/* Busy for the first FAKE_V4L2_BUSY_COUNT attempts to set the format in the process. */
static int busy_attempts;
static int busy(void) {
    const char *count = getenv("FAKE_V4L2_BUSY_COUNT");
    pthread_mutex_lock(&lock);
    int held = count && busy_attempts < atoi(count);
    if (held) busy_attempts++;
    pthread_mutex_unlock(&lock);
    return held;
}

#define REAL(name, ret, args) static ret (*real_##name) args; if (!real_##name) real_##name = (ret (*) args)dlsym(RTLD_NEXT, #name)

static void as_device(struct stat *st) { st->st_mode = (st->st_mode & ~S_IFMT) | S_IFCHR; st->st_rdev = makedev(81, 99); }

int stat(const char *path, struct stat *st) {
    REAL(stat, int, (const char *, struct stat *));
    int r = real_stat(path, st);
    if (r == 0 && is_fake_path(path)) as_device(st);
    return r;
}
int stat64(const char *path, struct stat64 *st) {
    REAL(stat64, int, (const char *, struct stat64 *));
    int r = real_stat64(path, st);
    if (r == 0 && is_fake_path(path)) { st->st_mode = (st->st_mode & ~S_IFMT) | S_IFCHR; st->st_rdev = makedev(81, 99); }
    return r;
}

static int open_fake(void) {
    REAL(open, int, (const char *, int, ...));
    int fd = real_open("/dev/zero", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fd;
    pthread_mutex_lock(&lock);
    if (fake_count == MAX_FDS) {
        pthread_mutex_unlock(&lock);
        close(fd);
        errno = EMFILE;
        return -1;
    }
    if (fake_count == 0) {
        clock_gettime(CLOCK_MONOTONIC, &started);
        frames_read = 0;
    }
    fake_fds[fake_count++] = fd;
    pthread_mutex_unlock(&lock);
    return fd;
}

/* The mode is there only with O_CREAT or O_TMPFILE. */
static mode_t mode_of(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
}

int open(const char *path, int flags, ...) {
    REAL(open, int, (const char *, int, ...));
    if (is_fake_path(path)) return open_fake();
    va_list ap; va_start(ap, flags); mode_t mode = mode_of(flags, ap); va_end(ap);
    return real_open(path, flags, mode);
}
int open64(const char *path, int flags, ...) {
    REAL(open64, int, (const char *, int, ...));
    if (is_fake_path(path)) return open_fake();
    va_list ap; va_start(ap, flags); mode_t mode = mode_of(flags, ap); va_end(ap);
    return real_open64(path, flags, mode);
}
int openat(int dir, const char *path, int flags, ...) {
    REAL(openat, int, (int, const char *, int, ...));
    if (is_fake_path(path)) return open_fake();
    va_list ap; va_start(ap, flags); mode_t mode = mode_of(flags, ap); va_end(ap);
    return real_openat(dir, path, flags, mode);
}

int close(int fd) {
    REAL(close, int, (int));
    forget_fd(fd);
    return real_close(fd);
}

static void fill_format(struct v4l2_format *f) {
    memset(&f->fmt.pix, 0, sizeof f->fmt.pix);
    f->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    f->fmt.pix.width = WIDTH;
    f->fmt.pix.height = HEIGHT;
    f->fmt.pix.pixelformat = V4L2_PIX_FMT_YUYV;
    f->fmt.pix.field = V4L2_FIELD_NONE;
    f->fmt.pix.bytesperline = WIDTH * 2;
    f->fmt.pix.sizeimage = WIDTH * HEIGHT * 2;
    f->fmt.pix.colorspace = V4L2_COLORSPACE_SRGB;
}

static int fake_ioctl(unsigned long request, void *arg) {
    switch (request) {
    case VIDIOC_QUERYCAP: {
        struct v4l2_capability *c = arg;
        memset(c, 0, sizeof *c);
        strcpy((char *)c->driver, "graphkit-fake");
        strcpy((char *)c->card, "GraphKit Fake Camera");
        strcpy((char *)c->bus_info, "platform:graphkit-fake");
        c->version = 0x060100;
        c->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_READWRITE;
        c->capabilities = c->device_caps | V4L2_CAP_DEVICE_CAPS;
        return 0;
    }
    case VIDIOC_ENUM_FMT: {
        struct v4l2_fmtdesc *d = arg;
        if (d->index != 0 || d->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) break;
        d->flags = 0;
        strcpy((char *)d->description, "YUYV 4:2:2");
        d->pixelformat = V4L2_PIX_FMT_YUYV;
        return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES: {
        struct v4l2_frmsizeenum *s = arg;
        if (s->index != 0 || s->pixel_format != V4L2_PIX_FMT_YUYV) break;
        s->type = V4L2_FRMSIZE_TYPE_DISCRETE;
        s->discrete.width = WIDTH;
        s->discrete.height = HEIGHT;
        return 0;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS: {
        struct v4l2_frmivalenum *i = arg;
        if (i->index != 0 || i->pixel_format != V4L2_PIX_FMT_YUYV || i->width != WIDTH || i->height != HEIGHT) break;
        i->type = V4L2_FRMIVAL_TYPE_DISCRETE;
        i->discrete.numerator = 1;
        i->discrete.denominator = FPS;
        return 0;
    }
    case VIDIOC_S_FMT:
        if (busy()) { errno = EBUSY; return -1; }
        /* fall through */
    case VIDIOC_G_FMT:
    case VIDIOC_TRY_FMT:
        if (((struct v4l2_format *)arg)->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) break;
        fill_format(arg);
        return 0;
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM: {
        struct v4l2_streamparm *p = arg;
        if (p->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) break;
        memset(&p->parm.capture, 0, sizeof p->parm.capture);
        p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
        p->parm.capture.timeperframe.numerator = 1;
        p->parm.capture.timeperframe.denominator = FPS;
        p->parm.capture.readbuffers = 2;
        return 0;
    }
    default:
        break;
    }
    errno = (request == VIDIOC_ENUM_FMT || request == VIDIOC_ENUM_FRAMESIZES || request == VIDIOC_ENUM_FRAMEINTERVALS
             || request == VIDIOC_G_FMT || request == VIDIOC_TRY_FMT || request == VIDIOC_S_FMT
             || request == VIDIOC_G_PARM || request == VIDIOC_S_PARM) ? EINVAL : ENOTTY;
    return -1;
}

int ioctl(int fd, unsigned long request, ...) {
    REAL(ioctl, int, (int, unsigned long, ...));
    va_list ap; va_start(ap, request); void *arg = va_arg(ap, void *); va_end(ap);
    if (is_fake_fd(fd)) return fake_ioctl(request, arg);
    return real_ioctl(fd, request, arg);
}

/* A frame every 1/30 s from the first open: a 16-pixel bright bar moving 4 pixels a frame. */
ssize_t read(int fd, void *buf, size_t count) {
    REAL(read, ssize_t, (int, void *, size_t));
    if (!is_fake_fd(fd)) return real_read(fd, buf, count);
    pthread_mutex_lock(&lock);
    uint64_t n = frames_read++;
    struct timespec due = started;
    pthread_mutex_unlock(&lock);
    uint64_t ns = n * 1000000000ull / FPS;
    due.tv_sec += ns / 1000000000ull;
    due.tv_nsec += ns % 1000000000ull;
    if (due.tv_nsec >= 1000000000) { due.tv_sec++; due.tv_nsec -= 1000000000; }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR) {}
    size_t size = WIDTH * HEIGHT * 2;
    if (count < size) size = count;
    uint8_t *p = buf;
    int bar = (int)((n * 4) % WIDTH);
    for (size_t i = 0; i + 1 < size; i += 2) {
        int x = (int)((i / 2) % WIDTH);
        p[i] = (x >= bar && x < bar + 16) ? 235 : 128;   /* Y */
        p[i + 1] = 128;                                   /* U or V */
    }
    return (ssize_t)size;
}
