#ifndef GRAPHKIT_CCAIRO_SHIM_H
#define GRAPHKIT_CCAIRO_SHIM_H
#include <cairo.h>
#include <cairo-svg.h>
#endif
