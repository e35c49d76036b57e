/*
 * gkpatchbytes: replaces given bytes of a byte stream (a file's) as it passes, pulled or pushed,
 * by their offset in the stream.
 *
 * What for: GraphKit's decode keeps an MP4 sound track's edit list from GStreamer's demuxer,
 * which applies it by time and loses samples (GStreamer 1.22 drops the track's last frame, 1.26.2
 * keeps a sample of the priming: measured, see gkaudiotrim), and trims the edit's samples exactly
 * itself. Its MP4 reader (GraphKit's one reader of the format) reads the index before the run and
 * says which bytes change: each sound track's `edts` box marked `free` (the same size), and the
 * track and movie durations raised to the media's end, as the demuxer then ends a track at its
 * header's duration. This element knows nothing of MP4: it changes the bytes it is given, where
 * it is told. Needed on every version measured (1.22 and 1.26).
 *
 * `patches` is a list of `OFFSET:HEX` separated by `;` (decimal offset, the new bytes in hex); an
 * empty list passes everything untouched. Offsets are those of the upstream's buffers (a file
 * source's byte offsets); in pull mode, of each range pulled. Set it before the stream starts.
 *
 * Example launch line (hides an M4A's first `edts` box, at byte 1234, from qtdemux):
 *   gst-launch-1.0 filesrc location=in.m4a ! gkpatchbytes patches="1238:66726565" ! qtdemux ! avdec_aac ! fakesink
 */
#include <stdlib.h>
#include <string.h>
#include <gst/gst.h>
#include "../common/passthrough.h"

typedef struct {
    guint64 offset;
    GBytes *bytes;
} Patch;

typedef struct {
    GstElement parent;
    GstPad *sinkpad, *srcpad;
    GArray *patches; /* of Patch, sorted by offset; replaced whole under the object lock */
    gchar *text;     /* the property as set */
} GkPatchBytes;

typedef struct {
    GstElementClass parent_class;
} GkPatchBytesClass;

GType gk_patch_bytes_get_type(void);
G_DEFINE_TYPE(GkPatchBytes, gk_patch_bytes, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_PATCHES };

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);

static void patch_clear(gpointer data) { g_bytes_unref(((Patch *)data)->bytes); }

static gint by_offset(gconstpointer a, gconstpointer b) {
    guint64 x = ((const Patch *)a)->offset, y = ((const Patch *)b)->offset;
    return x < y ? -1 : x > y;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The patches `text` lists, or NULL when it does not parse. */
static GArray *parse_patches(const gchar *text) {
    GArray *patches = g_array_new(FALSE, FALSE, sizeof(Patch));
    g_array_set_clear_func(patches, patch_clear);
    gchar **items = g_strsplit(text ? text : "", ";", -1);
    gboolean ok = TRUE;
    for (gchar **item = items; ok && *item; item++) {
        gchar *entry = g_strstrip(*item);
        if (*entry == '\0') continue;
        gchar *colon = strchr(entry, ':');
        gchar *end = NULL;
        guint64 offset = colon ? g_ascii_strtoull(entry, &end, 10) : 0;
        gsize digits = colon ? strlen(colon + 1) : 0;
        ok = colon != NULL && end == colon && end != entry && digits > 0 && digits % 2 == 0;
        guint8 *bytes = ok ? g_malloc(digits / 2) : NULL;
        for (gsize i = 0; ok && i < digits / 2; i++) {
            int hi = hex_digit(colon[1 + 2 * i]), lo = hex_digit(colon[2 + 2 * i]);
            ok = hi >= 0 && lo >= 0;
            if (ok) bytes[i] = (guint8)(hi << 4 | lo);
        }
        if (ok) {
            Patch p = {offset, g_bytes_new_take(bytes, digits / 2)};
            g_array_append_val(patches, p);
        } else {
            g_free(bytes);
        }
    }
    g_strfreev(items);
    if (!ok) {
        g_array_unref(patches);
        return NULL;
    }
    g_array_sort(patches, by_offset);
    return patches;
}

/* The buffer with every patch that overlaps its bytes [offset, offset + size) applied. */
static GstBuffer *apply(GkPatchBytes *self, GstBuffer *buffer, guint64 offset) {
    GK_OBJECT_LOCK(self);
    GArray *patches = self->patches ? g_array_ref(self->patches) : NULL;
    GK_OBJECT_UNLOCK(self);
    if (patches == NULL) return buffer;
    guint64 size = gst_buffer_get_size(buffer), end = offset + size;
    for (guint i = 0; i < patches->len; i++) {
        const Patch *p = &g_array_index(patches, Patch, i);
        gsize length = 0;
        const guint8 *bytes = g_bytes_get_data(p->bytes, &length);
        if (p->offset >= end) break;
        if (p->offset + length <= offset) continue;
        guint64 from = MAX(offset, p->offset), to = MIN(end, p->offset + length);
        buffer = gst_buffer_make_writable(buffer);
        gst_buffer_fill(buffer, (gsize)(from - offset), bytes + (from - p->offset), (gsize)(to - from));
        GST_LOG_OBJECT(self, "patched %" G_GUINT64_FORMAT " bytes at %" G_GUINT64_FORMAT, to - from, from);
    }
    g_array_unref(patches);
    return buffer;
}

static GstFlowReturn chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    GK_BUFFER_RECEIVED(buffer);
    GkPatchBytes *self = (GkPatchBytes *)parent;
    (void)pad;
    if (GST_BUFFER_OFFSET_IS_VALID(buffer)) buffer = apply(self, buffer, GST_BUFFER_OFFSET(buffer));
    return gk_pad_push(self->srcpad, buffer);
}

static GstFlowReturn getrange(GstPad *pad, GstObject *parent, guint64 offset, guint length, GstBuffer **buffer) {
    GkPatchBytes *self = (GkPatchBytes *)parent;
    (void)pad;
    GstFlowReturn ret = gst_pad_pull_range(self->sinkpad, offset, length, buffer);
    if (ret == GST_FLOW_OK) {
        GK_BUFFER_RECEIVED(*buffer);
        *buffer = apply(self, *buffer, offset);
        GK_BUFFER_HANDED_ON(*buffer);
    }
    return ret;
}

/* Pulled downstream, it pulls upstream (the sink pad is otherwise activated in push mode, as a
 * pad is by default). */
static gboolean src_activate_mode(GstPad *pad, GstObject *parent, GstPadMode mode, gboolean active) {
    GkPatchBytes *self = (GkPatchBytes *)parent;
    (void)pad;
    if (mode == GST_PAD_MODE_PULL) return gst_pad_activate_mode(self->sinkpad, GST_PAD_MODE_PULL, active);
    return TRUE;
}

static void set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
    GkPatchBytes *self = (GkPatchBytes *)object;
    if (id != PROP_PATCHES) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    const gchar *text = g_value_get_string(value);
    GArray *patches = parse_patches(text);
    if (patches == NULL) {
        g_warning("gkpatchbytes: patches \"%s\" is not a list of OFFSET:HEX separated by ';'; kept \"%s\"", text,
                  self->text ? self->text : "");
        return;
    }
    GK_OBJECT_LOCK(self);
    GArray *old = self->patches;
    self->patches = patches->len > 0 ? patches : NULL;
    g_free(self->text);
    self->text = g_strdup(text ? text : "");
    GK_OBJECT_UNLOCK(self);
    if (patches->len == 0) g_array_unref(patches);
    if (old) g_array_unref(old);
}

static void get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
    GkPatchBytes *self = (GkPatchBytes *)object;
    if (id != PROP_PATCHES) {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        return;
    }
    GK_OBJECT_LOCK(self);
    g_value_set_string(value, self->text ? self->text : "");
    GK_OBJECT_UNLOCK(self);
}

static void finalize(GObject *object) {
    GkPatchBytes *self = (GkPatchBytes *)object;
    if (self->patches) g_array_unref(self->patches);
    g_free(self->text);
    G_OBJECT_CLASS(gk_patch_bytes_parent_class)->finalize(object);
}

static void gk_patch_bytes_class_init(GkPatchBytesClass *klass) {
    GObjectClass *object = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    object->set_property = set_property;
    object->get_property = get_property;
    object->finalize = finalize;
    g_object_class_install_property(object, PROP_PATCHES,
        g_param_spec_string("patches", "Patches", "Bytes to replace: OFFSET:HEX items separated by ';' (offset in decimal, new bytes in hex)",
                            "", G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY));
    gst_element_class_add_static_pad_template(element, &sink_template);
    gst_element_class_add_static_pad_template(element, &src_template);
    gst_element_class_set_static_metadata(element, "GraphKit byte patch", "Generic",
        "Replaces given bytes of a byte stream as it is pulled or pushed: GraphKit's decode hides MP4 sound-track edit lists "
        "from qtdemux (1.22 to 1.26), which applies them by time, and trims their samples exactly itself", "GraphKit");
}

static void gk_patch_bytes_init(GkPatchBytes *self) {
    gk_add_passthrough_pads(GST_ELEMENT(self), &sink_template, &src_template, chain, NULL, &self->sinkpad, &self->srcpad);
    /* Pulled too (qtdemux reads its file in pull mode). */
    gst_pad_set_getrange_function(self->srcpad, getrange);
    gst_pad_set_activatemode_function(self->srcpad, src_activate_mode);
    GST_PAD_SET_PROXY_SCHEDULING(self->srcpad);
}

GST_ELEMENT_REGISTER_DEFINE(gkpatchbytes, "gkpatchbytes", GST_RANK_NONE, gk_patch_bytes_get_type())
