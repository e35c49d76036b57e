import AVFoundation
import Testing

/// The modules are Apple's: a file written for Apple's platforms, with `import AVFoundation`
/// only, compiles here unchanged (AppleCorpus/ImportsOnly.swift), and CoreMedia and CoreVideo
/// come with it.
@Suite struct ModulesTests {
    @Test func appleCodeCompilesWithItsImportUnchanged() {
        let names = appleEverydayNames()
        #expect(names == ["0.1", "2.0", "never-written.mp4", "true", "256", "soun", "true", "true"])
    }
}
