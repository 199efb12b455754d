import Foundation

/// Whether a client's registered JWK Set can verify its assertions.
enum JWKSCheck {
    /// Why `text` is not a usable JWK Set; nil when it is.
    static func refusal(_ text: String) -> String? {
        guard text.utf8.count <= 64 * 1024,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let keys = object["keys"] as? [[String: Any]], !keys.isEmpty, keys.count <= 10
        else { return "must be a JWK Set: {\"keys\": [...]} with 1 to 10 keys, at most 64 KiB" }
        return nil
    }
}
