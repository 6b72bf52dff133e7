import CQREncode

/// A QR code as SVG, encoded by libqrencode (the symbol, its mask and error correction are
/// the library's; only the drawing is here).
public enum QRCodeSVG {
    /// The SVG of `text` (an `MT:` onboarding payload), or nil when libqrencode refuses it.
    /// Error correction M, as the Matter QR codes on product labels use; a 4-module quiet zone.
    public static func svg(_ text: String) -> String? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard let data = code.pointee.data else { return nil }
        let quiet = 4
        var path = ""
        for y in 0..<width {
            for x in 0..<width where data[y * width + x] & 1 == 1 {
                path += "M\(x + quiet) \(y + quiet)h1v1h-1z"
            }
        }
        let size = width + 2 * quiet
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(size) \(size)" width="\(size * 4)" height="\(size * 4)" \
            shape-rendering="crispEdges"><rect width="\(size)" height="\(size)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
            """
    }
}
