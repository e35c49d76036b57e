import Foundation

/// Colour differences for tests of colour conversions: CIEDE2000 (ΔE00, CIE 142-2001, as
/// Sharma, Wu and Dalal's "The CIEDE2000 color-difference formula: implementation notes" gives it,
/// whose test pairs `ColorDifferenceTests` checks) on CIELAB under D65, and 8-bit BT.709 Y'CbCr
/// (limited range) to CIELAB through an SDR display (BT.1886, a black of 0).
public enum ColorDifference {
    public struct Lab: Sendable, Equatable {
        public var l: Double, a: Double, b: Double
        public init(_ l: Double, _ a: Double, _ b: Double) { (self.l, self.a, self.b) = (l, a, b) }
    }

    /// ΔE00 between two colours (kL = kC = kH = 1).
    public static func deltaE2000(_ x: Lab, _ y: Lab) -> Double {
        func deg(_ r: Double) -> Double { r * 180 / .pi }
        func rad(_ d: Double) -> Double { d * .pi / 180 }
        let c1 = (x.a * x.a + x.b * x.b).squareRoot(), c2 = (y.a * y.a + y.b * y.b).squareRoot()
        let cMean = (c1 + c2) / 2
        let c7 = pow(cMean, 7)
        let g = 0.5 * (1 - (c7 / (c7 + pow(25, 7))).squareRoot())
        let a1 = (1 + g) * x.a, a2 = (1 + g) * y.a
        let cp1 = (a1 * a1 + x.b * x.b).squareRoot(), cp2 = (a2 * a2 + y.b * y.b).squareRoot()
        func hue(_ b: Double, _ a: Double) -> Double {
            if a == 0 && b == 0 { return 0 }
            let h = deg(atan2(b, a))
            return h < 0 ? h + 360 : h
        }
        let h1 = hue(x.b, a1), h2 = hue(y.b, a2)
        let dL = y.l - x.l, dC = cp2 - cp1
        var dh = 0.0
        if cp1 * cp2 != 0 {
            dh = h2 - h1
            if dh > 180 { dh -= 360 } else if dh < -180 { dh += 360 }
        }
        let dH = 2 * (cp1 * cp2).squareRoot() * sin(rad(dh / 2))
        let lMean = (x.l + y.l) / 2, cpMean = (cp1 + cp2) / 2
        var hMean = h1 + h2
        if cp1 * cp2 != 0 {
            if abs(h1 - h2) <= 180 { hMean = (h1 + h2) / 2 } else { hMean = h1 + h2 < 360 ? (h1 + h2 + 360) / 2 : (h1 + h2 - 360) / 2 }
        }
        let t = 1 - 0.17 * cos(rad(hMean - 30)) + 0.24 * cos(rad(2 * hMean)) + 0.32 * cos(rad(3 * hMean + 6))
            - 0.20 * cos(rad(4 * hMean - 63))
        let dTheta = 30 * exp(-pow((hMean - 275) / 25, 2))
        let cp7 = pow(cpMean, 7)
        let rc = 2 * (cp7 / (cp7 + pow(25, 7))).squareRoot()
        let sl = 1 + 0.015 * pow(lMean - 50, 2) / (20 + pow(lMean - 50, 2)).squareRoot()
        let sc = 1 + 0.045 * cpMean, sh = 1 + 0.015 * cpMean * t
        let rt = -sin(rad(2 * dTheta)) * rc
        let (tl, tc, th) = (dL / sl, dC / sc, dH / sh)
        return (tl * tl + tc * tc + th * th + rt * tc * th).squareRoot()
    }

    /// BT.709 non-linear R'G'B' (0...1, the SDR display's signal) of 8-bit limited-range Y'CbCr.
    public static func rgb709(y: Double, cb: Double, cr: Double) -> (r: Double, g: Double, b: Double) {
        let yn = (y - 16) / 219, u = (cb - 128) / 224, v = (cr - 128) / 224
        let r = yn + 1.5748 * v, b = yn + 1.8556 * u
        return (r, (yn - 0.2126 * r - 0.0722 * b) / 0.7152, b)
    }

    /// CIELAB (D65) of 8-bit limited-range BT.709 Y'CbCr shown on an SDR display (BT.1886: the
    /// signal to the power 2.4, white 1); R'G'B' outside 0...1 is clipped, as a display does.
    public static func lab709(y: Double, cb: Double, cr: Double) -> Lab {
        let (r, g, b) = rgb709(y: y, cb: cb, cr: cr)
        return lab(r: r, g: g, b: b)
    }

    /// CIELAB of 8-bit full-range BT.709 R'G'B' (a BGRA picture's bytes) on an SDR display.
    public static func labRGB(r: Double, g: Double, b: Double) -> Lab { lab(r: r / 255, g: g / 255, b: b / 255) }

    static func lab(r: Double, g: Double, b: Double) -> Lab {
        func light(_ v: Double) -> Double { pow(min(max(v, 0), 1), 2.4) }
        let (lr, lg, lb) = (light(r), light(g), light(b))
        let xx = 0.4124 * lr + 0.3576 * lg + 0.1805 * lb
        let yy = 0.2126 * lr + 0.7152 * lg + 0.0722 * lb
        let zz = 0.0193 * lr + 0.1192 * lg + 0.9505 * lb
        func f(_ t: Double) -> Double { t > 216.0 / 24389 ? cbrt(t) : (24389.0 / 27 * t + 16) / 116 }
        // White (R = G = B = 1) is the reference white, as the matrix's rows sum.
        let (fx, fy, fz) = (f(xx / 0.9505), f(yy), f(zz / 1.0890))
        return Lab(116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))
    }
}
