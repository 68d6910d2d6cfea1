extension Duration {
    /// The duration in whole milliseconds (epoch-millisecond arithmetic and NIO deadlines).
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
