import Foundation

/// The largest rectangle of `aspectRatio`'s shape that fits inside `boundingRect`, centred in it
/// (AVUtilities.h): how a frame of one size is fitted, letterboxed or pillarboxed, into another.
/// An aspect ratio with no area gives an empty rectangle at the bounding rectangle's centre.
public func AVMakeRect(aspectRatio: CGSize, insideRect boundingRect: CGRect) -> CGRect {
    let bounds = boundingRect.standardized
    guard aspectRatio.width > 0, aspectRatio.height > 0, aspectRatio.width.isFinite, aspectRatio.height.isFinite else {
        return CGRect(x: bounds.midX, y: bounds.midY, width: 0, height: 0)
    }
    let scale = min(bounds.width / aspectRatio.width, bounds.height / aspectRatio.height)
    let size = CGSize(width: aspectRatio.width * scale, height: aspectRatio.height * scale)
    return CGRect(x: bounds.minX + (bounds.width - size.width) / 2, y: bounds.minY + (bounds.height - size.height) / 2,
                  width: size.width, height: size.height)
}
