// Pango over Cairo (CoreText's text), and HarfBuzz's name table (a face's PostScript name).
#include <pango/pangocairo.h>
#include <hb.h>
#include <hb-ot.h>
