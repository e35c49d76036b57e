@_spi(Engine) import GraphKitCore

// CoreVideo's buffer attachments: values a pixel buffer carries beside its pixels, by key (its
// colour: kCVImageBufferColorPrimariesKey and the like), each marked to propagate or not when
// attachments are copied from one buffer to another (CVBufferPropagateAttachments, and the
// frames a reader decodes carry their track's colour this way). CoreMedia's CMSetAttachment
// family reaches the same store.

/// Any CoreFoundation value: `Any` here, as CoreFoundation's types are Swift's own (a `CFString`
/// is a `String`, a `CFDictionary` a `[String: Any]`), so an attachment's value is read with
/// `as? String`, `as? Bool`, `as? [String: Any]`.
public typealias CFTypeRef = Any

/// Whether an attachment is copied along when a buffer's attachments are propagated.
public enum CVAttachmentMode: UInt32, Sendable {
    case shouldNotPropagate = 0
    case shouldPropagate = 1
}
public let kCVAttachmentMode_ShouldNotPropagate = CVAttachmentMode.shouldNotPropagate
public let kCVAttachmentMode_ShouldPropagate = CVAttachmentMode.shouldPropagate

/// A buffer's attachments: values by key, each with its mode. Thread-safe, as CoreVideo's.
package final class Attachments: Sendable {
    package struct Entry: @unchecked Sendable {
        // Unchecked: the values are CoreFoundation's immutable kinds (strings, numbers, data,
        // dictionaries of them) as attachments are on Apple's platforms; a value is replaced,
        // never changed in place.
        package let value: Any
        package let propagates: Bool
    }
    private let entries = Guarded<[String: Entry]>([:])

    package init() {}

    package func set(_ key: String, _ value: Any, propagates: Bool) { entries.withLock { $0[key] = Entry(value: value, propagates: propagates) } }
    /// Every key of `values` with one mode, under one lock (a reader sets its track's colour on
    /// every frame it gives).
    package func set(_ values: [String: Any], propagates: Bool) {
        guard !values.isEmpty else { return }
        entries.withLock { e in for (key, value) in values { e[key] = Entry(value: value, propagates: propagates) } }
    }
    package func get(_ key: String) -> Entry? { entries.withLock { $0[key] } }
    package func remove(_ key: String) { entries.withLock { $0[key] = nil } }
    package func removeAll() { entries.withLock { $0 = [:] } }
    /// The values of one mode; nil when there are none, as CoreVideo's.
    package func dictionary(propagating: Bool) -> [String: Any]? {
        let d = entries.withLock { $0.filter { $0.value.propagates == propagating }.mapValues(\.value) }
        return d.isEmpty ? nil : d
    }
    /// Copies the propagating ones into `other` (its own of the same keys replaced).
    package func propagate(to other: Attachments) {
        guard other !== self else { return }
        let mine = entries.withLock { $0.filter(\.value.propagates) }
        other.entries.withLock { $0.merge(mine) { _, new in new } }
    }
}

/// Sets `key` to `value` on `buffer`, replacing what was there.
public func CVBufferSetAttachment(_ buffer: CVBuffer, _ key: CFString, _ value: CFTypeRef, _ attachmentMode: CVAttachmentMode) {
    buffer.attachments.set(key, value, propagates: attachmentMode == .shouldPropagate)
}

/// Sets every key of `theAttachments` on `buffer` with one mode.
public func CVBufferSetAttachments(_ buffer: CVBuffer, _ theAttachments: CFDictionary, _ attachmentMode: CVAttachmentMode) {
    buffer.attachments.set(theAttachments, propagates: attachmentMode == .shouldPropagate)
}

/// The value of `key` on `buffer`, and its mode through `attachmentMode`; nil when it has none.
public func CVBufferCopyAttachment(_ buffer: CVBuffer, _ key: CFString, _ attachmentMode: UnsafeMutablePointer<CVAttachmentMode>?) -> CFTypeRef? {
    guard let entry = buffer.attachments.get(key) else { return nil }
    attachmentMode?.pointee = entry.propagates ? .shouldPropagate : .shouldNotPropagate
    return entry.value
}

/// Whether `buffer` has an attachment for `key`.
public func CVBufferHasAttachment(_ buffer: CVBuffer, _ key: CFString) -> Bool { buffer.attachments.get(key) != nil }

public func CVBufferRemoveAttachment(_ buffer: CVBuffer, _ key: CFString) { buffer.attachments.remove(key) }

public func CVBufferRemoveAllAttachments(_ buffer: CVBuffer) { buffer.attachments.removeAll() }

/// The attachments of one mode, as a dictionary; nil when there are none.
public func CVBufferCopyAttachments(_ buffer: CVBuffer, _ attachmentMode: CVAttachmentMode) -> CFDictionary? {
    buffer.attachments.dictionary(propagating: attachmentMode == .shouldPropagate)
}

/// The same as ``CVBufferCopyAttachments(_:_:)`` (CoreVideo's older name: here the dictionary is a
/// value, so there is nothing to retain or not).
public func CVBufferGetAttachments(_ buffer: CVBuffer, _ attachmentMode: CVAttachmentMode) -> CFDictionary? {
    CVBufferCopyAttachments(buffer, attachmentMode)
}

/// Copies `sourceBuffer`'s propagating attachments onto `destinationBuffer`, as a filter does from
/// its input frame to its output (colour, for one).
public func CVBufferPropagateAttachments(_ sourceBuffer: CVBuffer, _ destinationBuffer: CVBuffer) {
    sourceBuffer.attachments.propagate(to: destinationBuffer.attachments)
}
