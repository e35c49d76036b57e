#ifndef GRAPHKIT_GLUE_H
#define GRAPHKIT_GLUE_H
/*
 * Out-of-line helpers for the parts of GStreamer that Swift cannot import (macros, variadic
 * functions) and for the per-buffer hot paths that are cheaper in C (counting probes).
 * Declarations only; each section names the file that defines it (glue.c when it names none).
 * GraphKit's GStreamer elements are not here: they are the graphkit plugin (Sources/GstGraphKit).
 */
#include <stdint.h>
#include <gst/gst.h>

/* Happens-before edges through GStreamer for ThreadSanitizer (glue.c says which); they do nothing
 * in a build without -fsanitize=thread.
 * gk_callback_enter/leave bracket every callback GStreamer makes into our code on its threads
 * (`object` is the element or pad the callback is for); gk_buffer_received marks a buffer our
 * code takes from elsewhere (made, pulled, handed to a probe); gk_buffer_ref/unref mark it handed
 * on. Start and stop pipelines, and start elements added to a running one, through the two
 * state functions below. */
void gk_callback_enter(gpointer object);
void gk_callback_leave(gpointer object);
void gk_buffer_received(GstBuffer *buffer);
GstStateChangeReturn gk_element_set_state(GstElement *element, GstState state);
gboolean gk_element_sync_state_with_parent(GstElement *element);
/* Takes an element of a pipeline still in NULL to READY and back, which opens and closes its
 * device (a display server, a sound card). Returns NULL when it opened, or GStreamer's words for
 * why not (the text of the error it posted, its debug text after a newline; to free with g_free). */
char *gk_element_try_open(GstElement *element);

/* Initialises GStreamer once per process and registers GraphKit's own elements (the graphkit
 * plugin, Sources/GstGraphKit) in it. Returns NULL on success, or a message to free: a whole sentence, the cause and what to do. */
char *gk_init(void);

/* malloc keeps frame-sized blocks in its heaps (mmap above 32 MiB only) and up to 64 MiB free at
 * their tops: GStreamer.keepFrameMemory(). */
void gk_keep_frame_memory(void);

/* Mini-object macros, out of line. */
GstBuffer *gk_buffer_ref(GstBuffer *buffer);
void gk_buffer_unref(GstBuffer *buffer);
int gk_buffer_is_writable(GstBuffer *buffer);
/* gk_buffer_is_writable, and every memory of it writable too: held by this buffer alone and not
 * read-only (gkavdec's pictures, which libavcodec may still read as references, are not). */
int gk_buffer_bytes_are_writable(GstBuffer *buffer);
GstBuffer *gk_buffer_make_writable(GstBuffer *buffer);
void gk_caps_unref(GstCaps *caps);
GstCaps *gk_caps_ref(GstCaps *caps);
void gk_sample_unref(GstSample *sample);
void gk_message_unref(GstMessage *message);

/* Sets a property from its string form, typed by the property's own spec.
 * Returns 0 when set, 1 when the object has no such property, 2 when the value does not parse. */
int gk_object_set_from_string(gpointer object, const char *name, const char *value);
gboolean gk_object_has_property(gpointer object, const char *name);
/* Sets a global tag on a GstTagSetter (a muxer writes it into the file's own tags), replacing
 * one of the same name: `value` is the tag's text (a date and time in ISO 8601).
 * Returns 0 when set, 1 when the element takes no tags, 2 for an unknown tag, 3 when the value
 * does not parse as the tag's type. */
int gk_tag_setter_set(GstElement *element, const char *tag, const char *value);
/* Gives a muxer that is a GstTocSetter (matroskamux) one edition of `count` chapters: each its
 * start and end in nanoseconds (an end of UINT64_MAX: none) and its title. 0, or 1 when the
 * element takes no table of contents. */
int gk_toc_setter_set_chapters(GstElement *element, unsigned count, const uint64_t *starts, const uint64_t *ends,
                               const char *const *titles);
/* Reads a property as a string (to be freed with g_free), or NULL when there is none. */
char *gk_object_get_as_string(gpointer object, const char *name);

/* Posts an error message from an element, as GST_ELEMENT_ERROR does.
 * domain: 0 core, 1 library, 2 resource, 3 stream. */
void gk_element_post_error(GstElement *element, int domain, int code, const char *text, const char *debug);
/* Posts a warning message from an element, as GST_ELEMENT_WARNING does. */
void gk_element_post_warning(GstElement *element, const char *text, const char *debug);
/* 0 core, 1 library, 2 resource, 3 stream, -1 other. */
int gk_error_domain(const GError *error);

/* Buffers and bytes that passed a pad, and where in media time the last one ended. */
typedef struct {
    gint64 buffers;
    gint64 bytes;
    gint64 start_ns; /* the first timestamp seen, -1 until one passed */
    gint64 end_ns;   /* where the last timestamped buffer ended, -1 until one passed */
} GkPadCounter;
gulong gk_pad_count(GstPad *pad, GkPadCounter *counter);
/* Counts one buffer of `bytes` bytes presented at `pts_ns` for `duration_ns` (either -1 when not
 * known) that passed no pad: what a run without a pipeline (the container path) moves. */
void gk_pad_counter_add(GkPadCounter *counter, gint64 bytes, gint64 pts_ns, gint64 duration_ns);

/* Statistics of one bounded edge (a queue). */
typedef struct {
    gint64 waits;       /* times the queue was full: its producer waited, or (leaky) dropped */
    gint64 max_buffers; /* the deepest it was seen */
    gint64 max_bytes;
    gint64 max_time_ns;
} GkEdgeStats;
gulong gk_queue_watch(GstElement *queue, GkEdgeStats *stats);
void gk_queue_sample(GstElement *queue, GkEdgeStats *stats);
/* Snapshots, read atomically: the streaming threads write these while a run lasts. */
GkPadCounter gk_pad_counter_read(const GkPadCounter *counter);
GkEdgeStats gk_edge_stats_read(const GkEdgeStats *stats);

/* A Swift processing step run on a pad's streaming thread.
 * The transform takes ownership of `buffer` and returns the buffer to push on (owned), or NULL to
 * drop it; a NULL transform watches events only (no buffer probe at all). The event function is
 * called with each new caps (borrowed; kind 0), at end of stream (caps NULL; kind 1) and when a
 * flush ends (a seek: caps NULL; kind 2). */
typedef GstBuffer *(*GkTransformFn)(void *context, GstBuffer *buffer);
typedef void (*GkEventFn)(void *context, int kind, GstCaps *caps);
gulong gk_pad_add_transform(GstPad *pad, GkTransformFn transform, GkEventFn event, void *context,
                            GDestroyNotify destroy);
/* Encoded samples watched as they reach a sink pad (media.c), for a Swift writer of its own
 * files (sink.hls): `sample` gets each buffer (borrowed) with its presentation and decode times
 * on the running-time clock (GST_CLOCK_STIME_NONE when it has none; negative before the clock's
 * start), `event` each new caps (kind 0), the end of stream
 * (kind 1) and a flush (kind 2: what came before it is stale, a seek's). */
typedef void (*GkSampleFn)(void *context, GstBuffer *buffer, gint64 pts, gint64 dts);
gulong gk_pad_watch_samples(GstPad *pad, GkSampleFn sample, GkEventFn event, void *context, GDestroyNotify destroy);
/* The size of the caps' codec_data (0 when it has none), copying up to `capacity` bytes to `out`. */
gsize gk_caps_codec_data(const GstCaps *caps, guint8 *out, gsize capacity);
/* The same for the caps' streamheader buffer `index` (Opus's OpusHead, FLAC's blocks). */
gsize gk_caps_stream_header(const GstCaps *caps, guint index, guint8 *out, gsize capacity);
/* The caps' colorimetry as ISO/IEC 23091-2 code points (primaries, transfer, matrix) and its
 * range (1: full): FALSE when the caps state none, or an unknown one. */
gboolean gk_caps_colour(const GstCaps *caps, gint *primaries, gint *transfer, gint *matrix, gint *full_range);
/* The caps' mastering display (ST 2086: green, blue, red primaries, white point, luminance range,
 * as an `mdcv` box holds them: 24 bytes) and content light level (`clli`: 4 bytes); FALSE when
 * the caps carry none. */
gboolean gk_caps_mastering_display(const GstCaps *caps, guint8 *out24);
gboolean gk_caps_content_light(const GstCaps *caps, guint8 *out4);

/* The same, counting as it goes, so that no counting probe is needed beside it (each probe on a
 * pad is a hook-list walk per buffer): what arrives into `arriving`, what the transform passes
 * on into `passed`; either may be NULL. */
gulong gk_pad_add_counted_transform(GstPad *pad, GkTransformFn transform, GkEventFn event, void *context,
                                    GDestroyNotify destroy, GkPadCounter *arriving, GkPadCounter *passed);

/* Names the calling thread (at most 15 bytes are kept), for debuggers and `ps -L`. */
void gk_set_thread_name(const char *name);

/* Sends EOS into every source of a pipeline (what gst-launch-1.0 -e does on Ctrl-C). */
void gk_send_eos(GstElement *pipeline);
/* The method of an RTSP request rtspsrc is about to send ("PLAY", "SETUP"…), from its
 * "before-send" signal's GstRTSPMessage; NULL for a response or another message. */
const char *gk_rtsp_request_method(const void *message);
/* Sets `element`'s "tls-database" to the certificates of the PEM file at `path` (the authorities
 * it trusts, instead of the system's). Returns NULL, or GIO's words for why not, to free. */
char *gk_set_tls_database(GstElement *element, const char *path);
/* End of stream sent into `pad` (a sink pad: its element finishes), from its streaming thread too. */
void gk_pad_send_eos(GstPad *pad);
/* End of stream pushed downstream from a source pad, from any thread (a live source whose own
 * streaming thread is blocked waiting for its peer). */
void gk_pad_push_eos(GstPad *pad);

/* A buffer over memory the caller owns: `release` is called once, when the last reference to the
 * memory is gone. `readonly` marks the memory so (GStreamer copies before writing into it), for
 * memory Swift code may still read. */
typedef void (*GkReleaseFn)(void *context);
GstBuffer *gk_buffer_new_wrapped(void *data, gsize size, GkReleaseFn release, void *context, int readonly);


/* --- Stream timing (timing.c) ---------------------------------------------------------------
 * What a writer's pad sees go by (gkencoderdelay's measured priming, a video's display
 * orientation), and the fixes that work inside decodebin. The other workarounds are elements of
 * the graphkit plugin (Sources/GstGraphKit). */

/* What a pad sees go by: kind 0, the image-orientation tag ("rotate-90", "flip-rotate-0", ...)
 * in `text`; kind 1, an encoder delay (a = priming, b = samples, c = rate). */
typedef void (*GkStreamFactFn)(void *context, int kind, const char *text, gint64 a, gint64 b, gint64 c);
gulong gk_pad_watch_stream_facts(GstPad *pad, GkStreamFactFn fn, void *context, GDestroyNotify destroy);

/* Makes decodebin's MP3 parser trim the encoder delay and padding of ffmpeg's MP3s as it does
 * LAME's (timing.c says how). Returns the signal handler's id. */
gulong gk_decodebin_read_lavc_mp3_delay(GstElement *decodebin);
/* opusparse: the stream's own comment header (OpusTags) is kept in the caps it sends on, where
 * the parser's own would replace it with an empty one (opuscomments.c). */
void gk_opusparse_keep_comment_header(GstElement *opusparse);
/* decodebin: a transport stream pushed in time (a live source) is timed by its PTS, not through
 * its PCR and arrival (tsdemux ignore-pcr); a file, pulled, is left as it is (timing.c). */
gulong gk_decodebin_time_live_ts_by_pts(GstElement *decodebin);

/* Hides the one GLib critical GStreamer 1.22 prints for a gapless MP3 (timing.c). gk_init
 * calls it. */
void gk_quiet_known_criticals(void);

/* Calls `fn` with each MP4/MOV index (a whole moov box) decodebin's qtdemux pulls, before the
 * demuxer reads it: `fn` may change bytes, never the size. Returns the signal handler's id;
 * `destroy` frees `context` once the handler and every probe it added are gone. */
typedef void (*GkIndexFn)(void *context, guint8 *data, gsize size);
gulong gk_decodebin_watch_mp4_index(GstElement *decodebin, GkIndexFn fn, void *context, GDestroyNotify destroy);


/* Where `trim` (a gkaudiotrim) is on, the gapless marks a demuxer puts on the buffers into
 * decodebin's audio decoders (GStreamer 1.24+'s qtdemux: GstAudioClippingMeta) are taken off,
 * so that the priming is not cut twice (timing.c says why). Returns the signal handler's id. */
gulong gk_decodebin_leave_trimming_to(GstElement *decodebin, GstElement *trim);

/* The decision for one buffer: `buffer` without its clipping marks when `trim`'s timescale is
 * set, else as it came (takes and returns a reference). */
GstBuffer *gk_buffer_without_clipping(GstBuffer *buffer, GstElement *trim);
/* Every video decoder made in this process from now on checks the sizes it is given, in caps
 * and in each JPEG frame's header, with `check` before it sees them; a refused stream fails at
 * its first buffer with the message `check` wrote (sizeguard.c). libde265dec is no longer
 * autoplugged where avdec_h265 is installed. `check` returns nonzero to refuse, writing a
 * sentence into `message` (`length` bytes); `frame_bytes` is a JPEG frame's size, or -1. */
typedef int (*GkFrameSizeCheck)(int width, int height, long frame_bytes, const char *what, char *message, size_t length);
void gk_guard_video_decoders(GkFrameSizeCheck check);
/* Bounds what a peer can make `element` hold (heldguard.c): the bytes it takes in on its sink
 * pads since it last gave a buffer out. Past `limit` it posts `message` from the element as a
 * stream error, once, then calls `exceeded` (may be NULL) with `context`, and drops what comes
 * in. For a depayloader, whose frame's fragments a peer may start and never end. `destroy`
 * frees `context` with the element. */
typedef void (*GkHeldExceeded)(void *context);
void gk_bound_held_bytes(GstElement *element, guint64 limit, const char *message,
                         GkHeldExceeded exceeded, void *context, GDestroyNotify destroy);
/* The same bound on each jitter buffer `rtspsrc` makes (in its rtpbin): the bytes it queues
 * before it passes any on. `exceeded` and `context` are shared by them all. */
void gk_rtspsrc_bound_jitter_buffers(GstElement *rtspsrc, guint64 limit, const char *message,
                                     GkHeldExceeded exceeded, void *context, GDestroyNotify destroy);
/* The bytes the kernel has taken in on TCP socket `fd`, or -1 (heldguard.c). */
gint64 gk_socket_bytes_received(int fd);
/* Bounds, in the MPEG-TS leaving `element`'s `pad_name`, each PID's payload since its last unit
 * start (what a demuxer holds of a PES): past `limit` it posts `message` once and drops. */
void gk_bound_transport_stream_units(GstElement *element, const char *pad_name, guint64 limit, const char *message);
/* Makes decodebin decode only the kinds of stream asked for (audio, video: 1 or 0): a stream of
 * another kind leaves it encoded, undecoded, and a container is always opened. Returns the
 * signal handler's id. */
gulong gk_decodebin_decode_only(GstElement *decodebin, int audio, int video);
/* For frames that are only read (readonly.c): decodebin takes the graphkit plugin's gkavdec before
 * any other decoder of a stream it decodes (after the parser); returns the signal handler's id.
 * And an allocation query leaving `pad` downstream is answered there: its readers read video
 * metas (a frame's own row and plane layout), so gkavdec hands its frames on uncopied; no pool is
 * offered. Returns the probe's id. */
gulong gk_decodebin_prefer_sharing_decoder(GstElement *decodebin);
gulong gk_pad_answer_allocation_reading_video_meta(GstPad *pad);

/* Mends the decode times x265 gives a stream shorter than its B-frame delay (x265 never learns
 * the delay's length there, and subtracts whatever its memory held: a DTS seconds to years off,
 * different each run). On buffers leaving `pad` (x265enc's source): when the stream's first DTS
 * is after its PTS, or before it by more than 16 frames and a second (x265's own delay is two
 * frames at most), every DTS of the stream (until a flush) is moved by one amount, so that the
 * first is two frames before the first PTS; x265's steps between them are right. Streams with
 * sound times pass untouched. Returns the probe's id (timing.c). */
gulong gk_pad_mend_x265_decode_times(GstPad *pad);

/* Whether videoflip in video-direction=auto passes the image-orientation tag on as it came after
 * turning the picture (GStreamer 1.22's does, so a writer downstream would turn it once more):
 * asked of videoflip itself, a frame turned by rotate-90. 1 yes, 0 no, -1 no videoflip. */
int gk_videoflip_passes_orientation(void);

/* Moves `element` out of the bin that holds it into `holder`, a bin that takes its child by the
 * object property `property` (gkencoderdelay's "encoder"). 1 when `holder` is its parent now. */
int gk_element_move_into(GstElement *holder, const char *property, GstElement *element);


/* Plane offsets and strides of a raw video buffer (its GstVideoMeta when it has one, else the
 * default layout of the format). Returns the number of planes, or 0 for an unknown format. */
int gk_video_layout(GstBuffer *buffer, const char *format, int width, int height, gsize offsets[4], gint strides[4]);

/* Describes a one-plane frame whose rows are `stride` bytes apart (GstVideoMeta). */
/* Whether the buffer carries a GstVideoMeta (its own plane offsets and strides). */
int gk_buffer_has_video_meta(GstBuffer *buffer);
void gk_buffer_add_packed_video_meta(GstBuffer *buffer, const char *format, int width, int height, int stride);

/* A started buffer pool of frames of `size` bytes described by `caps`, growing as needed (no
 * maximum); NULL when the caps do not parse or the pool refuses the configuration. */
GstBufferPool *gk_frame_pool_new(const char *caps, guint size);
/* One frame from the pool (a new reference), or NULL. */
GstBuffer *gk_frame_pool_acquire(GstBufferPool *pool);
/* As gk_frame_pool_acquire; *is_new is set to 1 when the pool had to allocate the buffer (a
 * miss: never handed out before), 0 when it was recycled. */
GstBuffer *gk_frame_pool_acquire_counted(GstBufferPool *pool, int *is_new);
/* The byte size of one frame in GStreamer's default layout, or 0 for an unknown format. */
gsize gk_video_frame_size(const char *format, int width, int height);
/* Whether this is the first time `buffer` is seen here: marks it (GstMiniObject qdata, which a
 * buffer pool keeps when it hands the same buffer out again) and returns TRUE if it had no mark.
 * Counts the buffers a pool really allocated: a buffer made anew has no mark, even at an
 * address a freed one had. */
gboolean gk_buffer_first_seen(GstBuffer *buffer);

/* Makes sure no error posted inside `bin` is lost: decodebin (GStreamer 1.22) drops errors from
 * an element while it is plugging it (setting it to PAUSED), meaning to try another if that
 * fails. A demuxer that reads in pull mode starts its task during that state change and may
 * fail in it (a truncated MP4: "no playable streams"); its state change still succeeds, the
 * error is gone, and the pipeline waits for ever. This watches the bin's child bus: an error
 * from an element not yet PAUSED is kept, and posted again from the top-level pipeline once
 * that element reaches PAUSED (so it was plugged, and its error was dropped). An element whose
 * state change fails is taken out by decodebin, and its error, rightly dropped, stays unposted.
 * An error from an element already PAUSED is posted again from the top at once (decodebin may
 * still have been dropping its errors for an instant); the first error ends a run, so a second
 * report of one is harmless. Call before the pipeline leaves NULL. Returns 0 if the bin's
 * child bus could not be watched. */
int gk_bin_keep_errors(GstBin *bin);

/* One stream of a media file, as GStreamer's discoverer reads it (media.c). */
typedef struct {
    int kind; /* 1 audio, 2 video, 3 subtitles, 0 other */
    int rate, channels;
    int width, height, fps_n, fps_d;
    char codec[128];
    char caps[512];
    /* Video: the stream's colour as its caps state it (the container's colr box, else the
     * parser's reading of the bitstream), each empty or 0 when not stated: GStreamer's
     * colorimetry (bt709, bt2100-pq, or range:matrix:transfer:primaries), chroma format (4:2:0),
     * luma bit depth, mastering display (10 numbers, as the caps write them) and content light
     * level (maxCLL:maxFALL). Apart from `caps`, which the codec configuration can fill. */
    char colorimetry[48];
    char chroma[16];
    int bit_depth;
    char mastering[128];
    char light[32];
} GkStreamInfo;

/* Reads a file's streams and duration without playing it (GstDiscoverer), in at most
 * timeout_ns. Returns the number of streams written (at most max), or -1 with a message in
 * error: -2 when a plugin is missing (the message names it). */
int gk_discover(const char *uri, guint64 timeout_ns, guint64 *duration_ns, GkStreamInfo *streams, int max,
                char *error, size_t error_len);

/* The name of the factory that made `object`, when it is an element (media.c); NULL otherwise.
 * Owned by the factory: not to be freed. */
const char *gk_object_factory_name(GstObject *object);

/* Where a stream's format was refused (media.c), after a "not-negotiated" failure: a source pad
 * in `bin` (searched recursively) that holds raw audio or video caps (a sticky event) that its
 * peer did not take (it has none). Several pads can look so at once (one of another stream
 * may be caught between storing its caps and sending them, and sends them a moment later):
 * the `n_tried` pads in `tried` are passed over. They are named by identity, not counted: the
 * set of pads that look refused changes between two searches, so "the second one" of the next
 * search need not be the second of this one, and a count could pass over the very pad refused.
 * Returns those caps, in *owner the pad's element and in *where the pad (all new references),
 * or NULL. */
GstCaps *gk_bin_find_refused_caps(GstBin *bin, GstPad *const *tried, guint n_tried, GstElement **owner, GstPad **where);
/* Whether `accepted` refuses the value `offered` (its first structure) has for `field`: no
 * structure of `accepted` takes it (one without the field takes any). 0 when `offered` has no
 * such field. */
int gk_caps_field_refused(const GstCaps *offered, const GstCaps *accepted, const char *field);
/* The integer `field` of the first structure of `caps`; 0 when it has none. */
int gk_caps_int_field(const GstCaps *caps, const char *field, int *value);
/* The lowest and highest integer any structure of `caps` takes for `field` (a structure without
 * it takes 1 to G_MAXINT); 0 when no structure says. */
int gk_caps_field_span(const GstCaps *caps, const char *field, int *low, int *high);

/* Gives raw audio arriving at `pad` with more than 2 channels and no channel-mask (a plain PCM
 * WAV of 9 or 63 channels: GStreamer's converter refuses such caps) GStreamer's usual mask for
 * the count, or none (0: unpositioned) past 8 (media.c). Returns the probe's id. */
gulong gk_pad_complete_channel_mask(GstPad *pad);

/* Sends flush-start into every appsink of the bin: its queue (below) holding end of stream until
 * its samples are pulled, or a producer waiting for room in it, would otherwise keep its streaming
 * thread, and the stream lock that stopping the pipeline needs, for up to 100 ms; a waiting pull
 * wakes at once. For a pipeline about to stop. */
void gk_bin_unblock_app_sinks(GstBin *bin);

/* --- The hand-off to code that pulls samples (appqueue.c) ------------------------------------
 * Takes the buffers off an appsink's sink pad and hands them to a puller, waking a puller that
 * found it empty once per batch (half of `capacity`, at most 32) rather than once per sample, or
 * after 1 ms with anything to take. At most `capacity` samples are held (0: no bound); end of
 * stream passes on to the appsink once everything was pulled. A flush-start into the appsink, or
 * its pad deactivating (a pipeline set to NULL with no flush), wakes every wait at once. */
typedef struct GkAppQueue GkAppQueue;
/* One reference for the caller (gk_app_queue_unref); NULL when the element has no sink pad. */
GkAppQueue *gk_app_queue_attach(GstElement *appsink, guint capacity);
void gk_app_queue_unref(GkAppQueue *queue);
/* The next buffer (transfer full) and its caps (transfer full, may be NULL), waiting at most
 * timeout_us (negative: until there is one); NULL at the end, on timeout, or once stopped. */
GstBuffer *gk_app_queue_pop(GkAppQueue *queue, gint64 timeout_us, GstCaps **caps);
/* End of stream was reached and everything pulled. */
gboolean gk_app_queue_is_at_end(GkAppQueue *queue);
/* How many times a puller has gone to sleep on it. */
guint64 gk_app_queue_sleeps(GkAppQueue *queue);
/* How many times a sleeping puller was not woken by the samples it waited for (it found them
 * at its next look instead): 0 unless the hand-off is broken. Counted, so that tests need no clock. */
guint64 gk_app_queue_missed_wakes(GkAppQueue *queue);
/* Whether the graph's thread is waiting for room in the queue (or for it to empty at the end). */
gboolean gk_app_queue_producer_waits(GkAppQueue *queue);
/* How long a wait sleeps before it looks again at the pad, a backstop (100 ms unless set): a
 * test sets it past its time limit, so that only a wake can end a wait. */
void gk_app_queue_set_recheck(GkAppQueue *queue, gint64 recheck_us);

/* --- Displays (display.c) -------------------------------------------------------------------
 * A video sink that shows frames in a window (sink.preview) must never fail or stop what feeds
 * it: a window closed, or a display that fails, costs the preview only. */

/* What a display's guard keeps. Memory owned by the caller (the run's statistics), which outlives
 * the probe; `title` too. */
typedef struct {
    gint64 failed;     /* buffers the sink returned an error for, counted, not passed upstream */
    const char *title; /* sent to the sink as the stream's title before its first buffer; NULL: none */
    gint title_sent;   /* touched on the pad's streaming thread only */
} GkDisplay;

/* Installed on `pad`, the source pad that feeds a display sink. Each buffer is pushed into the
 * sink by the guard itself, so that a GST_FLOW_ERROR the sink returns (its window was closed;
 * the error it posted is on the bus for the run to judge) is counted in display->failed and
 * returned upstream as OK: the producers never see it. Every other result (flushing, end of stream,
 * not negotiated) is returned as it came. Tag events are dropped (a file's title must not
 * rename the window), and before the first buffer the sink is sent a tag event with the title. */
gulong gk_pad_guard_display(GstPad *pad, GkDisplay *display);
/* display->failed, read atomically. */
gint64 gk_display_failed(const GkDisplay *display);

/* Makes `sink`, an element of `pipeline`, one whose window being closed is no error: its
 * "not found" resource error (ximagesink's and waylandsink's "Output window was closed") is
 * turned, before the pipeline sees it, into an element message named GK_WINDOW_CLOSED from the
 * sink. Handled as an error, it would fail the pipeline's state change when it comes before the
 * pipeline plays (GstBin aborts it), and no end of stream could then finish the files. Every
 * other message passes as GstBin's own handler passes it. Call before the pipeline leaves NULL.
 * Returns 0 if the pipeline's child bus could not be watched. */
#define GK_WINDOW_CLOSED "graphkit-window-closed"
int gk_pipeline_watch_display(GstBin *pipeline, GstElement *sink);

/* The buffers a base sink rendered, by its own count (its "stats" property: every render, shown
 * or failed). GStreamer reports 0 once the sink is in NULL: read it before the pipeline stops.
 * -1 when `sink` has no such property. */
gint64 gk_base_sink_rendered(GstElement *sink);

/* PipeWire's nodes, from its registry, one call of `found` each (its id, and its object.serial,
 * node.name, node.description, media.class and object.path, "" for those it has not), on the
 * calling thread, within `timeout_seconds` (pipewire.c). Returns the number of nodes; -1 when
 * libpipewire is not installed, -2 when it could not start, -3 when no PipeWire daemon answers. */
typedef void (*gk_pipewire_node_fn)(void *context, unsigned id, const char *serial, const char *name,
                                    const char *description, const char *media_class, const char *object_path);
int gk_pipewire_list_nodes(double timeout_seconds, gk_pipewire_node_fn found, void *context);

#endif
