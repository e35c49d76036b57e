// Swift Testing's cross-import overlay for CoreImage, empty. The toolchain's Testing module
// declares one (Testing.swiftcrossimport/CoreImage.swiftoverlay: CIImage attachments on Apple's
// platforms) but Linux's toolchain does not ship it, so any file that imports Testing and a module
// named CoreImage fails with "no such module '_Testing_CoreImage'". This module stands in, in the
// AVFoundation product, so an application's tests compile as ours do (as _Testing_CoreGraphics).
@_exported import CoreImage
