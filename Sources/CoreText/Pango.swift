import Foundation
import CCairo
import CPangoCairo

// The one Pango font map and context CoreText lays text out with, and the lock every Pango call
// takes: Pango's font maps and layouts are not thread-safe, and CTFont and CTLine are values any
// thread may use, as Apple's are. Releasing a Pango font or layout changes the font map's caches,
// so it takes the lock too.

/// Pango's context for CoreText, behind a lock: `Pango.run { ctx in … }`.
enum Pango {
    nonisolated(unsafe) private static let context: OpaquePointer = {
        let map = pango_cairo_font_map_new()
        let ctx = pango_font_map_create_context(map)!
        g_object_unref(map)   // the context holds it
        // Unhinted outlines at fractional positions: a line's width scales with its size and
        // does not depend on where it is drawn (Apple's text is unhinted too).
        let options = cairo_font_options_create()
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        pango_cairo_context_set_font_options(ctx, options)
        cairo_font_options_destroy(options)
        pango_cairo_context_set_resolution(ctx, 72)   // a point is a unit of user space
        pango_context_set_round_glyph_positions(ctx, 0)
        return ctx
    }()
    /// Recursive: releasing a font or line (which takes it) may happen inside a locked call.
    private static let lock = NSRecursiveLock()

    static func run<T>(_ body: (OpaquePointer) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(context)
    }

    /// Pango units (1/1024) as points.
    static func points(_ units: Int32) -> CGFloat { CGFloat(units) / CGFloat(PANGO_SCALE) }
}
