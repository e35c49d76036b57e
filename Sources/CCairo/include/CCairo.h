#ifndef GRAPHKIT_CCAIRO_H
#define GRAPHKIT_CCAIRO_H
/*
 * Cairo, loaded when a picture is first drawn rather than when the program starts: libcairo
 * brings about 18 libraries (X11, xcb, fontconfig, freetype, pixman, png...) whose loading
 * costs every graphctl command about 2 ms, and most runs draw nothing.
 *
 * The types and constants are Cairo's own; the functions are reached through the table that
 * gk_cairo() returns.
 */
#include <cairo/cairo.h>
#include <cairo/cairo-svg.h>

typedef struct {
    cairo_surface_t *_Nullable (*_Nonnull image_surface_create)(cairo_format_t format, int width, int height);
    cairo_surface_t *_Nullable (*_Nonnull svg_surface_create)(const char *_Nonnull filename, double width, double height);
    cairo_status_t (*_Nonnull surface_write_to_png)(cairo_surface_t *_Nonnull surface, const char *_Nonnull filename);
    void (*_Nonnull surface_finish)(cairo_surface_t *_Nonnull surface);
    cairo_status_t (*_Nonnull surface_status)(cairo_surface_t *_Nonnull surface);
    void (*_Nonnull surface_destroy)(cairo_surface_t *_Nonnull surface);
    const char *_Nonnull (*_Nonnull status_to_string)(cairo_status_t status);
    cairo_t *_Nullable (*_Nonnull create)(cairo_surface_t *_Nonnull target);
    void (*_Nonnull destroy)(cairo_t *_Nonnull cr);
    void (*_Nonnull set_source_rgba)(cairo_t *_Nonnull cr, double red, double green, double blue, double alpha);
    void (*_Nonnull set_operator)(cairo_t *_Nonnull cr, cairo_operator_t op);
    void (*_Nonnull paint)(cairo_t *_Nonnull cr);
    void (*_Nonnull rectangle)(cairo_t *_Nonnull cr, double x, double y, double width, double height);
    void (*_Nonnull move_to)(cairo_t *_Nonnull cr, double x, double y);
    void (*_Nonnull line_to)(cairo_t *_Nonnull cr, double x, double y);
    void (*_Nonnull close_path)(cairo_t *_Nonnull cr);
    void (*_Nonnull fill)(cairo_t *_Nonnull cr);
} GkCairo;

/* Loads libcairo.so.2 once per process (thread-safe). Returns its functions, or NULL with
 * *error set to a message that names what is missing (valid for the life of the process). */
const GkCairo *_Nullable gk_cairo(const char *_Nullable *_Nonnull error);

#endif
