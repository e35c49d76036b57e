// EchoTwinPlugin's note (GRAPHKIT_PLUGIN_NOTE): the name and version its descriptor gives.
#include <graphkit_plugin.h>

GRAPHKIT_PLUGIN_NOTE("echo-twin", "0.0.1");
