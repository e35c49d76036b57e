// CoreFoundation's type identifiers for CoreVideo's and CoreMedia's objects, as code checks what
// an attachment or a callback's argument is: `CFGetTypeID(x) == CMSampleBufferGetTypeID()`.

/// CoreFoundation's type of a sample buffer.
public func CMSampleBufferGetTypeID() -> CFTypeID { 0x434D_5342 }  // 'CMSB'
/// CoreFoundation's type of a block buffer.
public func CMBlockBufferGetTypeID() -> CFTypeID { 0x434D_4242 }  // 'CMBB'
/// CoreFoundation's type of a format description.
public func CMFormatDescriptionGetTypeID() -> CFTypeID { 0x434D_4644 }  // 'CMFD'

/// The type of `cf`: one of the functions above, `CVPixelBufferGetTypeID()`, `CGImage.typeID`, or 0 for anything
/// that is not one of these objects.
public func CFGetTypeID(_ cf: CFTypeRef?) -> CFTypeID {
    switch cf {
    case is CVBuffer: CVPixelBufferGetTypeID()
    case is CMSampleBuffer: CMSampleBufferGetTypeID()
    case is CMBlockBuffer: CMBlockBufferGetTypeID()
    case is CMFormatDescription: CMFormatDescriptionGetTypeID()
    case is CGImage: CGImage.typeID
    default: 0
    }
}
