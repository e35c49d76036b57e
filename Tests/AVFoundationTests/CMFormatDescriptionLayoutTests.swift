import AVFoundation
import Testing

/// CMAudioFormatDescriptionGetChannelLayout: mono and stereo descriptions have CoreAudio's
/// layouts; more channels, whose speakers GraphKit does not know, and video have none.
@Suite struct CMFormatDescriptionLayoutTests {
    static func pcm(channels: UInt32) throws -> CMAudioFormatDescription {
        var asbd = AudioStreamBasicDescription(mSampleRate: 48_000, mFormatID: kAudioFormatLinearPCM,
                                               mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                               mBytesPerPacket: 2 * channels, mFramesPerPacket: 1, mBytesPerFrame: 2 * channels,
                                               mChannelsPerFrame: channels, mBitsPerChannel: 16, mReserved: 0)
        var description: CMAudioFormatDescription?
        #expect(CMAudioFormatDescriptionCreate(allocator: nil, asbd: &asbd, layoutSize: 0, layout: nil, magicCookieSize: 0,
                                               magicCookie: nil, extensions: nil, formatDescriptionOut: &description) == noErr)
        return try #require(description)
    }

    @Test func monoAndStereoHaveTheirLayouts() throws {
        for (channels, tag) in [(UInt32(1), kAudioChannelLayoutTag_Mono), (2, kAudioChannelLayoutTag_Stereo)] {
            let description = try Self.pcm(channels: channels)
            var size = -1
            let layout = try #require(CMAudioFormatDescriptionGetChannelLayout(description, sizeOut: &size)?.pointee)
            #expect(layout.mChannelLayoutTag == tag && layout.mNumberChannelDescriptions == 0 && layout.mChannelBitmap.isEmpty)
            #expect(AudioChannelLayoutTag_GetNumberOfChannels(layout.mChannelLayoutTag) == channels)
            #expect(size == MemoryLayout<AudioChannelLayout>.size)
            #expect(CMAudioFormatDescriptionGetChannelLayout(description, sizeOut: nil) != nil)
        }
        var size = -1
        #expect(CMAudioFormatDescriptionGetChannelLayout(try Self.pcm(channels: 6), sizeOut: &size) == nil && size == 0)
    }
}
