#include "CGraphKitGlue.h"
#include "../GstGraphKit/common/tsan.h"  /* the buffer hand-offs ThreadSanitizer is told of: glue.c says why */

/* A run's statistics where buffers pass: each pad's counter (buffers, bytes, the times they
 * span), each queue's fill and overruns, and the transform probes that run a Swift node's work on
 * a pad, counting what arrives and what leaves. Counters are written with atomics from the
 * streaming threads and read by the run's statistics. */

void gk_pad_counter_add(GkPadCounter *c, gint64 bytes, gint64 pts_ns, gint64 duration_ns) {
    __atomic_fetch_add(&c->buffers, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->bytes, bytes, __ATOMIC_RELAXED);
    if (pts_ns >= 0) {
        gint64 unset = -1;
        __atomic_compare_exchange_n(&c->start_ns, &unset, pts_ns, FALSE, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        __atomic_store_n(&c->end_ns, pts_ns + (duration_ns > 0 ? duration_ns : 0), __ATOMIC_RELAXED);
    }
}

static void count_buffer(GkPadCounter *c, GstBuffer *b) {
    GK_BUFFER_RECEIVED(b);
    gk_pad_counter_add(c, (gint64)gst_buffer_get_size(b), GST_BUFFER_PTS_IS_VALID(b) ? (gint64)GST_BUFFER_PTS(b) : -1,
                       GST_BUFFER_DURATION_IS_VALID(b) ? (gint64)GST_BUFFER_DURATION(b) : -1);
    GK_BUFFER_HANDED_ON(b);
}

static gboolean count_in_list(GstBuffer **buffer, guint index, gpointer data) {
    (void)index;
    count_buffer(data, *buffer);
    return TRUE;
}

static GstPadProbeReturn count_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    gk_callback_enter(pad);
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        if (b != NULL)
            count_buffer(data, b);
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        if (list != NULL)
            gst_buffer_list_foreach(list, count_in_list, data);
    }
    gk_callback_leave(pad);
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_count(GstPad *pad, GkPadCounter *counter) {
    counter->start_ns = -1;
    counter->end_ns = -1;
    return gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, count_probe, counter, NULL);
}

static void store_max(gint64 *slot, gint64 value) {
    gint64 seen = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (value > seen && !__atomic_compare_exchange_n(slot, &seen, value, TRUE, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

void gk_queue_sample(GstElement *queue, GkEdgeStats *stats) {
    guint buffers = 0, bytes = 0;
    guint64 time = 0;
    g_object_get(queue, "current-level-buffers", &buffers, "current-level-bytes", &bytes,
                 "current-level-time", &time, NULL);
    store_max(&stats->max_buffers, buffers);
    store_max(&stats->max_bytes, bytes);
    store_max(&stats->max_time_ns, (gint64)time);
}

static void on_overrun(GstElement *queue, gpointer data) {
    gk_callback_enter(queue);
    GkEdgeStats *stats = data;
    __atomic_fetch_add(&stats->waits, 1, __ATOMIC_RELAXED);
    gk_queue_sample(queue, stats);
    gk_callback_leave(queue);
}

gulong gk_queue_watch(GstElement *queue, GkEdgeStats *stats) {
    return g_signal_connect(queue, "overrun", G_CALLBACK(on_overrun), stats);
}

typedef struct {
    GkTransformFn transform;
    GkEventFn event;
    void *context;
    GDestroyNotify destroy;
    GkPadCounter *arriving; /* NULL: not counted here */
    GkPadCounter *passed;
} TransformProbe;

static void transform_probe_free(gpointer data) {
    TransformProbe *p = data;
    if (p->destroy)
        p->destroy(p->context);
    g_free(p);
}

/* One buffer through the transform: counted as it arrives and as it leaves. Takes ownership of
 * `in`; returns the buffer to pass on (owned) or NULL when the transform dropped it. */
static GstBuffer *transform_one(TransformProbe *p, GstBuffer *in) {
    GK_BUFFER_RECEIVED(in);
    if (p->arriving != NULL)
        count_buffer(p->arriving, in);
    GstBuffer *out = p->transform(p->context, in);
    if (out != NULL && p->passed != NULL)
        count_buffer(p->passed, out);
    if (out != NULL)
        GK_BUFFER_HANDED_ON(out);
    return out;
}

static GstPadProbeReturn transform_probe_body(GstPadProbeInfo *info, TransformProbe *p);

static GstPadProbeReturn transform_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    gk_callback_enter(pad);
    GstPadProbeReturn r = transform_probe_body(info, data);
    gk_callback_leave(pad);
    return r;
}

static GstPadProbeReturn transform_probe_body(GstPadProbeInfo *info, TransformProbe *p) {
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *out = transform_one(p, GST_PAD_PROBE_INFO_BUFFER(info));
        info->data = out;
        return out == NULL ? GST_PAD_PROBE_HANDLED : GST_PAD_PROBE_OK;
    }
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        /* Each buffer of a list on its own, in order: the list we pass on holds what the
         * transform kept (we own the list the probe gave us). */
        GstBufferList *in = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        guint n = gst_buffer_list_length(in);
        GstBufferList *out = gst_buffer_list_new_sized(n);
        for (guint i = 0; i < n; i++) {
            GstBuffer *b = transform_one(p, gst_buffer_ref(gst_buffer_list_get(in, i)));
            if (b != NULL)
                gst_buffer_list_add(out, b);
        }
        gst_buffer_list_unref(in);
        if (gst_buffer_list_length(out) == 0) {
            gst_buffer_list_unref(out);
            info->data = NULL;
            return GST_PAD_PROBE_HANDLED;
        }
        info->data = out;
        return GST_PAD_PROBE_OK;
    }
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        if (event && GST_EVENT_TYPE(event) == GST_EVENT_CAPS && p->event) {
            GstCaps *caps = NULL;
            gst_event_parse_caps(event, &caps);
            p->event(p->context, 0, caps);
        } else if (event && GST_EVENT_TYPE(event) == GST_EVENT_EOS && p->event) {
            p->event(p->context, 1, NULL);
        } else if (event && GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP && p->event) {
            p->event(p->context, 2, NULL);
        }
    }
    return GST_PAD_PROBE_OK;
}

gulong gk_pad_add_transform(GstPad *pad, GkTransformFn transform, GkEventFn event, void *context,
                            GDestroyNotify destroy) {
    return gk_pad_add_counted_transform(pad, transform, event, context, destroy, NULL, NULL);
}

gulong gk_pad_add_counted_transform(GstPad *pad, GkTransformFn transform, GkEventFn event, void *context,
                                    GDestroyNotify destroy, GkPadCounter *arriving, GkPadCounter *passed) {
    TransformProbe *p = g_new0(TransformProbe, 1);
    p->transform = transform;
    p->event = event;
    p->context = context;
    p->destroy = destroy;
    p->arriving = arriving;
    p->passed = passed;
    GkPadCounter *counters[] = {arriving, passed};
    for (int i = 0; i < 2; i++) {
        if (counters[i] != NULL) {
            counters[i]->start_ns = -1;
            counters[i]->end_ns = -1;
        }
    }
    GstPadProbeType mask = GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_EVENT_FLUSH;
    if (transform != NULL)
        mask |= GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST;
    return gst_pad_add_probe(pad, mask, transform_probe, p, transform_probe_free);
}
