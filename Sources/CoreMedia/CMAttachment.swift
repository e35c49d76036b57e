@_spi(Engine) import GraphKitCore

// CoreMedia's attachment functions, for what bears attachments: sample buffers and Core Video's
// buffers (the same store CVBufferSetAttachment reaches). A target of another kind has none:
// setting is a no-op and reading gives nil, as for an object without attachments.

/// Something that carries attachments: a `CMSampleBuffer` or a `CVBuffer`.
public typealias CMAttachmentBearer = CFTypeRef
/// Whether an attachment propagates (`kCMAttachmentMode_ShouldPropagate`) or not.
public typealias CMAttachmentMode = UInt32
public let kCMAttachmentMode_ShouldNotPropagate: CMAttachmentMode = 0
public let kCMAttachmentMode_ShouldPropagate: CMAttachmentMode = 1

/// The store of `target`, nil for what bears none.
private func store(_ target: CMAttachmentBearer) -> Attachments? {
    switch target {
    case let b as CMSampleBuffer: b.bufferAttachments
    case let b as CVBuffer: b.attachments
    default: nil
    }
}

/// Sets `key` on `target`; a nil `value` removes it, as CoreMedia's.
public func CMSetAttachment(_ target: CMAttachmentBearer, key: CFString, value: CFTypeRef?, attachmentMode: CMAttachmentMode) {
    guard let store = store(target) else { return }
    if let value { store.set(key, value, propagates: attachmentMode == kCMAttachmentMode_ShouldPropagate) } else { store.remove(key) }
}

/// The value of `key` on `target`, its mode through `attachmentModeOut`; nil when none.
public func CMGetAttachment(_ target: CMAttachmentBearer, key: CFString, attachmentModeOut: UnsafeMutablePointer<CMAttachmentMode>?) -> CFTypeRef? {
    guard let entry = store(target)?.get(key) else { return nil }
    attachmentModeOut?.pointee = entry.propagates ? kCMAttachmentMode_ShouldPropagate : kCMAttachmentMode_ShouldNotPropagate
    return entry.value
}

public func CMRemoveAttachment(_ target: CMAttachmentBearer, key: CFString) { store(target)?.remove(key) }

public func CMRemoveAllAttachments(_ target: CMAttachmentBearer) { store(target)?.removeAll() }

/// Sets every key of `theAttachments` with one mode.
public func CMSetAttachments(_ target: CMAttachmentBearer, attachments theAttachments: CFDictionary, attachmentMode: CMAttachmentMode) {
    store(target)?.set(theAttachments, propagates: attachmentMode == kCMAttachmentMode_ShouldPropagate)
}

/// The attachments of one mode as a dictionary; nil when there are none.
public func CMCopyDictionaryOfAttachments(allocator: CFAllocator?, target: CMAttachmentBearer, attachmentMode: CMAttachmentMode) -> CFDictionary? {
    store(target)?.dictionary(propagating: attachmentMode == kCMAttachmentMode_ShouldPropagate)
}

/// Copies `source`'s propagating attachments onto `destination`.
public func CMPropagateAttachments(_ source: CMAttachmentBearer, destination: CMAttachmentBearer) {
    guard let from = store(source), let to = store(destination) else { return }
    from.propagate(to: to)
}
