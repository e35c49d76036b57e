/*
 * gkwhipsink's HTTP: one HTTP/1.1 request at a time over GIO (TLS for https through
 * glib-networking), each bounded by a deadline and a GCancellable, the reply's body by a size.
 * WHIP (RFC 9725) needs only POST with an SDP offer and DELETE of the session's resource.
 */
#ifndef GK_WHIP_HTTP_H
#define GK_WHIP_HTTP_H
#include <gio/gio.h>

#define GK_HTTP_MAX_BODY (256 * 1024) /* an SDP answer is a few kilobytes */

typedef struct {
    guint status;
    gchar *location;     /* the Location header, as sent; NULL without one */
    gchar *content_type; /* NULL without one */
    GBytes *body;        /* never NULL after a reply */
} GkHttpReply;

/* `method` to `url` (http or https: the server's certificate checked against `authorities`, or the
 * system's when NULL), with `body` (may be NULL) of `content_type`, and "Authorization: Bearer
 * `token`" when `token` is not NULL. FALSE with `error` set (its message names no credential)
 * when the server cannot be reached or answers no HTTP within `timeout_seconds`, or on
 * `cancellable`. */
gboolean gk_http_request(const gchar *method, const gchar *url, const gchar *content_type, const gchar *body,
                         const gchar *token, GTlsDatabase *authorities, guint timeout_seconds, GCancellable *cancellable,
                         GkHttpReply *reply, GError **error);

void gk_http_reply_clear(GkHttpReply *reply);

/* `url` as it may be shown: scheme, host and port, then "/…" for a path (which may hold a stream's
 * key: Cloudflare's WHIP URLs do); no user, password, query or fragment. NULL when it does not
 * parse. */
gchar *gk_http_shown_url(const gchar *url);

/* Whether `b` has `a`'s scheme, host and port. */
gboolean gk_http_same_origin(const gchar *a, const gchar *b);

/* Whether going from `from` to `to` leaves https for http. */
gboolean gk_http_downgrades(const gchar *from, const gchar *to);

/* `location` (absolute or relative) resolved against `url`; NULL when it does not parse or is
 * not http(s). */
gchar *gk_http_resolve(const gchar *url, const gchar *location);
#endif
