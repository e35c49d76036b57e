// Swift Testing's cross-import overlay for CoreGraphics, empty. The toolchain's Testing module
// declares one (Testing.swiftcrossimport/CoreGraphics.swiftoverlay: CGImage attachments on Apple's
// platforms) but Linux's toolchain does not ship it, so any file that imports Testing and a module
// named CoreGraphics (ours, through AVFoundation) fails with "no such module
// '_Testing_CoreGraphics'". This module stands in, in the AVFoundation product, so an
// application's tests compile as ours do.
@_exported import CoreGraphics
