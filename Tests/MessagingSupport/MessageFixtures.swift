package import Messaging

/// The message catalog as the tests read it, and the languages it must hold.
package enum MessageFixtures {
    /// The catalog bundled with Messaging.
    package static let catalog = MessageCatalog.bundled
    /// Every language the catalog must speak, English first.
    package static let languages = [
        "en", "de", "fr", "es", "it", "pt", "nl", "tr", "pl", "ru", "ar", "fa", "hi", "zh", "ja",
    ]
}
