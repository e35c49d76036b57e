import GraphKitCore

/// iOS's application audio session, accepted so code written for it compiles and runs: Linux has
/// no per-application audio policy, so categories, modes and activation are kept and have no
/// effect; record permission is granted.
open class AVAudioSession: NSObject, @unchecked Sendable {
    // Unchecked: its settings are under `state`'s lock; NSObject's conformance cannot be checked.

    public struct Category: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let ambient = Category(rawValue: "AVAudioSessionCategoryAmbient")
        public static let soloAmbient = Category(rawValue: "AVAudioSessionCategorySoloAmbient")
        public static let playback = Category(rawValue: "AVAudioSessionCategoryPlayback")
        public static let record = Category(rawValue: "AVAudioSessionCategoryRecord")
        public static let playAndRecord = Category(rawValue: "AVAudioSessionCategoryPlayAndRecord")
        public static let multiRoute = Category(rawValue: "AVAudioSessionCategoryMultiRoute")
    }

    public struct Mode: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let `default` = Mode(rawValue: "AVAudioSessionModeDefault")
        public static let videoRecording = Mode(rawValue: "AVAudioSessionModeVideoRecording")
        public static let measurement = Mode(rawValue: "AVAudioSessionModeMeasurement")
        public static let voiceChat = Mode(rawValue: "AVAudioSessionModeVoiceChat")
        public static let videoChat = Mode(rawValue: "AVAudioSessionModeVideoChat")
        public static let moviePlayback = Mode(rawValue: "AVAudioSessionModeMoviePlayback")
        public static let spokenAudio = Mode(rawValue: "AVAudioSessionModeSpokenAudio")
        public static let gameChat = Mode(rawValue: "AVAudioSessionModeGameChat")
    }

    public struct CategoryOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let mixWithOthers = CategoryOptions(rawValue: 0x1)
        public static let duckOthers = CategoryOptions(rawValue: 0x2)
        public static let allowBluetooth = CategoryOptions(rawValue: 0x4)
        public static let defaultToSpeaker = CategoryOptions(rawValue: 0x8)
        public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 0x11)
        public static let allowBluetoothA2DP = CategoryOptions(rawValue: 0x20)
        public static let allowAirPlay = CategoryOptions(rawValue: 0x40)
    }

    public struct SetActiveOptions: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }

    public enum RecordPermission: UInt, Sendable {
        case undetermined = 0x756E_6474, denied = 0x6465_6E79, granted = 0x6772_6E74
    }

    struct State {
        var category = Category.soloAmbient
        var mode = Mode.default
        var options: CategoryOptions = []
        var active = false
        var preferredSampleRate = 0.0
        var preferredBufferDuration = 0.0
    }
    private let state = Guarded(State())

    private static let shared = AVAudioSession()
    open class func sharedInstance() -> AVAudioSession { shared }

    open var category: Category { state.withLock { $0.category } }
    open var mode: Mode { state.withLock { $0.mode } }
    open var categoryOptions: CategoryOptions { state.withLock { $0.options } }
    open var isOtherAudioPlaying: Bool { false }
    open var sampleRate: Double { state.withLock { $0.preferredSampleRate > 0 ? $0.preferredSampleRate : 48_000 } }
    open var preferredSampleRate: Double { state.withLock { $0.preferredSampleRate } }
    open var ioBufferDuration: Double { state.withLock { $0.preferredBufferDuration > 0 ? $0.preferredBufferDuration : 0.02 } }
    open var preferredIOBufferDuration: Double { state.withLock { $0.preferredBufferDuration } }
    open var recordPermission: RecordPermission { .granted }
    open var inputNumberOfChannels: Int { 1 }
    open var outputNumberOfChannels: Int { 2 }

    open func setCategory(_ category: Category) throws { state.withLock { $0.category = category } }
    open func setCategory(_ category: Category, options: CategoryOptions = []) throws {
        state.withLock { $0.category = category; $0.options = options }
    }
    open func setCategory(_ category: Category, mode: Mode, options: CategoryOptions = []) throws {
        state.withLock { $0.category = category; $0.mode = mode; $0.options = options }
    }
    open func setMode(_ mode: Mode) throws { state.withLock { $0.mode = mode } }
    open func setActive(_ active: Bool, options: SetActiveOptions = []) throws { state.withLock { $0.active = active } }
    open func setPreferredSampleRate(_ sampleRate: Double) throws { state.withLock { $0.preferredSampleRate = sampleRate } }
    open func setPreferredIOBufferDuration(_ duration: TimeInterval) throws { state.withLock { $0.preferredBufferDuration = duration } }
    open func requestRecordPermission(_ response: @escaping @Sendable (Bool) -> Void) { DispatchQueue.global().async { response(true) } }
}
