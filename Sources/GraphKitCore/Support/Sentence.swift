extension String {
    /// The text with its first letter lowercased, to go inside a sentence ("No space left on
    /// device" → "no space left on device"); unchanged when it starts with an acronym ("EOF").
    package var lowercasedFirst: String {
        guard let first, first.isUppercase, !(dropFirst().first?.isUppercase ?? false) else { return self }
        return first.lowercased() + dropFirst()
    }
}
