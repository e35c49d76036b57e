import Foundation

// CoreGraphics' paths: CGPath (immutable) and CGMutablePath, as a list of elements in the
// coordinates they were added in (after the optional transform of each call). Arcs and ellipses
// become cubic Béziers, as CoreGraphics stores them. A CGContext's own path calls (addRect,
// addArc, ...) share the geometry here through ``PathBuilding``.

/// One element of a path, as CoreGraphics' `CGPathElement` names them.
public enum CGPathElementType: Int32, Sendable {
    case moveToPoint = 0, addLineToPoint, addQuadCurveToPoint, addCurveToPoint, closeSubpath
}

/// How a fill decides what is inside, as CoreGraphics declares it.
public enum CGPathFillRule: Int, Sendable { case winding = 0, evenOdd }

/// An element with its points (0 to 3).
package struct PathElement: Sendable, Equatable {
    package let type: CGPathElementType
    package let points: [CGPoint]
}

/// What builds a path from moves, lines, cubics and closes: a CGMutablePath, or a CGContext's
/// current path in Cairo. The shapes (rectangles, ellipses, arcs, quadratic curves) are written
/// once, here, on top of those four.
package protocol PathBuilding {
    /// The last point, nil when the path has none.
    var lastPoint: CGPoint? { get }
    func pathMove(to p: CGPoint)
    func pathLine(to p: CGPoint)
    func pathCurve(to p: CGPoint, _ c1: CGPoint, _ c2: CGPoint)
    func pathClose()
}

extension PathBuilding {
    /// A closed rectangle, from its origin counterclockwise in a y-up space, as CoreGraphics.
    package func buildRect(_ r: CGRect, _ t: CGAffineTransform) {
        let r = r.standardized
        pathMove(to: CGPoint(x: r.minX, y: r.minY).applying(t))
        pathLine(to: CGPoint(x: r.maxX, y: r.minY).applying(t))
        pathLine(to: CGPoint(x: r.maxX, y: r.maxY).applying(t))
        pathLine(to: CGPoint(x: r.minX, y: r.maxY).applying(t))
        pathClose()
    }

    /// A closed ellipse inside `r`: four cubics from (maxX, midY).
    package func buildEllipse(_ r: CGRect, _ t: CGAffineTransform) {
        let r = r.standardized
        let center = CGPoint(x: r.midX, y: r.midY)
        let scale = CGAffineTransform(a: r.width / 2, b: 0, c: 0, d: r.height / 2, tx: center.x, ty: center.y).concatenating(t)
        buildArc(center: .zero, radius: 1, from: 0, to: 2 * .pi, clockwise: false, scale, move: true)
        pathClose()
    }

    /// An arc, as CoreGraphics' `addArc(center:radius:startAngle:endAngle:clockwise:)`: a line
    /// from the last point to its start (a move when there is none, or with `move`), then cubics
    /// of at most 90° each. `clockwise` in a y-up space, so angles grow counterclockwise.
    package func buildArc(center: CGPoint, radius: CGFloat, from start: CGFloat, to end: CGFloat, clockwise: Bool,
                          _ t: CGAffineTransform, move: Bool = false) {
        guard center.x.isFinite, center.y.isFinite, radius.isFinite, start.isFinite, end.isFinite else { return }
        var sweep = Double(end - start)
        let full = 2 * Double.pi
        if clockwise {
            sweep = sweep.truncatingRemainder(dividingBy: full)
            if sweep > 0 { sweep -= full }
        } else {
            sweep = sweep.truncatingRemainder(dividingBy: full)
            if sweep < 0 { sweep += full }
            if end - start >= CGFloat(full) { sweep = full }
        }
        if clockwise, start - end >= CGFloat(full) { sweep = -full }
        let r = Double(radius), c = (x: Double(center.x), y: Double(center.y))
        func point(_ a: Double) -> CGPoint { CGPoint(x: c.x + r * cos(a), y: c.y + r * sin(a)).applying(t) }
        let first = point(Double(start))
        if move || lastPoint == nil { pathMove(to: first) } else { pathLine(to: first) }
        let pieces = max(1, Int((abs(sweep) / (Double.pi / 2)).rounded(.up)))
        let step = sweep / Double(pieces)
        let k = 4.0 / 3.0 * tan(step / 4)
        var a = Double(start)
        for _ in 0..<pieces {
            let b = a + step
            let c1 = CGPoint(x: c.x + r * (cos(a) - k * sin(a)), y: c.y + r * (sin(a) + k * cos(a))).applying(t)
            let c2 = CGPoint(x: c.x + r * (cos(b) + k * sin(b)), y: c.y + r * (sin(b) - k * cos(b))).applying(t)
            pathCurve(to: point(b), c1, c2)
            a = b
        }
    }

    /// A quadratic curve as the cubic that draws it (from the last point, or `control`'s start
    /// when there is none).
    package func buildQuadCurve(to p: CGPoint, control: CGPoint) {
        let p0 = lastPoint ?? control
        if lastPoint == nil { pathMove(to: p0) }
        let c1 = CGPoint(x: p0.x + 2 / 3 * (control.x - p0.x), y: p0.y + 2 / 3 * (control.y - p0.y))
        let c2 = CGPoint(x: p.x + 2 / 3 * (control.x - p.x), y: p.y + 2 / 3 * (control.y - p.y))
        pathCurve(to: p, c1, c2)
    }

    /// The elements of `path`, each point through `t`, quadratic ones as cubics.
    package func buildPath(_ path: CGPath, _ t: CGAffineTransform) {
        for e in path.elements {
            let p = e.points.map { $0.applying(t) }
            switch e.type {
            case .moveToPoint: pathMove(to: p[0])
            case .addLineToPoint: pathLine(to: p[0])
            case .addQuadCurveToPoint: buildQuadCurve(to: p[1], control: p[0])
            case .addCurveToPoint: pathCurve(to: p[2], p[0], p[1])
            case .closeSubpath: pathClose()
            }
        }
    }
}

/// An immutable path, as CoreGraphics' `CGPath`. Not Sendable: its subclass CGMutablePath changes
/// in place, and, as on Apple's platforms, must not be shared while it is changed.
public class CGPath: Equatable {
    package fileprivate(set) var elements: [PathElement]
    private var subpathStart: CGPoint?

    init(elements: [PathElement] = []) { self.elements = elements }

    /// A closed rectangle, each point through `transform`.
    public convenience init(rect: CGRect, transform: UnsafePointer<CGAffineTransform>?) {
        let path = CGMutablePath()
        path.buildRect(rect, transform?.pointee ?? .identity)
        self.init(elements: path.elements)
    }

    /// An ellipse inside `rect`, each point through `transform`.
    public convenience init(ellipseIn rect: CGRect, transform: UnsafePointer<CGAffineTransform>?) {
        let path = CGMutablePath()
        path.buildEllipse(rect, transform?.pointee ?? .identity)
        self.init(elements: path.elements)
    }

    public var isEmpty: Bool { elements.isEmpty }
    /// The last point, `.zero` for an empty path, as CoreGraphics.
    public var currentPoint: CGPoint { lastPoint ?? .zero }

    /// Every point, control points included, in the smallest rectangle; `.null` for an empty path.
    public var boundingBox: CGRect { Self.bounds(of: elements.flatMap(\.points)) }

    /// The smallest rectangle holding the path itself (control points of curves not counted:
    /// each cubic is measured at 64 points along it, close to within a small fraction of a unit
    /// for curves of ordinary sizes); `.null` for an empty path.
    public var boundingBoxOfPath: CGRect {
        var points: [CGPoint] = []
        var last = CGPoint.zero
        for e in elements {
            switch e.type {
            case .addCurveToPoint, .addQuadCurveToPoint:
                let (c1, c2, p) = e.type == .addCurveToPoint ? (e.points[0], e.points[1], e.points[2])
                    : (last + (e.points[0] - last) * (2 / 3), e.points[1] + (e.points[0] - e.points[1]) * (2 / 3), e.points[1])
                for i in 1...64 {
                    let t = CGFloat(i) / 64, u = 1 - t
                    points.append(last * (u * u * u) + c1 * (3 * u * u * t) + c2 * (3 * u * t * t) + p * (t * t * t))
                }
                last = p
            case .closeSubpath: break
            default: points += e.points; last = e.points[0]
            }
        }
        return Self.bounds(of: points)
    }

    public func copy() -> CGPath? { CGPath(elements: elements) }
    public func mutableCopy() -> CGMutablePath? { CGMutablePath(elements: elements) }

    /// Each element in order, as `applyWithBlock` gives them (types and points; not Apple's
    /// pointer-based CGPathElement).
    package func forEachElement(_ body: (PathElement) -> Void) { elements.forEach(body) }

    public static func == (a: CGPath, b: CGPath) -> Bool { a.elements == b.elements }

    private static func bounds(of points: [CGPoint]) -> CGRect {
        guard let first = points.first else { return .null }
        var (x0, y0, x1, y1) = (first.x, first.y, first.x, first.y)
        for p in points { (x0, y0, x1, y1) = (min(x0, p.x), min(y0, p.y), max(x1, p.x), max(y1, p.y)) }
        return CGRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    // MARK: Building (CGMutablePath's)

    package var lastPoint: CGPoint? {
        guard let e = elements.last else { return nil }
        return e.type == .closeSubpath ? subpathStart : e.points.last
    }
    package func pathMove(to p: CGPoint) { elements.append(PathElement(type: .moveToPoint, points: [p])); subpathStart = p }
    package func pathLine(to p: CGPoint) {
        if lastPoint == nil { return pathMove(to: p) }
        elements.append(PathElement(type: .addLineToPoint, points: [p]))
    }
    package func pathCurve(to p: CGPoint, _ c1: CGPoint, _ c2: CGPoint) {
        if lastPoint == nil { pathMove(to: c1) }
        elements.append(PathElement(type: .addCurveToPoint, points: [c1, c2, p]))
    }
    package func pathClose() {
        guard lastPoint != nil else { return }
        elements.append(PathElement(type: .closeSubpath, points: []))
    }
}

/// A path to build, as CoreGraphics' `CGMutablePath`: every call takes an optional transform its
/// points go through first, as Apple's Swift overlay declares them.
public final class CGMutablePath: CGPath, PathBuilding {
    public init() { super.init() }
    override init(elements: [PathElement]) { super.init(elements: elements) }

    public func move(to point: CGPoint, transform: CGAffineTransform = .identity) { pathMove(to: point.applying(transform)) }
    public func addLine(to point: CGPoint, transform: CGAffineTransform = .identity) { pathLine(to: point.applying(transform)) }
    public func addLines(between points: [CGPoint], transform: CGAffineTransform = .identity) {
        for (i, p) in points.enumerated() { i == 0 ? pathMove(to: p.applying(transform)) : pathLine(to: p.applying(transform)) }
    }
    public func addRect(_ rect: CGRect, transform: CGAffineTransform = .identity) { buildRect(rect, transform) }
    public func addRects(_ rects: [CGRect], transform: CGAffineTransform = .identity) { rects.forEach { buildRect($0, transform) } }
    public func addEllipse(in rect: CGRect, transform: CGAffineTransform = .identity) { buildEllipse(rect, transform) }
    public func addArc(center: CGPoint, radius: CGFloat, startAngle: CGFloat, endAngle: CGFloat, clockwise: Bool,
                       transform: CGAffineTransform = .identity) {
        buildArc(center: center, radius: radius, from: startAngle, to: endAngle, clockwise: clockwise, transform)
    }
    public func addCurve(to end: CGPoint, control1: CGPoint, control2: CGPoint, transform: CGAffineTransform = .identity) {
        pathCurve(to: end.applying(transform), control1.applying(transform), control2.applying(transform))
    }
    public func addQuadCurve(to end: CGPoint, control: CGPoint, transform: CGAffineTransform = .identity) {
        if lastPoint == nil { pathMove(to: control.applying(transform)) }
        elements.append(PathElement(type: .addQuadCurveToPoint, points: [control.applying(transform), end.applying(transform)]))
    }
    public func addPath(_ path: CGPath, transform: CGAffineTransform = .identity) {
        for e in path.elements { elements.append(PathElement(type: e.type, points: e.points.map { $0.applying(transform) })) }
    }
    public func closeSubpath() { pathClose() }
}

private func + (a: CGPoint, b: CGPoint) -> CGPoint { CGPoint(x: a.x + b.x, y: a.y + b.y) }
private func - (a: CGPoint, b: CGPoint) -> CGPoint { CGPoint(x: a.x - b.x, y: a.y - b.y) }
private func * (a: CGPoint, k: CGFloat) -> CGPoint { CGPoint(x: a.x * k, y: a.y * k) }
