// ThrowingPlugin's note (GRAPHKIT_PLUGIN_NOTE): the name and version its descriptor gives.
#include <graphkit_plugin.h>

GRAPHKIT_PLUGIN_NOTE("licensed", "2.1.0");
