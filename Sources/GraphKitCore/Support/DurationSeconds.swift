extension Duration {
    /// The duration in seconds, as a `Double` (wall-clock spans: a gap, a run's length).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
