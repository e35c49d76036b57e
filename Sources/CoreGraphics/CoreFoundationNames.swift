@_exported import Foundation

// The few CoreFoundation and MacTypes names that media code written for Apple's platforms uses
// beside CoreVideo and CoreMedia, and that Foundation on Linux lacks. CGFloat, CGPoint, CGSize
// and CGRect are Foundation's own on Linux and are not redeclared.

/// A four-character code (`'BGRA'`, `'lpcm'`), as MacTypes declares it.
public typealias FourCharCode = UInt32
/// A four-character code naming a type, as MacTypes declares it.
public typealias OSType = FourCharCode
/// A status result: `noErr` (0) or a negative error code.
public typealias OSStatus = Int32
/// No error, as MacTypes declares it (an `Int`, as Swift imports it: compare it with any integer).
public var noErr: Int { 0 }

/// CoreFoundation's allocator. GraphKit allocates on its own: every function taking one accepts
/// `kCFAllocatorDefault` or `nil` and ignores it.
public final class CFAllocator: Sendable {
    init() {}
}

/// The default allocator: nil here, as GraphKit ignores allocators (see ``CFAllocator``).
public let kCFAllocatorDefault: CFAllocator! = nil

/// CoreFoundation's string: a Swift `String` here, so `kCVPixelBufferWidthKey as String` and
/// `as CFString` both compile and mean the same.
public typealias CFString = String
/// CoreFoundation's dictionary: `[String: Any]` here, so `attributes as CFDictionary` compiles.
public typealias CFDictionary = [String: Any]
/// CoreFoundation's array: `[Any]` here, so what returns one (`CGImageDestinationCopyTypeIdentifiers()`)
/// reads `as! [String]` or `as NSArray` as on Apple's platforms.
public typealias CFArray = [Any]
/// CoreFoundation's attributed string: Foundation's `NSAttributedString` here, as toll-free bridged
/// on Apple's platforms, so `attributedString as CFAttributedString` (CoreText's lines) compiles.
public typealias CFAttributedString = NSAttributedString
/// CoreFoundation's URL: Foundation's `URL` here, so `url as CFURL` compiles and means the same.
public typealias CFURL = URL
/// A property list value (string, number, boolean, data, date, array, dictionary): `Any` here,
/// read with `as? String`, `as? Data` as on Apple's platforms.
public typealias CFPropertyList = Any
/// CoreFoundation's type identifier.
public typealias CFTypeID = UInt

extension FourCharCode {
    /// The four characters of a code, `'BGRA'` → "BGRA", for messages.
    package var fourCharacters: String {
        let bytes = [UInt8(self >> 24 & 0xff), UInt8(self >> 16 & 0xff), UInt8(self >> 8 & 0xff), UInt8(self & 0xff)]
        guard bytes.allSatisfy({ (0x20...0x7e).contains($0) }) else { return "0x" + String(self, radix: 16) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A number from a settings or attributes dictionary, whatever integer or floating type (or
/// NSNumber) it was written as; nil for anything else.
package func settingsNumber(_ value: Any?) -> Double? {
    switch value {
    case let v as Int: Double(v)
    case let v as Int32: Double(v)
    case let v as UInt32: Double(v)
    case let v as Int64: Double(v)
    case let v as UInt64: Double(v)
    case let v as UInt: Double(v)
    case let v as Int16: Double(v)
    case let v as UInt16: Double(v)
    case let v as Double: v
    case let v as Float: Double(v)
    case let v as CGFloat: Double(v)
    case let v as NSNumber: v.doubleValue
    default: nil
    }
}

/// An integer from a settings dictionary: a number with no fraction, else nil.
package func settingsInteger(_ value: Any?) -> Int? {
    guard let d = settingsNumber(value), d.rounded() == d, abs(d) < 9.0e15 else { return nil }
    return Int(d)
}

/// A Boolean from a settings dictionary (`true`, or a number: 0 is false).
package func settingsBool(_ value: Any?) -> Bool? {
    if let b = value as? Bool { return b }
    return settingsNumber(value).map { $0 != 0 }
}

/// Where a call that fails stores its error, as Foundation's `NSErrorPointer` on Apple's
/// platforms (`var error: NSError?; …(error: &error)`). Linux's Foundation has none: it has no
/// autoreleasing pointers, so this is a plain one.
public typealias NSErrorPointer = UnsafeMutablePointer<NSError?>?

/// Option bits of CoreVideo's calls (`CVPixelBufferLockFlags(rawValue:)` takes them).
public typealias CVOptionFlags = UInt64
