#include <stddef.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/tcp.h>
#include "CGraphKitGlue.h"

/* What a network peer can make an element hold, bounded in bytes (issue 73, class 3). A
 * depayloader keeps a frame's fragments until the last one (an H.264 FU-A's end bit, an AAC
 * access unit's marker), a TS demuxer keeps a PES until the next one starts: a peer that starts
 * one and never ends it made rtph264depay hold 5 GB, tsdemux 242 MB, with only time to stop it.
 * Declarations in CGraphKitGlue.h. */

typedef struct {
    guint64 limit;
    gchar *message;
    GstElement *element;  /* not owned: the guard lives as long as the element's pads */
    guint64 held;         /* bytes in since the last buffer out (atomic) */
    gint posted;          /* the error has been posted (atomic) */
    GkHeldExceeded exceeded;
    void *context;
    GDestroyNotify destroy;
} Held;

static void held_free(gpointer data) {
    Held *h = data;
    if (h->destroy) h->destroy(h->context);
    g_free(h->message);
    g_free(h);
}

/* Posts the error, and tells the caller (which may cut the peer off), once. */
static void post_once(Held *h) {
    if (!g_atomic_int_compare_and_exchange(&h->posted, 0, 1)) return;
    gk_element_post_error(h->element, 3, GST_STREAM_ERROR_FAILED, h->message, NULL);
    if (h->exceeded) h->exceeded(h->context);
}

static guint64 probe_bytes(GstPadProbeInfo *info) {
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) return gst_buffer_get_size(GST_PAD_PROBE_INFO_BUFFER(info));
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) return gst_buffer_list_calculate_size(GST_PAD_PROBE_INFO_BUFFER_LIST(info));
    return 0;
}

static GstPadProbeReturn held_input(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    Held *h = data;
    if (g_atomic_int_get(&h->posted)) return GST_PAD_PROBE_DROP;
    const guint64 held = __atomic_add_fetch(&h->held, probe_bytes(info), __ATOMIC_RELAXED);
    if (held <= h->limit) return GST_PAD_PROBE_OK;
    post_once(h);
    return GST_PAD_PROBE_DROP;
}

static GstPadProbeReturn held_output(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad; (void)info;
    Held *h = data;
    __atomic_store_n(&h->held, 0, __ATOMIC_RELAXED);
    return GST_PAD_PROBE_OK;
}

static void watch_output(GstElement *element, GstPad *pad, gpointer data) {
    (void)element;
    if (GST_PAD_DIRECTION(pad) == GST_PAD_SRC)
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, held_output, data, NULL);
}

void gk_bound_held_bytes(GstElement *element, guint64 limit, const char *message,
                         GkHeldExceeded exceeded, void *context, GDestroyNotify destroy) {
    Held *h = g_new0(Held, 1);
    h->exceeded = exceeded;
    h->context = context;
    h->destroy = destroy;
    h->limit = limit;
    h->message = g_strdup(message);
    h->element = element;
    /* The guard is freed with the element (its pads' probes do not own it). */
    g_object_set_data_full(G_OBJECT(element), "graphkit-held-guard", h, held_free);
    GstIterator *it = gst_element_iterate_pads(element);
    GValue item = G_VALUE_INIT;
    while (gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
        GstPad *pad = g_value_get_object(&item);
        if (GST_PAD_DIRECTION(pad) == GST_PAD_SINK)
            gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, held_input, h, NULL);
        else
            watch_output(element, pad, h);
        g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(it);
    g_signal_connect(element, "pad-added", G_CALLBACK(watch_output), h);
}

/* MPEG-TS read as it arrives: for each PID, the payload bytes since its last unit start (a
 * PES's or a section's first packet). A demuxer holds a PES until the next one starts, so this
 * is what it would hold, whichever stream it is and whatever the others do. Packets are found
 * by their sync byte (and the next packet's); one split across buffers is put together first. */
#define TS_PACKET 188
#define TS_PIDS 8192

typedef struct {
    Held h;
    guint8 carry[TS_PACKET];
    gsize carried;
    guint8 started[TS_PIDS];
    guint64 since_start[TS_PIDS];
} TSHeld;

/* One packet; FALSE once a PID's unit passes the limit. */
static gboolean ts_packet(TSHeld *t, const guint8 *p) {
    const guint pid = ((guint)(p[1] & 0x1F) << 8) | p[2];
    const guint control = (p[3] >> 4) & 3;
    if (pid == 0x1FFF || !(control & 1)) return TRUE;     /* null packet, or no payload */
    gsize payload = TS_PACKET - 4;
    if (control & 2) {
        const gsize adaptation = (gsize)p[4] + 1;
        payload = adaptation >= payload ? 0 : payload - adaptation;
    }
    if (p[1] & 0x40) {
        t->started[pid] = 1;
        t->since_start[pid] = payload;
    } else if (t->started[pid]) {
        t->since_start[pid] += payload;
    }
    return t->since_start[pid] <= t->h.limit;
}

/* The bytes of one buffer, after what the last left; FALSE once over the limit. */
static gboolean ts_bytes(TSHeld *t, const guint8 *d, gsize n) {
    gsize i = 0;
    if (t->carried > 0) {
        const gsize take = MIN(TS_PACKET - t->carried, n);
        memcpy(t->carry + t->carried, d, take);
        t->carried += take;
        i = take;
        if (t->carried < TS_PACKET) return TRUE;
        t->carried = 0;
        if (!ts_packet(t, t->carry)) return FALSE;
    }
    while (i < n) {
        /* Out of step: find the next sync byte that the next packet's confirms (a stream of
         * 192- or 204-byte packets is then not read at all, rather than read wrongly). */
        if (d[i] != 0x47 || (i + TS_PACKET < n && d[i + TS_PACKET] != 0x47)) { i++; continue; }
        if (n - i < TS_PACKET) {
            memcpy(t->carry, d + i, n - i);
            t->carried = n - i;
            return TRUE;
        }
        if (!ts_packet(t, d + i)) return FALSE;
        i += TS_PACKET;
    }
    return TRUE;
}

static gboolean ts_buffer(TSHeld *t, GstBuffer *buffer) {
    GstMapInfo map;
    if (buffer == NULL || !gst_buffer_map(buffer, &map, GST_MAP_READ)) return TRUE;
    const gboolean ok = ts_bytes(t, map.data, map.size);
    gst_buffer_unmap(buffer, &map);
    return ok;
}

static GstPadProbeReturn ts_output(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    TSHeld *t = data;
    if (g_atomic_int_get(&t->h.posted)) return GST_PAD_PROBE_DROP;
    gboolean ok = TRUE;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        ok = ts_buffer(t, GST_PAD_PROBE_INFO_BUFFER(info));
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        for (guint i = 0; ok && list && i < gst_buffer_list_length(list); i++) ok = ts_buffer(t, gst_buffer_list_get(list, i));
    }
    if (ok) return GST_PAD_PROBE_OK;
    post_once(&t->h);
    return GST_PAD_PROBE_DROP;
}

void gk_bound_transport_stream_units(GstElement *element, const char *pad_name, guint64 limit, const char *message) {
    GstPad *pad = gst_element_get_static_pad(element, pad_name);
    if (pad == NULL) return;
    TSHeld *t = g_new0(TSHeld, 1);
    t->h.limit = limit;
    t->h.message = g_strdup(message);
    t->h.element = element;
    /* Probes run in the one streaming thread of the pad, in order; held_free frees the whole
     * (its Held comes first). */
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, ts_output, t, held_free);
    gst_object_unref(pad);
}

/* rtspsrc's jitter buffers (one a stream, in its rtpbin) queue packets between the thread that
 * reads the server and the one that passes them on; nothing bounds the queue but time, and a
 * peer flooding before the stream is linked filled it at the network's speed. Each is bounded
 * as a depayloader is: the bytes it takes in before it passes any on. The caller's `exceeded`
 * and `context` are shared by them all, freed with the last. */
typedef struct {
    gint refs;
    guint64 limit;
    gchar *message;
    GkHeldExceeded exceeded;
    void *context;
    GDestroyNotify destroy;
} Shared;

static void shared_unref(gpointer data) {
    Shared *s = data;
    if (!g_atomic_int_dec_and_test(&s->refs)) return;
    if (s->destroy) s->destroy(s->context);
    g_free(s->message);
    g_free(s);
}

static void shared_exceeded(void *data) {
    Shared *s = data;
    if (s->exceeded) s->exceeded(s->context);
}

static void bound_new_jitter_buffer(GstElement *rtpbin, GstElement *buffer, guint session, guint ssrc, gpointer data) {
    (void)rtpbin; (void)session; (void)ssrc;
    Shared *s = data;
    g_atomic_int_inc(&s->refs);
    gk_bound_held_bytes(buffer, s->limit, s->message, shared_exceeded, s, shared_unref);
}

static void bound_new_manager(GstElement *rtspsrc, GstElement *manager, gpointer data) {
    (void)rtspsrc;
    if (g_signal_lookup("new-jitterbuffer", G_OBJECT_TYPE(manager)) == 0) return;
    Shared *s = data;
    g_atomic_int_inc(&s->refs);
    g_signal_connect_data(manager, "new-jitterbuffer", G_CALLBACK(bound_new_jitter_buffer), s,
                          (GClosureNotify)(void (*)(void))shared_unref, 0);
}

void gk_rtspsrc_bound_jitter_buffers(GstElement *rtspsrc, guint64 limit, const char *message,
                                     GkHeldExceeded exceeded, void *context, GDestroyNotify destroy) {
    Shared *s = g_new0(Shared, 1);
    s->refs = 1;
    s->limit = limit;
    s->message = g_strdup(message);
    s->exceeded = exceeded;
    s->context = context;
    s->destroy = destroy;
    g_signal_connect_data(rtspsrc, "new-manager", G_CALLBACK(bound_new_manager), s,
                          (GClosureNotify)(void (*)(void))shared_unref, 0);
}

/* The bytes the kernel has taken in on TCP socket `fd` (tcpi_bytes_received), or -1: what a
 * peer sent, read without asking the element that reads it (rtmp2sink's statistics wait on the
 * connection that a flood keeps busy). */
gint64 gk_socket_bytes_received(int fd) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    if (length < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) return -1;
    return (gint64)info.tcpi_bytes_received;
}
