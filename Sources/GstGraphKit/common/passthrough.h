/*
 * What GraphKit's pass-through elements share (gkaudiotrim, gkpresenttimes, gkrisingtimes,
 * gkorientation, gkvideotrim): a static `sink` and `src` pad from their templates,
 * proxying caps and allocation questions across, since what leaves is in the format it came in.
 * Not part of the plugin's interface (include/ is).
 */
#ifndef GK_PASSTHROUGH_H
#define GK_PASSTHROUGH_H
#include <gst/gst.h>
#include "tsan.h"

/* Adds the element's `sink` pad (with `chain`, and `event` unless NULL) and `src` pad. */
static inline void gk_add_passthrough_pads(GstElement *element, GstStaticPadTemplate *sink_template,
                                           GstStaticPadTemplate *src_template, GstPadChainFunction chain,
                                           GstPadEventFunction event, GstPad **sinkpad, GstPad **srcpad) {
    *sinkpad = gst_pad_new_from_static_template(sink_template, "sink");
    gst_pad_set_chain_function(*sinkpad, chain);
    if (event) gst_pad_set_event_function(*sinkpad, event);
    GST_PAD_SET_PROXY_CAPS(*sinkpad);
    GST_PAD_SET_PROXY_ALLOCATION(*sinkpad);
    gst_element_add_pad(element, *sinkpad);
    *srcpad = gst_pad_new_from_static_template(src_template, "src");
    GST_PAD_SET_PROXY_CAPS(*srcpad);
    GST_PAD_SET_PROXY_ALLOCATION(*srcpad);
    gst_element_add_pad(element, *srcpad);
}

#endif
