/*
 * gkwhipsink: WebRTC ingest over WHIP (RFC 9725). H.264 into `video` and Opus into `audio`
 * (request pads, either or both) are payloaded into a webrtcbin; once each pad has its caps, a
 * thread of the element's own makes the SDP offer (its ICE candidates gathered in it, as WHIP
 * clients without trickle ICE send), POSTs it to `url` (`Authorization: Bearer` with `token`),
 * takes the answer of a 201 reply and remembers its Location, the session's resource. The media
 * waits (each pad's streaming thread) until the peer connection is up, and the video then starts
 * at a key frame (one is asked for upstream). At the end of every input's stream the session is
 * ended with a DELETE of its resource, and only then does this bin post its end of stream (the
 * webrtcbin posts none).
 *
 * Every wait is bounded by `timeout` and woken when the element leaves PAUSED; errors name the
 * URL without its user, password or query, and never the token (a write-only property).
 *
 * Example launch line:
 *   gst-launch-1.0 videotestsrc is-live=true ! x264enc tune=zerolatency ! gkwhipsink name=w url=http://127.0.0.1:8889/cam/whip
 *     audiotestsrc is-live=true ! opusenc ! w.audio
 */
#include <string.h>
#include <gst/gst.h>
#define GST_USE_UNSTABLE_API /* webrtc_fwd.h: the WebRTC library of 1.22 says its API may change */
#include <gst/sdp/sdp.h>
#include <gst/video/video.h>
#include <gst/webrtc/webrtc.h>
#include "http.h"

GST_DEBUG_CATEGORY_STATIC(gk_whip_sink_debug);
#define GST_CAT_DEFAULT gk_whip_sink_debug

enum { VIDEO, AUDIO, KINDS };

typedef struct {
    GstBin parent;
    GstElement *webrtc;
    GstPad *inputs[KINDS];  /* the payloaders' sink pads, once requested */
    GstPad *into[KINDS];    /* webrtcbin's sink pads they feed (ours: a reference each) */

    GMutex lock; /* guards what follows, with `changed` */
    GCond changed;
    gchar *url, *token, *ca_file;
    guint timeout;
    GTlsDatabase *authorities; /* from ca-file, made when starting; NULL: the system's */
    gboolean ended[KINDS];
    gboolean connected, failed, stopping, keyframe_asked;
    gboolean promised; /* the promise waited for has its reply (or was interrupted) */
    GThread *thread;
    GCancellable *cancellable;
} GkWhipSink;

typedef struct {
    GstBinClass parent_class;
} GkWhipSinkClass;

GType gk_whip_sink_get_type(void);
G_DEFINE_TYPE(GkWhipSink, gk_whip_sink, GST_TYPE_BIN)

enum { PROP_0, PROP_URL, PROP_TOKEN, PROP_TIMEOUT, PROP_CA_FILE };

static GstStaticPadTemplate video_template = GST_STATIC_PAD_TEMPLATE("video", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS("video/x-h264"));
static GstStaticPadTemplate audio_template = GST_STATIC_PAD_TEMPLATE("audio", GST_PAD_SINK, GST_PAD_REQUEST, GST_STATIC_CAPS("audio/x-opus"));

/* The URL as errors may show it (no credentials); a copy. */
static gchar *shown_url(GkWhipSink *self) {
    g_mutex_lock(&self->lock);
    gchar *shown = gk_http_shown_url(self->url);
    g_mutex_unlock(&self->lock);
    return shown ? shown : g_strdup("(the WHIP URL, which does not parse)");
}

static void on_change(gpointer data);
static void on_caps(GObject *pad, GParamSpec *pspec, gpointer data) { on_change(data); }

/* ---- the media's side ---- */

static int kind_of(GkWhipSink *self, GstPad *pad) {
    for (int k = 0; k < KINDS; k++)
        if (self->inputs[k] == pad) return k;
    return -1;
}

/* Every input buffer: held until the peer connection is up (dropped once stopping), then the
 * video's from a key frame. */
static GstPadProbeReturn hold_until_connected(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GkWhipSink *self = data;
    const int kind = kind_of(self, pad);
    g_mutex_lock(&self->lock);
    while (!self->connected && !self->stopping && !self->failed) g_cond_wait(&self->changed, &self->lock);
    const gboolean go = self->connected && !self->stopping;
    gboolean ask = FALSE;
    if (go && kind == VIDEO && (info->type & GST_PAD_PROBE_TYPE_BUFFER) &&
        GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT)) {
        ask = !self->keyframe_asked;
        self->keyframe_asked = TRUE;
        g_mutex_unlock(&self->lock);
        if (ask) gst_pad_push_event(pad, gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0));
        return GST_PAD_PROBE_DROP;
    }
    g_mutex_unlock(&self->lock);
    if (!go) return GST_PAD_PROBE_DROP;
    return GST_PAD_PROBE_REMOVE;
}

/* The end of stream, on the way in. */
static GstPadProbeReturn watch_events(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GkWhipSink *self = data;
    GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
    const int kind = kind_of(self, pad);
    if (kind < 0) return GST_PAD_PROBE_OK;
    if (GST_EVENT_TYPE(event) == GST_EVENT_EOS) {
        g_mutex_lock(&self->lock);
        self->ended[kind] = TRUE;
        g_cond_broadcast(&self->changed);
        g_mutex_unlock(&self->lock);
    }
    return GST_PAD_PROBE_OK;
}

static GstPad *request_new_pad(GstElement *element, GstPadTemplate *templ, const gchar *name, const GstCaps *caps) {
    GkWhipSink *self = (GkWhipSink *)element;
    const int kind = !strcmp(GST_PAD_TEMPLATE_NAME_TEMPLATE(templ), "video") ? VIDEO : AUDIO;
    if (self->inputs[kind] || !self->webrtc) return NULL; /* one of each; no webrtcbin installed */
    GstElement *pay, *filter = gst_element_factory_make("capsfilter", NULL);
    if (kind == VIDEO) {
        pay = gst_element_factory_make("rtph264pay", NULL);
        if (pay) g_object_set(pay, "config-interval", -1, NULL);
        if (pay) gst_util_set_object_arg(G_OBJECT(pay), "aggregate-mode", "zero-latency");
    } else {
        pay = gst_element_factory_make("rtpopuspay", NULL);
    }
    if (!pay || !filter) {
        if (pay) gst_object_unref(gst_object_ref_sink(pay));
        if (filter) gst_object_unref(gst_object_ref_sink(filter));
        return NULL;
    }
    GstCaps *rtp = gst_caps_from_string(kind == VIDEO ? "application/x-rtp, media=video, encoding-name=H264, payload=96, clock-rate=90000"
                                                      : "application/x-rtp, media=audio, encoding-name=OPUS, payload=97, clock-rate=48000");
    g_object_set(filter, "caps", rtp, NULL);
    gst_caps_unref(rtp);
    gst_bin_add_many(GST_BIN(self), pay, filter, NULL);
    GstPad *into = gst_element_request_pad_simple(self->webrtc, "sink_%u");
    GstPad *out = gst_element_get_static_pad(filter, "src");
    const gboolean linked = gst_element_link(pay, filter) && into && gst_pad_link(out, into) == GST_PAD_LINK_OK;
    gst_object_unref(out);
    if (!linked) {
        if (into) gst_element_release_request_pad(self->webrtc, into), gst_object_unref(into);
        gst_element_set_state(pay, GST_STATE_NULL);
        gst_element_set_state(filter, GST_STATE_NULL);
        gst_bin_remove_many(GST_BIN(self), pay, filter, NULL);
        return NULL;
    }
    /* WHIP sends only (RFC 9725 4.2): webrtcbin makes a send-and-receive transceiver for a pad. */
    GstWebRTCRTPTransceiver *transceiver = NULL;
    if (g_object_class_find_property(G_OBJECT_GET_CLASS(into), "transceiver")) g_object_get(into, "transceiver", &transceiver, NULL);
    if (transceiver) {
        g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, NULL);
        gst_object_unref(transceiver);
    }
    g_signal_connect(into, "notify::caps", G_CALLBACK(on_caps), self);
    self->into[kind] = into;
    gst_element_sync_state_with_parent(pay);
    gst_element_sync_state_with_parent(filter);
    GstPad *target = gst_element_get_static_pad(pay, "sink");
    self->inputs[kind] = target;
    gst_pad_add_probe(target, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, watch_events, self, NULL);
    gst_pad_add_probe(target, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST, hold_until_connected, self, NULL);
    GstPad *ghost = gst_ghost_pad_new_from_template(name ? name : GST_PAD_TEMPLATE_NAME_TEMPLATE(templ), target, templ);
    gst_pad_set_active(ghost, TRUE);
    gst_element_add_pad(element, ghost);
    gst_object_unref(target); /* inputs[] keeps the pad's address only, while the payloader is a child */
    return ghost;
}

/* ---- the exchange ---- */

/* Waits under the lock until `done` says so, the element stops, or `deadline` (monotonic) passes.
 * TRUE when `done`. */
static gboolean wait_for(GkWhipSink *self, gboolean (*done)(GkWhipSink *), gint64 deadline) {
    gboolean ok;
    g_mutex_lock(&self->lock);
    while (!(ok = done(self)) && !self->stopping && g_cond_wait_until(&self->changed, &self->lock, deadline)) {}
    g_mutex_unlock(&self->lock);
    return ok;
}

/* Every input's format is in webrtcbin (the offer is made from its pads' caps), or its stream
 * ended without one. */
static gboolean all_caps(GkWhipSink *self) {
    for (int k = 0; k < KINDS; k++)
        if (self->inputs[k] && !self->ended[k] && !gst_pad_has_current_caps(self->into[k]))
            return FALSE;
    return TRUE;
}

static gboolean all_ended(GkWhipSink *self) {
    for (int k = 0; k < KINDS; k++)
        if (self->inputs[k] && !self->ended[k]) return FALSE;
    return TRUE;
}

static gboolean connected_or_failed(GkWhipSink *self) { return self->connected || self->failed; }
static gboolean promised(GkWhipSink *self) { return self->promised; }
static gboolean never(GkWhipSink *self) { return FALSE; }

static gboolean stopping(GkWhipSink *self) {
    g_mutex_lock(&self->lock);
    const gboolean stopping = self->stopping;
    g_mutex_unlock(&self->lock);
    return stopping;
}

static void on_change(gpointer data) {
    GkWhipSink *self = data;
    g_mutex_lock(&self->lock);
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
}

/* The session failed (the error posted): held inputs are let go, dropping. */
static void mark_failed(GkWhipSink *self) {
    g_mutex_lock(&self->lock);
    self->failed = TRUE;
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
}

/* A promise's reply that is webrtcbin's error: posted, TRUE. */
static gboolean refused(GkWhipSink *self, const GstStructure *reply, const char *what) {
    GError *error = NULL;
    if (!reply || !gst_structure_has_field(reply, "error")) return FALSE;
    gst_structure_get(reply, "error", G_TYPE_ERROR, &error, NULL);
    GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("WebRTC refused the %s: %s", what, error ? error->message : "no reason given"), (NULL));
    if (error) g_error_free(error);
    return TRUE;
}

static void on_promise(GstPromise *promise, gpointer data) {
    GkWhipSink *self = data;
    g_mutex_lock(&self->lock);
    self->promised = TRUE;
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
}

/* Emits `signal` with `description` (or NULL) and a promise, and waits for its reply (bounded);
 * the reply, or NULL with the promise interrupted. */
static const GstStructure *ask(GkWhipSink *self, const char *signal, GstWebRTCSessionDescription *description, GstPromise **promise,
                               gint64 deadline) {
    g_mutex_lock(&self->lock);
    self->promised = FALSE;
    g_mutex_unlock(&self->lock);
    *promise = gst_promise_new_with_change_func(on_promise, self, NULL);
    g_signal_emit_by_name(self->webrtc, signal, description, *promise);
    if (!wait_for(self, promised, deadline)) {
        gst_promise_interrupt(*promise); /* wakes nothing of ours: webrtcbin replies into nothing */
        return NULL;
    }
    /* Changed: replied, or interrupted or expired (gst_promise_wait returns at once then). */
    return gst_promise_wait(*promise) == GST_PROMISE_RESULT_REPLIED ? gst_promise_get_reply(*promise) : NULL;
}

static void on_state(GObject *webrtc, GParamSpec *pspec, gpointer data) {
    GkWhipSink *self = data;
    GstWebRTCPeerConnectionState state;
    g_object_get(webrtc, "connection-state", &state, NULL);
    g_mutex_lock(&self->lock);
    const gboolean was = self->connected;
    if (state == GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED) self->connected = TRUE;
    if (state == GST_WEBRTC_PEER_CONNECTION_STATE_FAILED) self->failed = TRUE;
    const gboolean lost = state == GST_WEBRTC_PEER_CONNECTION_STATE_FAILED && was && !self->stopping;
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
    if (lost) {
        gchar *url = shown_url(self);
        GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("The WebRTC connection of the WHIP session at \"%s\" was lost", url), (NULL));
        g_free(url);
    }
}

static gboolean gathered(GkWhipSink *self) {
    GstWebRTCICEGatheringState state;
    g_object_get(self->webrtc, "ice-gathering-state", &state, NULL);
    return state == GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE;
}

static void on_gathering(GObject *webrtc, GParamSpec *pspec, gpointer data) { on_change(data); }

/* The session: offer, POST, answer, connection (one deadline, `timeout` from the formats); its
 * resource (to DELETE) in *resource once the endpoint made one, whatever follows. FALSE after
 * posting the error (none when stopping). */
static gboolean start_session(GkWhipSink *self, const gchar *url, const gchar *token, guint timeout, gchar **resource) {
    const gint64 deadline = g_get_monotonic_time() + (gint64)timeout * G_USEC_PER_SEC;
    gchar *shown = shown_url(self);
    gboolean ok = FALSE;
    GstPromise *promise = NULL, *local = NULL, *remote = NULL;
    GstWebRTCSessionDescription *offer = NULL;
    gchar *sdp = NULL;
    GkHttpReply reply = { 0 };
    /* The inputs' formats, for the offer: as long as the streams take to send them. */
    if (!wait_for(self, all_caps, G_MAXINT64)) goto out;

    const GstStructure *made = ask(self, "create-offer", NULL, &promise, deadline);
    if (!made || !gst_structure_get(made, "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL)) {
        if (!stopping(self)) GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("WebRTC made no offer for the WHIP session at \"%s\"", shown), (NULL));
        goto out;
    }
    if (refused(self, ask(self, "set-local-description", offer, &local, deadline), "offer") || stopping(self)) goto out;
    /* Every candidate in the offer: WHIP clients need not trickle. */
    if (!wait_for(self, gathered, deadline)) {
        if (!stopping(self)) GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("ICE did not gather its candidates within %u s", timeout), (NULL));
        goto out;
    }
    GstWebRTCSessionDescription *described = NULL;
    g_object_get(self->webrtc, "local-description", &described, NULL);
    sdp = described ? gst_sdp_message_as_text(described->sdp) : NULL;
    if (described) gst_webrtc_session_description_free(described);
    if (!sdp) {
        GST_ELEMENT_ERROR(self, LIBRARY, FAILED, ("WebRTC made no local description for the WHIP session at \"%s\"", shown), (NULL));
        goto out;
    }

    GError *error = NULL;
    guint left = (guint)MAX(1, (deadline - g_get_monotonic_time() + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC);
    if (!gk_http_request("POST", url, "application/sdp", sdp, token, self->authorities, left, self->cancellable, &reply, &error)) {
        if (stopping(self)) {
        } else if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)) {
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("The WHIP endpoint \"%s\" did not answer within %u s", shown, timeout), (NULL));
        } else if (error->domain == G_TLS_ERROR) {
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE,
                              ("The WHIP endpoint \"%s\" failed TLS: %s (a server whose certificate the system does not trust needs "
                               "its authority given: certificateAuthority)", shown, error->message), (NULL));
        } else {
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("Cannot send the offer to the WHIP endpoint \"%s\": %s", shown, error->message),
                              (NULL));
        }
        g_error_free(error);
        goto out;
    }
    if (reply.status / 100 != 2) {
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("The WHIP endpoint \"%s\" refused the session: HTTP %u%s", shown, reply.status,
                                                       reply.status == 401 || reply.status == 403 ? " (check the token)" : ""),
                          (NULL));
        goto out;
    }
    gsize size;
    const gchar *body = g_bytes_get_data(reply.body, &size);
    gchar *text = g_strndup(body ? body : "", size);
    GstSDPMessage *answer_sdp = NULL;
    const gboolean parsed = gst_sdp_message_new_from_text(text, &answer_sdp) == GST_SDP_OK && gst_sdp_message_medias_len(answer_sdp) > 0;
    g_free(text);
    if (!parsed) {
        if (answer_sdp) gst_sdp_message_free(answer_sdp);
        GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("The WHIP endpoint \"%s\" answered HTTP %u without an SDP answer", shown, reply.status),
                          (NULL));
        goto out;
    }
    *resource = reply.location ? gk_http_resolve(url, reply.location) : NULL;
    GstWebRTCSessionDescription *answer = gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_ANSWER, answer_sdp);
    const gboolean taken = !refused(self, ask(self, "set-remote-description", answer, &remote, deadline), "WHIP endpoint's answer");
    gst_webrtc_session_description_free(answer);
    if (!taken) goto out;
    const gboolean up = wait_for(self, connected_or_failed, deadline);
    g_mutex_lock(&self->lock);
    const gboolean failed = self->failed;
    g_mutex_unlock(&self->lock);
    if (!up || failed) {
        if (!stopping(self))
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("No WebRTC connection to the peer the WHIP endpoint \"%s\" answered for, within %u s",
                                                           shown, timeout), ("ICE or DTLS did not complete"));
        goto out;
    }
    GST_INFO_OBJECT(self, "connected to %s", shown);
    ok = TRUE;
out:
    if (!ok) mark_failed(self);
    gk_http_reply_clear(&reply);
    g_free(sdp);
    if (offer) gst_webrtc_session_description_free(offer);
    for (GstPromise **p = (GstPromise *[]){ promise, local, remote }, **end = p + 3; p < end; p++)
        if (*p) gst_promise_unref(*p);
    g_free(shown);
    return ok;
}

/* Ends the session: its resource DELETEd (at most `timeout` s). The token goes only to the
 * endpoint's own origin, and an https endpoint's resource is never reached over http. */
static void end_session(GkWhipSink *self, const gchar *url, const gchar *resource, const gchar *token, guint timeout,
                        GCancellable *cancellable) {
    if (!resource) return;
    if (gk_http_downgrades(url, resource)) {
        GST_WARNING_OBJECT(self, "the session's resource is not https, as its endpoint is: not ended");
        return;
    }
    const gchar *sent = gk_http_same_origin(url, resource) ? token : NULL;
    GkHttpReply reply;
    GError *error = NULL;
    gboolean done = gk_http_request("DELETE", resource, NULL, NULL, sent, self->authorities, timeout, cancellable, &reply, &error);
    if (!done && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        /* Stopped meanwhile: one more try, of at most a second. */
        g_clear_error(&error);
        GCancellable *fresh = g_cancellable_new();
        done = gk_http_request("DELETE", resource, NULL, NULL, sent, self->authorities, 1, fresh, &reply, &error);
        g_object_unref(fresh);
    }
    if (done) {
        GST_INFO_OBJECT(self, "session ended: HTTP %u", reply.status);
        gk_http_reply_clear(&reply);
    } else {
        GST_WARNING_OBJECT(self, "the session's DELETE failed: %s", error->message);
        g_error_free(error);
    }
}

static gpointer run(gpointer data) {
    GkWhipSink *self = data;
    g_mutex_lock(&self->lock);
    gchar *url = g_strdup(self->url), *token = g_strdup(self->token);
    const guint timeout = self->timeout;
    g_mutex_unlock(&self->lock);
    gchar *resource = NULL;
    gboolean ended = FALSE;
    if (start_session(self, url, token, timeout, &resource)) {
        wait_for(self, all_ended, G_MAXINT64);
        if (!stopping(self)) {
            /* The last packets leave before the session is ended (unless it stops meanwhile). */
            wait_for(self, never, g_get_monotonic_time() + G_USEC_PER_SEC / 2);
            end_session(self, url, resource, token, timeout, self->cancellable);
            gst_element_post_message(GST_ELEMENT(self), gst_message_new_eos(GST_OBJECT(self)));
            ended = TRUE;
        }
    }
    if (!ended) {
        /* Failed or stopped after the endpoint made the session: ended all the same, in at most a
         * second (http.c's deadline covers the name lookup too). */
        GCancellable *fresh = g_cancellable_new();
        end_session(self, url, resource, token, 1, fresh);
        g_object_unref(fresh);
    }
    g_free(resource);
    if (token) memset(token, 0, strlen(token));
    g_free(token);
    g_free(url);
    return NULL;
}

/* Wakes every wait (the inputs' streaming threads too) and cancels the exchange; with `join`,
 * waits for the thread (at most the second a stopped session's DELETE takes). */
static void stop_thread(GkWhipSink *self, gboolean join) {
    g_mutex_lock(&self->lock);
    self->stopping = TRUE;
    g_cond_broadcast(&self->changed);
    g_mutex_unlock(&self->lock);
    if (self->cancellable) g_cancellable_cancel(self->cancellable);
    if (join && self->thread) {
        g_thread_join(self->thread);
        self->thread = NULL;
    }
}

static GstStateChangeReturn change_state(GstElement *element, GstStateChange transition) {
    GkWhipSink *self = (GkWhipSink *)element;
    if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
        g_mutex_lock(&self->lock);
        gchar *shown = self->url ? gk_http_shown_url(self->url) : NULL;
        const gboolean usable = shown != NULL && (!g_ascii_strncasecmp(self->url, "http://", 7) || !g_ascii_strncasecmp(self->url, "https://", 8));
        g_free(shown);
        self->stopping = self->connected = self->failed = self->keyframe_asked = FALSE;
        for (int k = 0; k < KINDS; k++) self->ended[k] = FALSE;
        g_mutex_unlock(&self->lock);
        if (!usable) {
            GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No WHIP URL (http:// or https://) to send to"), (NULL));
            return GST_STATE_CHANGE_FAILURE;
        }
        g_clear_object(&self->authorities);
        g_mutex_lock(&self->lock);
        gchar *ca_file = g_strdup(self->ca_file);
        g_mutex_unlock(&self->lock);
        if (ca_file) {
            GError *error = NULL;
            self->authorities = g_tls_file_database_new(ca_file, &error);
            if (!self->authorities) {
                GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Cannot read the certificate authorities in \"%s\": %s", ca_file, error->message), (NULL));
                g_error_free(error);
                g_free(ca_file);
                return GST_STATE_CHANGE_FAILURE;
            }
        }
        g_free(ca_file);
        g_clear_object(&self->cancellable);
        self->cancellable = g_cancellable_new();
        self->thread = g_thread_new("gkwhipsink", run, self);
    } else if (transition == GST_STATE_CHANGE_PAUSED_TO_READY) {
        stop_thread(self, FALSE); /* every wait wakes before the pads deactivate */
    }
    GstStateChangeReturn ret = GST_ELEMENT_CLASS(gk_whip_sink_parent_class)->change_state(element, transition);
    /* Joined once the pads are down; or at once when starting failed (no PAUSED_TO_READY follows). */
    if (transition == GST_STATE_CHANGE_PAUSED_TO_READY || (transition == GST_STATE_CHANGE_READY_TO_PAUSED && ret == GST_STATE_CHANGE_FAILURE))
        stop_thread(self, TRUE);
    return ret;
}

/* ---- properties ---- */

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkWhipSink *self = (GkWhipSink *)object;
    g_mutex_lock(&self->lock);
    switch (id) {
    case PROP_URL: g_free(self->url); self->url = g_value_dup_string(value); break;
    case PROP_TOKEN:
        if (self->token) memset(self->token, 0, strlen(self->token));
        g_free(self->token);
        self->token = g_value_dup_string(value);
        break;
    case PROP_TIMEOUT: self->timeout = g_value_get_uint(value); break;
    case PROP_CA_FILE: g_free(self->ca_file); self->ca_file = g_value_dup_string(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    g_mutex_unlock(&self->lock);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkWhipSink *self = (GkWhipSink *)object;
    g_mutex_lock(&self->lock);
    switch (id) {
    case PROP_URL: g_value_set_string(value, self->url); break;
    case PROP_TIMEOUT: g_value_set_uint(value, self->timeout); break;
    case PROP_CA_FILE: g_value_set_string(value, self->ca_file); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec); break;
    }
    g_mutex_unlock(&self->lock);
}

static void finalize(GObject *object) {
    GkWhipSink *self = (GkWhipSink *)object;
    g_free(self->url);
    if (self->token) memset(self->token, 0, strlen(self->token));
    g_free(self->token);
    g_free(self->ca_file);
    g_clear_object(&self->authorities);
    g_clear_object(&self->cancellable);
    for (int k = 0; k < KINDS; k++)
        if (self->into[k]) gst_object_unref(self->into[k]);
    g_mutex_clear(&self->lock);
    g_cond_clear(&self->changed);
    G_OBJECT_CLASS(gk_whip_sink_parent_class)->finalize(object);
}

static void gk_whip_sink_class_init(GkWhipSinkClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GST_DEBUG_CATEGORY_INIT(gk_whip_sink_debug, "gkwhipsink", 0, "GraphKit's WHIP client");
    object->set_property = set_property;
    object->get_property = get_property;
    object->finalize = finalize;
    const GParamFlags flags = G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
    g_object_class_install_property(object, PROP_URL,
        g_param_spec_string("url", "URL", "The WHIP endpoint (http:// or https://)", NULL, flags | G_PARAM_READWRITE));
    g_object_class_install_property(object, PROP_TOKEN,
        g_param_spec_string("token", "Token", "Sent as \"Authorization: Bearer\"; write-only, never shown", NULL, flags | G_PARAM_WRITABLE));
    g_object_class_install_property(object, PROP_TIMEOUT,
        g_param_spec_uint("timeout", "Timeout", "Seconds for the offer, the endpoint's answer and the connection", 1, 600, 10,
                          flags | G_PARAM_READWRITE));
    g_object_class_install_property(object, PROP_CA_FILE,
        g_param_spec_string("ca-file", "Certificate authorities",
                            "A PEM file of the authorities to check an https:// server's certificate against, instead of the system's",
                            NULL, flags | G_PARAM_READWRITE));
    gst_element_class_add_static_pad_template(element, &video_template);
    gst_element_class_add_static_pad_template(element, &audio_template);
    gst_element_class_set_static_metadata(element, "GraphKit WHIP sink", "Sink/Network",
                                          "Sends H.264 and Opus to a WHIP endpoint (RFC 9725) over WebRTC", "GraphKit");
    element->request_new_pad = request_new_pad;
    element->change_state = change_state;
}

static void gk_whip_sink_init(GkWhipSink *self) {
    g_mutex_init(&self->lock);
    g_cond_init(&self->changed);
    self->timeout = 10;
    self->webrtc = gst_element_factory_make("webrtcbin", "webrtc");
    if (self->webrtc) {
        gst_util_set_object_arg(G_OBJECT(self->webrtc), "bundle-policy", "max-bundle");
        g_signal_connect(self->webrtc, "notify::connection-state", G_CALLBACK(on_state), self);
        g_signal_connect(self->webrtc, "notify::ice-gathering-state", G_CALLBACK(on_gathering), self);
        gst_bin_add(GST_BIN(self), self->webrtc);
    }
    /* The pipeline waits for this bin's end of stream (the webrtcbin's sinks post none). */
    GST_OBJECT_FLAG_SET(self, GST_ELEMENT_FLAG_SINK);
}

GST_ELEMENT_REGISTER_DEFINE(gkwhipsink, "gkwhipsink", GST_RANK_NONE, gk_whip_sink_get_type())
