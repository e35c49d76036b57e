/* ThreadSanitizer's view of GLib's locks and of buffers, for GraphKit's C code (the graphkit
 * plugin's elements and CGraphKitGlue).
 *
 * GLib's GMutex and GCond are futex-based on Linux and GLib is not instrumented, so TSan sees
 * neither the lock nor the wait: every field a GMutex guards is reported as a race between the
 * threads that take it. These wrappers tell TSan what the lock does (acquire after taking it,
 * release before letting it go, both around a condition wait, which lets it go and takes it
 * again). Without -fsanitize=thread they are the GLib calls and nothing else. */
#ifndef GK_TSAN_H
#define GK_TSAN_H

#include <gst/gst.h>

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

/* GST_OBJECT_LOCK/UNLOCK as TSan sees them: an element's fields guarded by its object lock are
 * otherwise reported between the streaming thread and the application's (a property set). */
#define GK_OBJECT_LOCK(obj) gk_mutex_lock(GST_OBJECT_GET_LOCK(obj))
#define GK_OBJECT_UNLOCK(obj) gk_mutex_unlock(GST_OBJECT_GET_LOCK(obj))

/* A buffer is its own sync point (as in glue.c): released when our code passes it on or lets it
 * go, acquired when our code receives it. Buffers travel between threads through GStreamer's
 * queues and pools, whose locks and atomics TSan cannot see, and a pool hands the same buffer to
 * a later frame: without these, our write of its times on one streaming thread and our read of
 * them on the next are reported. */
#define GK_BUFFER_RECEIVED(b) GK_TSAN_ACQUIRE(b)
#define GK_BUFFER_HANDED_ON(b) GK_TSAN_RELEASE(b)

static inline GstFlowReturn gk_pad_push(GstPad *pad, GstBuffer *buffer) {
    GK_BUFFER_HANDED_ON(buffer);
    return gst_pad_push(pad, buffer);
}

static inline void gk_buffer_drop(GstBuffer *buffer) {
    GK_BUFFER_HANDED_ON(buffer);
    gst_buffer_unref(buffer);
}

#endif
