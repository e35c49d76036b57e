// Written for Apple's platforms: RosyWriter's CoreImage renderer (RosyWriterCIFilterRenderer),
// in Swift as apps port it: a CIColorMatrix that drops green, rendered with a CIContext into
// BGRA buffers from a pool. Compiled unchanged; CoreImageRosyWriterTests runs it. (Apple's
// sample renders with `render(_:to:bounds:colorSpace:)`; its colour-space form comes with
// CGColorSpace, so this one uses `render(_:to:)`, which Apple has too.)
import CoreImage
import CoreMedia
import CoreVideo

final class RosyCIFilterRenderer {
    let operatesInPlace = false
    let inputPixelFormat: FourCharCode = kCVPixelFormatType_32BGRA
    private var ciContext: CIContext?
    private var rosyFilter: CIFilter?
    private var bufferPool: CVPixelBufferPool?

    func prepareForInput(width: Int, height: Int) {
        let attributes: [String: Any] = [
            kCVPixelBufferPixelFormatTypeKey as String: Int(kCVPixelFormatType_32BGRA),
            kCVPixelBufferWidthKey as String: width,
            kCVPixelBufferHeightKey as String: height,
            kCVPixelBufferIOSurfacePropertiesKey as String: [:] as [String: Any],
        ]
        var pool: CVPixelBufferPool?
        CVPixelBufferPoolCreate(kCFAllocatorDefault, nil, attributes as CFDictionary, &pool)
        bufferPool = pool
        ciContext = CIContext(options: [.workingColorSpace: NSNull(), .useSoftwareRenderer: false])
        rosyFilter = CIFilter(name: "CIColorMatrix")
        var greenCoefficients: [CGFloat] = [0, 0, 0, 0]
        rosyFilter!.setValue(CIVector(values: &greenCoefficients, count: 4), forKey: "inputGVector")
    }

    func reset() {
        ciContext = nil
        rosyFilter = nil
        bufferPool = nil
    }

    func copyRenderedPixelBuffer(_ pixelBuffer: CVPixelBuffer) -> CVPixelBuffer? {
        guard let rosyFilter = rosyFilter, let ciContext = ciContext, let bufferPool = bufferPool else { return nil }
        let sourceImage = CIImage(cvPixelBuffer: pixelBuffer, options: nil)
        rosyFilter.setValue(sourceImage, forKey: kCIInputImageKey)
        guard let filteredImage = rosyFilter.value(forKey: kCIOutputImageKey) as? CIImage else { return nil }
        var renderedOutputPixelBuffer: CVPixelBuffer?
        let err = CVPixelBufferPoolCreatePixelBuffer(kCFAllocatorDefault, bufferPool, &renderedOutputPixelBuffer)
        if err != kCVReturnSuccess { return nil }
        ciContext.render(filteredImage, to: renderedOutputPixelBuffer!)
        return renderedOutputPixelBuffer
    }

    /// The form, typed filters and a channel swap: red takes blue.
    func swapped(_ pb: CVPixelBuffer, into outBuffer: CVPixelBuffer) {
        let context = CIContext()
        let filter = CIFilter(name: "CIColorMatrix")!
        filter.setValue(CIImage(cvPixelBuffer: pb), forKey: kCIInputImageKey)
        filter.setValue(CIVector(x: 0, y: 0, z: 1, w: 0), forKey: "inputRVector")
        filter.setValue(CIVector(x: 0, y: 1, z: 0, w: 0), forKey: "inputGVector")
        filter.setValue(CIVector(x: 1, y: 0, z: 0, w: 0), forKey: "inputBVector")
        context.render(filter.outputImage!, to: outBuffer)
    }

    /// Effects chained the way export code does, with the typed builders.
    func graded(_ pb: CVPixelBuffer) -> CIImage? {
        let sepia = CIFilter.sepiaTone()
        sepia.inputImage = CIImage(cvPixelBuffer: pb)
        sepia.intensity = 0.8
        let controls = CIFilter.colorControls()
        controls.inputImage = sepia.outputImage
        controls.saturation = 1.1
        controls.contrast = 1.05
        let blur = CIFilter.gaussianBlur()
        blur.inputImage = controls.outputImage?.clampedToExtent()
        blur.radius = 1.5
        return blur.outputImage?.cropped(to: CIImage(cvPixelBuffer: pb).extent)
    }
}
