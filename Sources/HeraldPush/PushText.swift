/// Shortening of push texts that must fit a provider's size limit.
enum PushText {
    /// `text` cut to at most `bytes` UTF-8 bytes on a character boundary, ending in "…" when
    /// cut; empty when not even one character and the ellipsis fit. Never splits a character,
    /// so the result is always valid UTF-8 (and valid JSON once encoded).
    static func shorten(_ text: String, toBytes bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        let ellipsis = "…"
        let budget = bytes - ellipsis.utf8.count
        guard budget > 0 else { return "" }
        var kept = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > budget { break }
            kept.append(character)
            used += size
        }
        return kept.isEmpty ? "" : kept + ellipsis
    }
}
