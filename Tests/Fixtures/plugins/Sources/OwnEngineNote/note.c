// OwnEnginePlugin's note (GRAPHKIT_PLUGIN_NOTE): the name and version its descriptor gives.
#include <graphkit_plugin.h>

GRAPHKIT_PLUGIN_NOTE("own-engine", "1.0.0");
