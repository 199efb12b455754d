extension QRMatrix {
    /// The code as text for a terminal: two rows of modules a line in UTF-8 half blocks, with a quiet zone of `margin`
    /// modules. Drawn light on dark, for dark terminals: a dark module is blank and a light one a block.
    package func halfBlocks(margin: Int = 2) -> String {
        var lines: [String] = []
        var y = -margin
        while y < size + margin {
            var line = ""
            for x in -margin..<(size + margin) {
                switch (isDark(x: x, y: y), isDark(x: x, y: y + 1)) {
                case (false, false): line += "█"
                case (false, true): line += "▀"
                case (true, false): line += "▄"
                case (true, true): line += " "
                }
            }
            lines.append(line)
            y += 2
        }
        return lines.joined(separator: "\n")
    }
}
