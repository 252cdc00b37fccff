/* A plugin with the ABI version symbol but no entry point: refused. */
#include <kconnectd/plugin.h>

KC_PLUGIN_DECLARE_ABI();
