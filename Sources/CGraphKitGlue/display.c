#include "CGraphKitGlue.h"

/* Displays: declarations and contracts in CGraphKitGlue.h. */

static GstPadProbeReturn guard_display(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    GkDisplay *display = data;
    if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *event = GST_PAD_PROBE_INFO_EVENT(info);
        return event != NULL && GST_EVENT_TYPE(event) == GST_EVENT_TAG ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK;
    }
    GstPad *peer = gst_pad_get_peer(pad);
    if (peer == NULL)
        return GST_PAD_PROBE_OK; /* not linked: the push itself says so */
    gk_callback_enter(pad);
    if (display->title != NULL && !display->title_sent) {
        display->title_sent = 1;
        /* Straight to the sink: this probe drops the tag events that pass the pad. */
        gst_pad_send_event(peer, gst_event_new_tag(gst_tag_list_new(GST_TAG_TITLE, display->title, NULL)));
    }
    GstFlowReturn ret;
    gint64 count = 1;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        count = gst_buffer_list_length(list);
        ret = gst_pad_chain_list(peer, list);
    } else {
        ret = gst_pad_chain(peer, GST_PAD_PROBE_INFO_BUFFER(info));
    }
    gst_object_unref(peer);
    /* The sink took the data (chain takes it whatever the result): nothing is left to push. */
    info->data = NULL;
    if (ret == GST_FLOW_ERROR) {
        __atomic_fetch_add(&display->failed, count, __ATOMIC_RELAXED);
        ret = GST_FLOW_OK;
    }
    GST_PAD_PROBE_INFO_FLOW_RETURN(info) = ret;
    gk_callback_leave(pad);
    return GST_PAD_PROBE_HANDLED;
}

gulong gk_pad_guard_display(GstPad *pad, GkDisplay *display) {
    return gst_pad_add_probe(pad,
                             GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                             guard_display, display, NULL);
}

gint64 gk_display_failed(const GkDisplay *display) { return __atomic_load_n(&display->failed, __ATOMIC_RELAXED); }

gint64 gk_base_sink_rendered(GstElement *sink) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(sink), "stats");
    if (spec == NULL || spec->value_type != GST_TYPE_STRUCTURE)
        return -1;
    GstStructure *stats = NULL;
    g_object_get(sink, "stats", &stats, NULL);
    if (stats == NULL)
        return -1;
    guint64 rendered = 0;
    gboolean found = gst_structure_get_uint64(stats, "rendered", &rendered);
    gst_structure_free(stats);
    return found ? (gint64)rendered : -1;
}

static GQuark display_quark(void) { return g_quark_from_static_string("graphkit-display"); }

static GstBusSyncReply display_watch(GstBus *bus, GstMessage *message, gpointer data) {
    (void)bus;
    GstBin *pipeline = data;
    gk_callback_enter(pipeline);
    GstObject *src = GST_MESSAGE_SRC(message);
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR && src != NULL &&
        g_object_get_qdata(G_OBJECT(src), display_quark()) != NULL) {
        GError *error = NULL;
        gst_message_parse_error(message, &error, NULL);
        if (error != NULL && error->domain == GST_RESOURCE_ERROR && error->code == GST_RESOURCE_ERROR_NOT_FOUND) {
            GstMessage *closed = gst_message_new_element(
                src, gst_structure_new(GK_WINDOW_CLOSED, "text", G_TYPE_STRING, error->message, NULL));
            gst_message_unref(message);
            message = closed;
        }
        g_clear_error(&error);
    }
    /* What GstBin's own handler does: the bin handles (forwards or drops) the message. */
    GstBinClass *klass = GST_BIN_GET_CLASS(pipeline);
    if (klass->handle_message)
        klass->handle_message(pipeline, message);
    else
        gst_message_unref(message);
    gk_callback_leave(pipeline);
    return GST_BUS_DROP;
}

int gk_pipeline_watch_display(GstBin *pipeline, GstElement *sink) {
    if (pipeline == NULL || pipeline->child_bus == NULL)
        return 0;
    g_object_set_qdata(G_OBJECT(sink), display_quark(), GINT_TO_POINTER(1));
    if (g_object_get_qdata(G_OBJECT(pipeline), display_quark()) == NULL) {
        g_object_set_qdata(G_OBJECT(pipeline), display_quark(), GINT_TO_POINTER(1));
        /* GStreamer refuses to replace a sync handler; clearing GstBin's first is allowed. */
        gst_bus_set_sync_handler(pipeline->child_bus, NULL, NULL, NULL);
        gst_bus_set_sync_handler(pipeline->child_bus, display_watch, pipeline, NULL);
    }
    return 1;
}
