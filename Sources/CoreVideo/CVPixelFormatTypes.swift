// Pixel format codes that Apple's code names but GraphKit's frames do not hold: named, so settings
// and checks that mention them compile, and refused where a buffer of one would be made
// (`CVPixelBufferCreate` and pools answer `kCVReturnInvalidPixelFormat`; a reader's or adaptor's
// settings name the code and the formats GraphKit has). The codes GraphKit holds are beside
// `CVPixelBuffer`.

/// 16-bit float RGBA ('RGhA').
public let kCVPixelFormatType_64RGBAHalf: OSType = 0x5247_6841
/// 10-bit ARGB, little-endian, packed in 32 bits ('l10r').
public let kCVPixelFormatType_ARGB2101010LEPacked: OSType = 0x6C31_3072
/// 8-bit 4:2:2, Cb Y'0 Cr Y'1 ('2vuy').
public let kCVPixelFormatType_422YpCbCr8: OSType = 0x3276_7579
/// One 8-bit component ('L008').
public let kCVPixelFormatType_OneComponent8: OSType = 0x4C30_3038
/// 24-bit RGB and BGR, packed.
public let kCVPixelFormatType_24RGB: OSType = 0x0000_0018
public let kCVPixelFormatType_24BGR: OSType = 0x3234_4247
