import CoreVideo

/// CoreImage's `CIVector`: a filter's vector parameter (a row of a colour matrix, a rectangle
/// as x, y, width, height, a point). Components past ``count`` read as 0, as Apple's.
public final class CIVector: Sendable, Hashable, CustomStringConvertible {
    private let values: [CGFloat]

    /// The first `count` values at `values` (none when `count` is not positive).
    public init(values: UnsafePointer<CGFloat>, count: Int) {
        self.values = count > 0 ? Array(UnsafeBufferPointer(start: values, count: count)) : []
    }

    /// A vector of the values given (the Swift form of `init(values:count:)`).
    package init(_ values: [CGFloat]) { self.values = values }

    public convenience init(x: CGFloat) { self.init([x]) }
    public convenience init(x: CGFloat, y: CGFloat) { self.init([x, y]) }
    public convenience init(x: CGFloat, y: CGFloat, z: CGFloat) { self.init([x, y, z]) }
    public convenience init(x: CGFloat, y: CGFloat, z: CGFloat, w: CGFloat) { self.init([x, y, z, w]) }
    /// x, y.
    public convenience init(cgPoint p: CGPoint) { self.init([p.x, p.y]) }
    /// x, y, width, height.
    public convenience init(cgRect r: CGRect) { self.init([r.origin.x, r.origin.y, r.size.width, r.size.height]) }
    /// a, b, c, d, tx, ty.
    public convenience init(cgAffineTransform t: CGAffineTransform) { self.init([t.a, t.b, t.c, t.d, t.tx, t.ty]) }

    public var count: Int { values.count }
    /// The value at `index`; 0 past the end, as Apple's.
    public func value(at index: Int) -> CGFloat { values.indices.contains(index) ? values[index] : 0 }
    public var x: CGFloat { value(at: 0) }
    public var y: CGFloat { value(at: 1) }
    public var z: CGFloat { value(at: 2) }
    public var w: CGFloat { value(at: 3) }
    public var cgPointValue: CGPoint { CGPoint(x: x, y: y) }
    public var cgRectValue: CGRect { CGRect(x: x, y: y, width: z, height: w) }
    public var cgAffineTransformValue: CGAffineTransform {
        CGAffineTransform(a: value(at: 0), b: value(at: 1), c: value(at: 2), d: value(at: 3), tx: value(at: 4), ty: value(at: 5))
    }
    /// "[x y z w]", the form of Apple's `stringRepresentation`.
    public var stringRepresentation: String { "[" + values.map { "\($0)" }.joined(separator: " ") + "]" }
    public var description: String { "CIVector\(stringRepresentation)" }

    public static func == (l: CIVector, r: CIVector) -> Bool { l.values == r.values }
    public func hash(into h: inout Hasher) { h.combine(values) }
}
