/* ThreadSanitizer's view of GLib's locks, for the glue's own C code.
 *
 * GLib's GMutex and GCond are futex-based on Linux and GLib is not instrumented, so TSan sees
 * neither the lock nor the wait: every field a GMutex guards is reported as a race between the
 * threads that take it. These wrappers tell TSan what the lock does (acquire after taking it,
 * release before letting it go, both around a condition wait, which lets it go and takes it
 * again). Without -fsanitize=thread they are the GLib calls and nothing else. */
#ifndef GK_TSAN_H
#define GK_TSAN_H

#include <glib.h>

#if defined(__SANITIZE_THREAD__)
#define GK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GK_TSAN 1
#endif
#endif

#ifdef GK_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define GK_TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define GK_TSAN_RELEASE(p) __tsan_release((void *)(p))
#else
#define GK_TSAN_ACQUIRE(p) ((void)0)
#define GK_TSAN_RELEASE(p) ((void)0)
#endif

static inline void gk_mutex_lock(GMutex *m) {
    g_mutex_lock(m);
    GK_TSAN_ACQUIRE(m);
}

static inline void gk_mutex_unlock(GMutex *m) {
    GK_TSAN_RELEASE(m);
    g_mutex_unlock(m);
}

static inline gboolean gk_cond_wait_until(GCond *c, GMutex *m, gint64 end_time) {
    GK_TSAN_RELEASE(m);
    gboolean signalled = g_cond_wait_until(c, m, end_time);
    GK_TSAN_ACQUIRE(m);
    return signalled;
}

#endif
