@_exported import ImageIO

// Turning an image upright by its EXIF orientation, as CoreImage does for a camera's pictures.

extension CIImage {
    /// The transform that shows this image, stored with EXIF orientation `orientation` (1…8),
    /// upright, its result moved to the origin: the identity for 1, for a value outside 1…8, or
    /// for an infinite or empty image.
    public func orientationTransform(forExifOrientation orientation: Int32) -> CGAffineTransform {
        let e = extent
        guard (2...8).contains(orientation), !e.isInfinite, !e.isNull else { return .identity }
        let w = e.width, h = e.height
        // Each maps the stored picture (y up) onto the upright one, at the origin.
        let t: CGAffineTransform
        switch orientation {
        case 2: t = CGAffineTransform(a: -1, b: 0, c: 0, d: 1, tx: w, ty: 0)    // mirrored
        case 3: t = CGAffineTransform(a: -1, b: 0, c: 0, d: -1, tx: w, ty: h)   // upside down
        case 4: t = CGAffineTransform(a: 1, b: 0, c: 0, d: -1, tx: 0, ty: h)    // mirrored top to bottom
        case 5: t = CGAffineTransform(a: 0, b: -1, c: -1, d: 0, tx: h, ty: w)   // mirrored, turned
        case 6: t = CGAffineTransform(a: 0, b: -1, c: 1, d: 0, tx: 0, ty: w)    // turned 90° clockwise
        case 7: t = CGAffineTransform(a: 0, b: 1, c: 1, d: 0, tx: 0, ty: 0)     // mirrored, turned
        default: t = CGAffineTransform(a: 0, b: 1, c: -1, d: 0, tx: h, ty: 0)   // 8: 90° anticlockwise
        }
        return CGAffineTransform(translationX: -e.minX, y: -e.minY).concatenating(t)
    }

    /// The image turned upright by ``orientationTransform(forExifOrientation:)``.
    public func oriented(forExifOrientation orientation: Int32) -> CIImage {
        transformed(by: orientationTransform(forExifOrientation: orientation))
    }

    /// As ``oriented(forExifOrientation:)`` with the orientation's raw value.
    public func oriented(_ orientation: CGImagePropertyOrientation) -> CIImage {
        oriented(forExifOrientation: Int32(orientation.rawValue))
    }
}
