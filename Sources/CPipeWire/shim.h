// PipeWire's headers, for CGraphKitGlue's pipewire.c only (no Swift imports this module).
// Nothing is linked: libpipewire is opened at run time, so GraphKit loads where it is missing.
#include <pipewire/pipewire.h>
