#!/usr/bin/python3
"""What the preview tests do to a window on an X server, with python3-xlib (Debian's package,
hence Debian's /usr/bin/python3):

  xwindow.py DISPLAY find TITLE      prints "ID WIDTH HEIGHT" of each top-level window whose
                                     title starts with TITLE, one a line (nothing when none)
  xwindow.py DISPLAY grab ID FILE    writes the window's pixels to FILE as packed RGB, 8 bits a
                                     channel, row after row; prints "WIDTH HEIGHT"
  xwindow.py DISPLAY close ID        asks the window to close as a window manager's close button
                                     does: a WM_DELETE_WINDOW client message (ICCCM 4.2.8.1)

Exit status 0, or 1 with the reason on standard error.
"""
import sys

from Xlib import X, display, error, protocol


def title(d, window):
    name = window.get_full_property(d.intern_atom("_NET_WM_NAME"), 0)
    if name is not None and name.value:
        value = name.value
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    legacy = window.get_wm_name()
    return legacy.decode("latin-1") if isinstance(legacy, bytes) else (legacy or "")


def find(d, prefix):
    for window in d.screen().root.query_tree().children:
        try:
            if title(d, window).startswith(prefix):
                geometry = window.get_geometry()
                print(window.id, geometry.width, geometry.height)
        except error.BadWindow:
            pass  # gone meanwhile


def grab(d, window_id, path):
    window = d.create_resource_object("window", window_id)
    geometry = window.get_geometry()
    width, height = geometry.width, geometry.height
    visual = next(v for depth in d.screen().allowed_depths for v in depth.visuals
                  if v.visual_id == window.get_attributes().visual)
    image = window.get_image(0, 0, width, height, X.ZPixmap, 0xFFFFFFFF)
    data = image.data if isinstance(image.data, bytes) else image.data.encode("latin-1")
    stride = len(data) // height
    pixel_bytes = stride // width if stride // width in (3, 4) else 4

    def channel(mask):
        shift = (mask & -mask).bit_length() - 1
        return shift, mask >> shift

    shifts = [channel(visual.red_mask), channel(visual.green_mask), channel(visual.blue_mask)]
    out = bytearray()
    for y in range(height):
        row = data[y * stride:(y + 1) * stride]
        for x in range(width):
            value = int.from_bytes(row[x * pixel_bytes:(x + 1) * pixel_bytes], "little")
            out.extend(((value >> s) & m) * 255 // m for s, m in shifts)
    with open(path, "wb") as f:
        f.write(out)
    print(width, height)


def close(d, window_id):
    window = d.create_resource_object("window", window_id)
    protocols = d.intern_atom("WM_PROTOCOLS")
    delete = d.intern_atom("WM_DELETE_WINDOW")
    event = protocol.event.ClientMessage(window=window, client_type=protocols,
                                         data=(32, [delete, X.CurrentTime, 0, 0, 0]))
    window.send_event(event, event_mask=X.NoEventMask)
    d.sync()


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    d = display.Display(argv[1])
    try:
        command = argv[2]
        if command == "find":
            find(d, argv[3])
        elif command == "grab" and len(argv) == 5:
            grab(d, int(argv[3], 0), argv[4])
        elif command == "close":
            close(d, int(argv[3], 0))
        else:
            sys.exit(__doc__)
    finally:
        d.close()


if __name__ == "__main__":
    try:
        main(sys.argv)
    except (error.DisplayError, error.ConnectionClosedError, error.XError) as e:
        sys.exit(f"xwindow.py: {e}")
