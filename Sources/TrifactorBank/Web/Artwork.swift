/// The bank's own pictures, served as SVG files (/static/logo.svg,
/// /static/icons/NAME.svg), never inline in a page: the logo (three
/// interlocking bars for the three factors, on the bank's blue) and the
/// navigation's icons, which the stylesheet uses as masks.
enum Artwork {
    static let logo = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" role="img" aria-label="Trifactor Bank">\
        <rect width="64" height="64" rx="14" fill="#0b4a6f"/>\
        <path d="M14 44 L32 14 L50 44 Z" fill="none" stroke="#fff" stroke-width="5" stroke-linejoin="round"/>\
        <circle cx="32" cy="14" r="6" fill="#5fd3c6"/><circle cx="14" cy="44" r="6" fill="#fff"/><circle cx="50" cy="44" r="6" fill="#ffd166"/>\
        <rect x="18" y="50" width="28" height="4" rx="2" fill="#5fd3c6"/></svg>
        """

    /// The navigation's icons by name: 24×24, one colour (the stylesheet paints them).
    static let icons: [String: String] = [
        "accounts": svg(
            ##"<rect x="2" y="5" width="20" height="14" rx="3" fill="none" stroke="#000" stroke-width="2"/><path d="M2 10h20" stroke="#000" stroke-width="2"/><rect x="5" y="13" width="6" height="3" rx="1"/>"##
        ),
        "transfer": svg(
            ##"<path d="M4 8h13M13 4l4 4-4 4M20 16H7M11 12l-4 4 4 4" fill="none" stroke="#000" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"/>"##
        ),
        "settings": svg(
            ##"<path d="M4 6h10M18 6h2M4 12h4M12 12h8M4 18h12" stroke="#000" stroke-width="2" stroke-linecap="round"/><circle cx="16" cy="6" r="2" fill="none" stroke="#000" stroke-width="2"/><circle cx="10" cy="12" r="2" fill="none" stroke="#000" stroke-width="2"/><circle cx="18" cy="18" r="2" fill="none" stroke="#000" stroke-width="2"/>"##
        ),
    ]

    private static func svg(_ body: String) -> String {
        #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">"# + body + "</svg>"
    }
}
