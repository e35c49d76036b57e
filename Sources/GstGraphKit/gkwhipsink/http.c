/*
 * gkwhipsink's HTTP (http.h): a request written whole, the reply read until the server closes
 * or its Content-Length is in, never more than GK_HTTP_MAX_BODY and 16 KiB of headers, and
 * never past the request's deadline: each read waits at most what is left of it.
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADERS (16 * 1024)

static const gchar *shown_host(GUri *uri, gchar **owned) {
    const gchar *host = g_uri_get_host(uri);
    *owned = host && strchr(host, ':') ? g_strdup_printf("[%s]", host) : NULL; /* an IPv6 literal */
    return *owned ? *owned : host;
}

gchar *gk_http_shown_url(const gchar *url) {
    GUri *uri = url ? g_uri_parse(url, G_URI_FLAGS_ENCODED, NULL) : NULL;
    if (!uri || !g_uri_get_host(uri)) {
        if (uri) g_uri_unref(uri);
        return NULL;
    }
    const gchar *path = g_uri_get_path(uri);
    GUri *shown = g_uri_build(G_URI_FLAGS_ENCODED, g_uri_get_scheme(uri), NULL, g_uri_get_host(uri), g_uri_get_port(uri),
                              path && *path && strcmp(path, "/") ? "/…" : "", NULL, NULL);
    gchar *text = g_uri_to_string(shown);
    g_uri_unref(shown);
    g_uri_unref(uri);
    return text;
}

static gint port_of(GUri *uri) {
    const gint port = g_uri_get_port(uri);
    return port > 0 ? port : !g_ascii_strcasecmp(g_uri_get_scheme(uri), "https") ? 443 : 80;
}

gboolean gk_http_same_origin(const gchar *a, const gchar *b) {
    GUri *x = g_uri_parse(a, G_URI_FLAGS_ENCODED, NULL), *y = g_uri_parse(b, G_URI_FLAGS_ENCODED, NULL);
    const gboolean same = x && y && g_uri_get_host(x) && g_uri_get_host(y) && !g_ascii_strcasecmp(g_uri_get_scheme(x), g_uri_get_scheme(y)) &&
                          !g_ascii_strcasecmp(g_uri_get_host(x), g_uri_get_host(y)) && port_of(x) == port_of(y);
    if (x) g_uri_unref(x);
    if (y) g_uri_unref(y);
    return same;
}

gboolean gk_http_downgrades(const gchar *from, const gchar *to) {
    return !g_ascii_strncasecmp(from, "https://", 8) && g_ascii_strncasecmp(to, "https://", 8);
}

gchar *gk_http_resolve(const gchar *url, const gchar *location) {
    gchar *resolved = g_uri_resolve_relative(url, location, G_URI_FLAGS_ENCODED, NULL);
    if (resolved && !g_str_has_prefix(resolved, "http://") && !g_str_has_prefix(resolved, "https://")) g_clear_pointer(&resolved, g_free);
    return resolved;
}

void gk_http_reply_clear(GkHttpReply *reply) {
    g_clear_pointer(&reply->location, g_free);
    g_clear_pointer(&reply->content_type, g_free);
    g_clear_pointer(&reply->body, g_bytes_unref);
    reply->status = 0;
}

/* The seconds left before `deadline` (at least 1, as GSocket takes them), or FALSE with a
 * timed-out error once it has passed. */
static gboolean time_left(gint64 deadline, guint *seconds, GError **error) {
    const gint64 left = deadline - g_get_monotonic_time();
    if (left <= 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "no reply in time");
        return FALSE;
    }
    *seconds = (guint)((left + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC);
    return TRUE;
}

/* The header `name`'s value in `headers` (the lines after the status line), or NULL. */
static gchar *header(gchar **lines, const gchar *name) {
    const gsize n = strlen(name);
    for (gchar **l = lines; *l; l++)
        if (!g_ascii_strncasecmp(*l, name, n) && (*l)[n] == ':') return g_strstrip(g_strdup(*l + n + 1));
    return NULL;
}

/* A chunked body (RFC 9112 7.1) decoded; NULL when it is not well formed. */
static GBytes *unchunk(const guint8 *data, gsize size) {
    GByteArray *out = g_byte_array_new();
    gsize at = 0;
    for (;;) {
        const guint8 *eol = memchr(data + at, '\n', size - at);
        if (!eol) break;
        /* The size's hex digits, read within the line (the data has no terminating NUL). */
        guint64 chunk = 0;
        gsize digits = 0;
        for (const guint8 *c = data + at; c < eol && g_ascii_isxdigit(*c) && digits < 15; c++, digits++)
            chunk = chunk * 16 + (guint64)g_ascii_xdigit_value((gchar)*c);
        if (digits == 0) break;
        at = (gsize)(eol - data) + 1;
        if (chunk == 0) return g_byte_array_free_to_bytes(out);
        if (chunk > size - at) break;
        g_byte_array_append(out, data + at, (guint)chunk);
        at += chunk;
        if (at < size && data[at] == '\r') at++;
        if (at < size && data[at] == '\n') at++;
    }
    g_byte_array_unref(out);
    return NULL;
}

/* Reads the reply on `in` into `reply`. */
static gboolean read_reply(GSocket *socket, GInputStream *in, gint64 deadline, GCancellable *cancellable, GkHttpReply *reply,
                           GError **error) {
    GByteArray *raw = g_byte_array_new();
    gboolean ok = FALSE;
    gssize head_end = -1; /* where the body starts, once the headers are in */
    gint64 length = -1;   /* Content-Length, once known */
    gchar **lines = NULL;
    for (;;) {
        guint seconds;
        if (!time_left(deadline, &seconds, error)) goto out;
        g_socket_set_timeout(socket, seconds);
        guint8 chunk[4096];
        const gssize got = g_input_stream_read(in, chunk, sizeof chunk, cancellable, error);
        if (got < 0) goto out;
        if (got == 0) break;
        g_byte_array_append(raw, chunk, (guint)got);
        if (raw->len >= 5 && memcmp(raw->data, "HTTP/", 5) != 0) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the reply is not HTTP");
            goto out;
        }
        if (head_end < 0) {
            for (guint i = 0; i + 1 < raw->len; i++) {
                if (raw->data[i] == '\n' && raw->data[i + 1] == '\n') { head_end = i + 2; break; }
                if (i + 3 < raw->len && !memcmp(raw->data + i, "\r\n\r\n", 4)) { head_end = i + 4; break; }
            }
            if (head_end < 0 && raw->len > MAX_HEADERS) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the reply's headers pass %d KiB", MAX_HEADERS / 1024);
                goto out;
            }
            if (head_end >= 0) {
                gchar *text = g_strndup((const gchar *)raw->data, (gsize)head_end);
                g_strdelimit(text, "\r", ' ');
                lines = g_strsplit(text, "\n", -1);
                g_free(text);
                gchar *value = header(lines + 1, "Content-Length");
                if (value) length = g_ascii_strtoll(value, NULL, 10);
                g_free(value);
            }
        }
        if (head_end >= 0 && raw->len - (gsize)head_end > GK_HTTP_MAX_BODY) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the reply's body passes %d KiB", GK_HTTP_MAX_BODY / 1024);
            goto out;
        }
        if (head_end >= 0 && length >= 0 && raw->len - (gsize)head_end >= (guint64)length) break;
    }
    guint status = 0;
    if (lines == NULL || sscanf(lines[0], "HTTP/%*d.%*d %u", &status) != 1 || status < 100 || status > 999) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the reply is not HTTP");
        goto out;
    }
    reply->status = status;
    reply->location = header(lines + 1, "Location");
    reply->content_type = header(lines + 1, "Content-Type");
    const guint8 *body = raw->data + head_end;
    gsize size = raw->len - (gsize)head_end;
    if (length >= 0 && (guint64)length < size) size = (gsize)length;
    gchar *encoding = header(lines + 1, "Transfer-Encoding");
    const gboolean chunked = encoding && g_ascii_strcasecmp(encoding, "chunked") == 0;
    g_free(encoding);
    reply->body = chunked ? unchunk(body, size) : g_bytes_new(body, size);
    if (!reply->body) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "the reply's chunked body is cut short or malformed");
        goto out;
    }
    ok = TRUE;
out:
    g_strfreev(lines);
    g_byte_array_unref(raw);
    return ok;
}

/* Cancels `cancellable` at `deadline` unless let go first: the name lookup and each address's
 * connect have no deadline of their own in GIO. */
typedef struct {
    GMutex lock;
    GCond done_changed;
    gboolean done, fired;
    gint64 deadline;
    GCancellable *cancellable;
    GThread *thread;
} Alarm;

static gpointer ring(gpointer data) {
    Alarm *a = data;
    g_mutex_lock(&a->lock);
    while (!a->done && g_cond_wait_until(&a->done_changed, &a->lock, a->deadline)) {}
    if (!a->done) {
        a->fired = TRUE;
        g_cancellable_cancel(a->cancellable);
    }
    g_mutex_unlock(&a->lock);
    return NULL;
}

static void alarm_start(Alarm *a, gint64 deadline, GCancellable *cancellable) {
    g_mutex_init(&a->lock);
    g_cond_init(&a->done_changed);
    a->done = a->fired = FALSE;
    a->deadline = deadline;
    a->cancellable = cancellable;
    a->thread = g_thread_new("gkwhip-deadline", ring, a);
}

/* Lets the alarm go; whether it had rung. */
static gboolean alarm_stop(Alarm *a) {
    g_mutex_lock(&a->lock);
    a->done = TRUE;
    g_cond_signal(&a->done_changed);
    g_mutex_unlock(&a->lock);
    g_thread_join(a->thread);
    g_mutex_clear(&a->lock);
    g_cond_clear(&a->done_changed);
    return a->fired;
}

static void cancel_too(GCancellable *from, gpointer to) { g_cancellable_cancel(to); }

/* The TLS handshake is about to start: the authorities to check the server against. */
static void on_client_event(GSocketClient *client, GSocketClientEvent event, GSocketConnectable *address, GIOStream *connection,
                            gpointer authorities) {
    if (event == G_SOCKET_CLIENT_TLS_HANDSHAKING && G_IS_TLS_CONNECTION(connection))
        g_tls_connection_set_database(G_TLS_CONNECTION(connection), authorities);
}

gboolean gk_http_request(const gchar *method, const gchar *url, const gchar *content_type, const gchar *body,
                         const gchar *token, GTlsDatabase *authorities, guint timeout_seconds, GCancellable *cancellable,
                         GkHttpReply *reply, GError **error) {
    memset(reply, 0, sizeof *reply);
    GUri *uri = g_uri_parse(url, G_URI_FLAGS_ENCODED, error);
    if (!uri) return FALSE;
    const gchar *scheme = g_uri_get_scheme(uri);
    const gboolean tls = g_ascii_strcasecmp(scheme, "https") == 0;
    if ((!tls && g_ascii_strcasecmp(scheme, "http") != 0) || !g_uri_get_host(uri) || !*g_uri_get_host(uri)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "not an http:// or https:// URL with a host");
        g_uri_unref(uri);
        return FALSE;
    }
    const gint port = g_uri_get_port(uri) > 0 ? g_uri_get_port(uri) : tls ? 443 : 80;
    const gint64 deadline = g_get_monotonic_time() + (gint64)timeout_seconds * G_USEC_PER_SEC;
    /* Ours: cancelled by the caller's, or at the deadline. */
    GCancellable *caller = cancellable;
    cancellable = g_cancellable_new();
    const gulong linked = caller ? g_cancellable_connect(caller, G_CALLBACK(cancel_too), cancellable, NULL) : 0;
    Alarm alarm;
    alarm_start(&alarm, deadline, cancellable);

    GSocketClient *client = g_socket_client_new();
    g_socket_client_set_timeout(client, timeout_seconds);
    g_socket_client_set_tls(client, tls);
    if (tls && authorities) g_signal_connect(client, "event", G_CALLBACK(on_client_event), authorities);
    GSocketConnectable *address = g_network_address_new(g_uri_get_host(uri), (guint16)port);
    GSocketConnection *connection = g_socket_client_connect(client, address, cancellable, error);
    g_object_unref(address);
    g_object_unref(client);
    gboolean ok = FALSE;
    if (connection) {
        gchar *host_owned = NULL;
        const gchar *host = shown_host(uri, &host_owned);
        const gboolean default_port = port == (tls ? 443 : 80);
        const gchar *path = *g_uri_get_path(uri) ? g_uri_get_path(uri) : "/";
        const gsize body_size = body ? strlen(body) : 0;
        GString *request = g_string_new(NULL);
        g_string_append_printf(request, "%s %s%s%s HTTP/1.1\r\nHost: %s", method, path, g_uri_get_query(uri) ? "?" : "",
                               g_uri_get_query(uri) ? g_uri_get_query(uri) : "", host);
        if (!default_port) g_string_append_printf(request, ":%d", port);
        g_string_append(request, "\r\nUser-Agent: GraphKit\r\nConnection: close\r\n");
        if (content_type) g_string_append_printf(request, "Content-Type: %s\r\n", content_type);
        g_string_append_printf(request, "Content-Length: %zu\r\n", body_size);
        if (token) g_string_append_printf(request, "Authorization: Bearer %s\r\n", token);
        g_string_append(request, "\r\n");
        if (body) g_string_append_len(request, body, (gssize)body_size);
        g_free(host_owned);

        GSocket *socket = g_socket_connection_get_socket(connection);
        guint seconds;
        ok = time_left(deadline, &seconds, error);
        if (ok) {
            g_socket_set_timeout(socket, seconds);
            ok = g_output_stream_write_all(g_io_stream_get_output_stream(G_IO_STREAM(connection)), request->str, request->len, NULL,
                                           cancellable, error);
        }
        /* The token is not left in freed memory. */
        memset(request->str, 0, request->len);
        g_string_free(request, TRUE);
        if (ok) ok = read_reply(socket, g_io_stream_get_input_stream(G_IO_STREAM(connection)), deadline, cancellable, reply, error);
        g_io_stream_close(G_IO_STREAM(connection), NULL, NULL);
        g_object_unref(connection);
    }
    const gboolean rang = alarm_stop(&alarm);
    if (caller) g_cancellable_disconnect(caller, linked);
    if (!ok && rang && !(caller && g_cancellable_is_cancelled(caller)) && error && *error &&
        g_error_matches(*error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_clear_error(error);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "no reply in time");
    }
    g_object_unref(cancellable);
    if (!ok) gk_http_reply_clear(reply);
    g_uri_unref(uri);
    return ok;
}
