import Foundation

/// An offscreen drawing surface made for a context, as CoreGraphics' `CGLayer`: here a bitmap
/// context of the layer's size (rounded up to whole pixels) in premultiplied BGRA, Cairo's own
/// layout, drawn into a context as an image (CGContext's `draw(_:in:)`). Apple's caches the
/// layer on the destination's device; drawing it is the same picture.
public final class CGLayer {
    public let size: CGSize
    /// The layer's own context, to draw in (y up, origin at its bottom-left corner).
    public let context: CGContext?

    /// A layer of `size` for `context`; nil for a size that is empty, not finite or too large for
    /// a bitmap context. `auxiliaryInfo` is reserved (Apple's too).
    public init?(_ context: CGContext, size: CGSize, auxiliaryInfo: CFDictionary?) {
        guard size.width.isFinite, size.height.isFinite, size.width > 0, size.height > 0, size.width <= 32767, size.height <= 32767,
              let layerContext = CGContext(data: nil, width: Int(size.width.rounded(.up)), height: Int(size.height.rounded(.up)),
                                           bitsPerComponent: 8, bytesPerRow: 0, space: CGColorSpaceCreateDeviceRGB(),
                                           bitmapInfo: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue)
        else { return nil }
        self.size = size
        self.context = layerContext
    }
}

extension CGContext {
    /// Draws `layer` scaled into `rect`, as an image of what was drawn in it so far.
    public func draw(_ layer: CGLayer, in rect: CGRect) {
        guard let image = layer.context?.makeImage() else { return }
        draw(image, in: rect)
    }

    /// Draws `layer` at its size with its bottom-left corner at `point`.
    public func draw(_ layer: CGLayer, at point: CGPoint) { draw(layer, in: CGRect(origin: point, size: layer.size)) }
}
