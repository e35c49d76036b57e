/* The hand-off from a graph's streaming thread to the app thread that pulls samples
 * (MediaOutput, under AssetReaderTrackOutput).
 *
 * appsink wakes a waiting puller for every buffer. A puller faster than the graph (an
 * AssetReader loop summing PCM) then sleeps and is woken once per sample: 15,000 times for a
 * 10-minute WAV read in 40 ms buffers, two context switches each, which cost that read half
 * again the decode-only time on this machine's virtual CPUs (perf: finish_task_switch and
 * try_to_wake_up the top symbols). This queue takes the buffers off the appsink's pad in a probe
 * and wakes a puller that found it empty only once a batch has gathered, or 1 ms has passed with
 * something to take, or the stream ends: a few hundred wake-ups instead of thousands, and at
 * most 1 ms added to a sample that trickles in alone (a live source).
 *
 * The appsink still receives every event, so end of stream reaches the bus as before, once the
 * app has pulled everything (what appsink's wait-on-eos does). */
#include "CGraphKitGlue.h"
#include "../GstGraphKit/common/tsan.h"  /* shared with the graphkit plugin's elements */
#include <gst/base/gstqueuearray.h>

struct GkAppQueue {
    gint refs;
    GMutex lock;
    GCond pulled;    /* signalled to a producer waiting for room, or for the queue to empty at EOS */
    GCond arrived;   /* signalled to a puller waiting for samples */
    GstPad *pad;     /* the appsink's sink pad; not referenced (the probe lives on it, and the
                        MediaOutput that pulls holds the appsink) */
    GstQueueArray *items; /* GkAppQueueItem */
    guint capacity;  /* 0: no bound */
    guint batch;     /* how many samples wake a puller that found the queue empty */
    guint wake_at;   /* what the waiting puller asked for: batch, then 1 once its 1 ms has passed */
    gboolean puller_waiting, producer_waiting, eos, flushing;
    GstCaps *caps;   /* the stream's current caps */
    gboolean notified; /* a producer woke the sleeping puller (cleared as it goes to sleep) */
    guint64 sleeps;  /* how often a puller has gone to sleep (tests read it) */
    guint64 missed;  /* how often a puller woke to what it had asked for with nobody having
                        told it: it slept on (to its next look, up to 100 ms) past samples it could take */
    gint64 recheck;  /* how long a wait sleeps before it looks again at the pad (a backstop) */
    GstPadActivateModeFunction activate_mode; /* the appsink's own, called after waking everyone */
};

typedef struct {
    GstBuffer *buffer;
    GstCaps *caps;
} GkAppQueueItem;

/* How long a wait sleeps before it looks again at the pad. A pad deactivated without a
 * flush-start (a pipeline set to NULL) wakes every wait at once (see deactivate); this is the
 * backstop for a way of stopping that goes around the pad's activation. */
#define GK_APP_QUEUE_RECHECK (100 * G_TIME_SPAN_MILLISECOND)
#define GK_APP_QUEUE_BATCH_WINDOW (1 * G_TIME_SPAN_MILLISECOND)

static void clear_item(gpointer p) {
    GkAppQueueItem *item = p;
    gst_buffer_unref(item->buffer);
    if (item->caps)
        gst_caps_unref(item->caps);
}

static gboolean stopped(GkAppQueue *q) { return q->flushing || GST_PAD_IS_FLUSHING(q->pad); }

static void clear_locked(GkAppQueue *q) {
    gst_queue_array_clear(q->items);
    g_cond_broadcast(&q->pulled);
}

/* Called with the lock held by the streaming thread: waits for room, then queues. FALSE when
 * the pad stopped meanwhile (the buffer is then not queued). */
static gboolean push_locked(GkAppQueue *q, GstBuffer *buffer) {
    while (q->capacity > 0 && gst_queue_array_get_length(q->items) >= q->capacity && !stopped(q)) {
        q->producer_waiting = TRUE;
        gk_cond_wait_until(&q->pulled, &q->lock, g_get_monotonic_time() + q->recheck);
    }
    q->producer_waiting = FALSE;
    if (stopped(q))
        return FALSE;
    GkAppQueueItem item = { buffer, q->caps ? gst_caps_ref(q->caps) : NULL };
    gst_queue_array_push_tail_struct(q->items, &item);
    if (q->puller_waiting && gst_queue_array_get_length(q->items) >= q->wake_at) {
        q->notified = TRUE;
        g_cond_broadcast(&q->arrived);
    }
    return TRUE;
}

static GstPadProbeReturn probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GkAppQueue *q = data;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
        gk_mutex_lock(&q->lock);
        gboolean queued = push_locked(q, buffer);
        gk_mutex_unlock(&q->lock);
        if (!queued) {
            gst_buffer_unref(buffer);
            GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_FLUSHING;
        }
        GST_PAD_PROBE_INFO_DATA(info) = NULL;
        return GST_PAD_PROBE_HANDLED;
    }
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        gboolean queued = TRUE;
        gk_mutex_lock(&q->lock);
        for (guint i = 0; queued && i < gst_buffer_list_length(list); i++) {
            GstBuffer *buffer = gst_buffer_ref(gst_buffer_list_get(list, i));
            if (!(queued = push_locked(q, buffer)))
                gst_buffer_unref(buffer);
        }
        gk_mutex_unlock(&q->lock);
        gst_buffer_list_unref(list);
        if (!queued)
            GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_FLUSHING;
        GST_PAD_PROBE_INFO_DATA(info) = NULL;
        return GST_PAD_PROBE_HANDLED;
    }
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    gk_mutex_lock(&q->lock);
    switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_CAPS: {
        GstCaps *caps = NULL;
        gst_event_parse_caps(event, &caps);
        gst_caps_replace(&q->caps, caps);
        break;
    }
    case GST_EVENT_STREAM_START:
        q->eos = FALSE;
        break;
    case GST_EVENT_EOS:
        /* The end passes on (and reaches the bus) once everything queued has been pulled. */
        q->eos = TRUE;
        g_cond_broadcast(&q->arrived);
        while (gst_queue_array_get_length(q->items) > 0 && !stopped(q)) {
            q->producer_waiting = TRUE;
            gk_cond_wait_until(&q->pulled, &q->lock, g_get_monotonic_time() + q->recheck);
        }
        q->producer_waiting = FALSE;
        break;
    case GST_EVENT_FLUSH_START:
        q->flushing = TRUE;
        clear_locked(q);
        g_cond_broadcast(&q->arrived);
        break;
    case GST_EVENT_FLUSH_STOP:
        q->flushing = FALSE;
        q->eos = FALSE;
        clear_locked(q);
        break;
    default:
        break;
    }
    gk_mutex_unlock(&q->lock);
    return GST_PAD_PROBE_OK;
}

static void unref_from_probe(gpointer data) { gk_app_queue_unref(data); }

/* The appsink's pad is deactivated (its pipeline set to READY or NULL) with no flush-start: the
 * pad is marked flushing before this runs, and then waits for its stream lock, which a producer
 * waiting for room in the probe holds. Every wait is woken here, finds the pad stopped and
 * returns, so stopping a pipeline never waits for a recheck. */
static gboolean deactivate(GstPad *pad, GstObject *parent, GstPadMode mode, gboolean active) {
    GkAppQueue *q = pad->activatemodedata;
    if (!active) {
        gk_mutex_lock(&q->lock);
        g_cond_broadcast(&q->pulled);
        g_cond_broadcast(&q->arrived);
        gk_mutex_unlock(&q->lock);
    }
    return q->activate_mode(pad, parent, mode, active);
}

GkAppQueue *gk_app_queue_attach(GstElement *appsink, guint capacity) {
    GstPad *pad = gst_element_get_static_pad(appsink, "sink");
    if (pad == NULL)
        return NULL;
    GkAppQueue *q = g_new0(GkAppQueue, 1);
    q->refs = 2; /* the caller's and the probe's */
    g_mutex_init(&q->lock);
    g_cond_init(&q->pulled);
    g_cond_init(&q->arrived);
    q->pad = pad;
    q->items = gst_queue_array_new_for_struct(sizeof(GkAppQueueItem), capacity > 0 ? capacity : 16);
    gst_queue_array_set_clear_func(q->items, clear_item);
    q->capacity = capacity;
    q->recheck = GK_APP_QUEUE_RECHECK;
    /* Half the bound, so the graph goes on filling the other half while the app drains a batch. */
    q->batch = capacity > 0 ? MAX(1, MIN(capacity / 2, 32)) : 32;
    gst_pad_add_probe(pad,
                      GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM
                          | GST_PAD_PROBE_TYPE_EVENT_FLUSH,
                      probe, q, unref_from_probe);
    q->activate_mode = GST_PAD_ACTIVATEMODEFUNC(pad);
    if (q->activate_mode != NULL) {
        g_atomic_int_inc(&q->refs); /* the pad's, given back when the pad goes */
        gst_pad_set_activatemode_function_full(pad, deactivate, q, unref_from_probe);
    }
    gst_object_unref(pad);
    return q;
}

void gk_app_queue_unref(GkAppQueue *q) {
    if (!g_atomic_int_dec_and_test(&q->refs))
        return;
    gst_queue_array_free(q->items);
    gst_caps_replace(&q->caps, NULL);
    g_mutex_clear(&q->lock);
    g_cond_clear(&q->pulled);
    g_cond_clear(&q->arrived);
    g_free(q);
}

GstBuffer *gk_app_queue_pop(GkAppQueue *q, gint64 timeout_us, GstCaps **caps) {
    gint64 now = g_get_monotonic_time();
    gint64 deadline = timeout_us < 0 ? G_MAXINT64 : now + timeout_us;
    gint64 batch_until = now + GK_APP_QUEUE_BATCH_WINDOW;
    *caps = NULL;
    gk_mutex_lock(&q->lock);
    /* Found empty: sleep until a batch has gathered (a graph faster than the app), or until the
     * window has passed with anything at all to take (a trickle). A queue not empty is taken from
     * at once. */
    if (gst_queue_array_get_length(q->items) == 0) {
        while (!stopped(q) && !q->eos && now < deadline) {
            guint length = gst_queue_array_get_length(q->items);
            if (length >= q->batch || (length > 0 && now >= batch_until))
                break;
            q->wake_at = now < batch_until ? q->batch : 1;
            q->puller_waiting = TRUE;
            q->notified = FALSE;
            q->sleeps++;
            gk_cond_wait_until(&q->arrived, &q->lock, MIN(deadline, now < batch_until ? batch_until : now + q->recheck));
            q->puller_waiting = FALSE;
            if (!q->notified && gst_queue_array_get_length(q->items) >= q->wake_at)
                q->missed++;
            now = g_get_monotonic_time();
        }
    }
    GstBuffer *buffer = NULL;
    if (!stopped(q) && gst_queue_array_get_length(q->items) > 0) {
        GkAppQueueItem *item = gst_queue_array_pop_head_struct(q->items);
        buffer = item->buffer;
        *caps = item->caps;
        guint length = gst_queue_array_get_length(q->items);
        if (q->producer_waiting && (length <= q->capacity / 2 || length == 0))
            g_cond_signal(&q->pulled);
    }
    gk_mutex_unlock(&q->lock);
    if (buffer) GK_BUFFER_RECEIVED(buffer);  /* handed to the app: what was done to it before comes first */
    return buffer;
}

gboolean gk_app_queue_is_at_end(GkAppQueue *q) {
    gk_mutex_lock(&q->lock);
    gboolean end = q->eos && gst_queue_array_get_length(q->items) == 0;
    gk_mutex_unlock(&q->lock);
    return end;
}

guint64 gk_app_queue_sleeps(GkAppQueue *q) {
    gk_mutex_lock(&q->lock);
    guint64 sleeps = q->sleeps;
    gk_mutex_unlock(&q->lock);
    return sleeps;
}

gboolean gk_app_queue_producer_waits(GkAppQueue *q) {
    gk_mutex_lock(&q->lock);
    gboolean waits = q->producer_waiting;
    gk_mutex_unlock(&q->lock);
    return waits;
}

void gk_app_queue_set_recheck(GkAppQueue *q, gint64 recheck_us) {
    gk_mutex_lock(&q->lock);
    q->recheck = recheck_us;
    gk_mutex_unlock(&q->lock);
}

guint64 gk_app_queue_missed_wakes(GkAppQueue *q) {
    gk_mutex_lock(&q->lock);
    guint64 missed = q->missed;
    gk_mutex_unlock(&q->lock);
    return missed;
}
