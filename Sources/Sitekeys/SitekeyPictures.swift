import Foundation
package import HTTP

/// The sitekey pictures, bundled once and served by both trifactord and the
/// bank at `/sitekeys/NAME.svg`. Only the names of `Sitekey.pictures` are
/// ever opened: anything else is a 404, so no path reaches the file system.
package enum SitekeyPictures {
    /// The route's path pattern (`:name` is `NAME.svg`).
    package static let route = "/sitekeys/:name"

    /// The address of a picture's SVG.
    package static func path(_ picture: String) -> String { "/sitekeys/\(picture).svg" }

    /// The SVG of `picture`, when it is one of `Sitekey.pictures`.
    package static func svg(_ picture: String) -> [UInt8]? {
        guard Sitekey.pictures.contains(picture),
            let url = Bundle.module.url(forResource: picture, withExtension: "svg", subdirectory: "sitekeys"),
            let data = try? Data(contentsOf: url)
        else { return nil }
        return Array(data)
    }

    /// `GET /sitekeys/:name`: one of the pictures, cached an hour; 404 for any other name.
    package static func serve(_ request: Request) -> Response {
        let name = request.parameters["name"] ?? ""
        guard name.hasSuffix(".svg"), let body = svg(String(name.dropLast(4))) else { return Response(status: 404) }
        return Response(
            status: 200, headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "max-age=3600")], body: body)
    }
}
