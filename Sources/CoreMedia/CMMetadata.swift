/// CoreMedia's metadata base data types (CMMetadata.h): the values `AVMetadataItem.dataType`
/// takes. Strings here, where Apple's are CFStrings; code that writes `as String` after one
/// compiles unchanged. Pictures are named by their uniform type identifiers, as Apple's are;
/// GraphKit's writer takes those and the `com.apple.metadata.datatype.JPEG`/`PNG` that items
/// read from files carry.
public let kCMMetadataBaseDataType_RawData = "com.apple.metadata.datatype.raw-data"
public let kCMMetadataBaseDataType_UTF8 = "com.apple.metadata.datatype.UTF-8"
public let kCMMetadataBaseDataType_UTF16 = "com.apple.metadata.datatype.UTF-16"
public let kCMMetadataBaseDataType_GIF = "com.compuserve.gif"
public let kCMMetadataBaseDataType_JPEG = "public.jpeg"
public let kCMMetadataBaseDataType_PNG = "public.png"
public let kCMMetadataBaseDataType_BMP = "com.microsoft.bmp"
public let kCMMetadataBaseDataType_Float32 = "com.apple.metadata.datatype.float32"
public let kCMMetadataBaseDataType_Float64 = "com.apple.metadata.datatype.float64"
public let kCMMetadataBaseDataType_SInt8 = "com.apple.metadata.datatype.int8"
public let kCMMetadataBaseDataType_SInt16 = "com.apple.metadata.datatype.int16"
public let kCMMetadataBaseDataType_SInt32 = "com.apple.metadata.datatype.int32"
public let kCMMetadataBaseDataType_SInt64 = "com.apple.metadata.datatype.int64"
public let kCMMetadataBaseDataType_UInt8 = "com.apple.metadata.datatype.uint8"
public let kCMMetadataBaseDataType_UInt16 = "com.apple.metadata.datatype.uint16"
public let kCMMetadataBaseDataType_UInt32 = "com.apple.metadata.datatype.uint32"
public let kCMMetadataBaseDataType_UInt64 = "com.apple.metadata.datatype.uint64"
public let kCMMetadataBaseDataType_JSON = "com.apple.metadata.datatype.JSON"
public let kCMMetadataDataType_QuickTimeMetadataLocation_ISO6709 = "com.apple.quicktime.mdta.datatype.location.ISO6709"
public let kCMMetadataDataType_QuickTimeMetadataDirection = "com.apple.quicktime.mdta.datatype.direction"
