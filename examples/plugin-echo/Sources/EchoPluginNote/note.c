// The plugin's note: who it is and what it was built with, read by graphctl from the file before
// any of the plugin's code runs (docs/PLUGINS.md, "The note"). The name and version are the ones
// Plugin.swift gives GraphKitPlugin.descriptor.
#include <graphkit_plugin.h>

GRAPHKIT_PLUGIN_NOTE("echo", "1.0.0");
