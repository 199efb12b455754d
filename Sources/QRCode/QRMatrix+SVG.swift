extension QRMatrix {
    /// The code as SVG for a web page, where an authenticator app scans it: a white square with a quiet zone of
    /// `margin` modules and one black path of the dark modules, a unit square each, drawn with crisp edges.
    package func svg(margin: Int = 4) -> String {
        let side = size + 2 * margin
        var path = ""
        for y in 0..<size {
            for x in 0..<size where isDark(x: x, y: y) {
                path += "M\(x + margin) \(y + margin)h1v1h-1z"
            }
        }
        return
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" shape-rendering=\"crispEdges\">"
            + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path d=\"\(path)\" fill=\"#000\"/></svg>"
    }
}
