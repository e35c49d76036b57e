// Swift's toolchain declares a cross-import overlay for Testing and CoreImage
// (lib/swift/linux/Testing.swiftcrossimport/CoreImage.swiftoverlay: Apple's attachments of
// CIImage), so in a file that imports both the compiler also imports `_Testing_CoreImage` and
// looks Testing's names up through it. Linux's toolchain does not ship that module: "no such
// module '_Testing_CoreImage'". This one is that name, re-exporting Testing and adding nothing,
// for the tests that import Testing and CoreImage. It is not in a product (it links Testing); a
// client's tests do the same, or build with `-Xfrontend -disable-cross-import-overlays`.
@_exported import Testing
