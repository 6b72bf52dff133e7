// Where each cluster and device type of matter-model.json lies in the file, so a model built
// on first use decodes only the rows it builds (issue #43: decoding all 446 KB of rows was a
// fifth of a debug `matter-sim run`'s start-up, 28 processes at once after a power cut).
import Foundation

/// The file's heads: what a model built on first use reads at load.
struct ModelFileHeads: Decodable {
    struct Row: Decodable {
        var id: String
        var name: String
    }
    var specVersion: String?
    var globalAttributes: [AttributeRow]
    var clusters: [Row]
    var deviceTypes: [Row]
}

enum ModelFileSlices {
    /// The byte ranges of the object elements of the top-level object's arrays named `keys`,
    /// by key; nil when the bytes are not balanced JSON. Strings are skipped whole (escapes
    /// included), so brackets inside them do not count. An element that is not an object is
    /// left out: the caller compares the counts with the decoded heads.
    static func elements(of keys: Set<String>, in data: Data) -> [String: [Range<Int>]]? {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> [String: [Range<Int>]]? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
            let openObject = UInt8(ascii: "{"), closeObject = UInt8(ascii: "}"), openArray = UInt8(ascii: "["), closeArray = UInt8(ascii: "]")
            var found: [String: [Range<Int>]] = [:]
            // Depth 1: the top-level object; 2: one of its arrays; 3: an element of that array.
            var depth = 0
            var key: String?
            var array: String?
            var elementStart: Int?
            var i = 0
            while i < bytes.count {
                switch bytes[i] {
                case quote:
                    let start = i + 1
                    i += 1
                    while i < bytes.count, bytes[i] != quote { i += bytes[i] == backslash ? 2 : 1 }
                    guard i < bytes.count else { return nil }
                    if depth == 1 { key = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self) }
                case openObject, openArray:
                    depth += 1
                    if depth == 2, bytes[i] == openArray, let key, keys.contains(key) {
                        array = key
                        found[key] = []
                    } else if depth == 3, array != nil, bytes[i] == openObject {
                        elementStart = i
                    }
                case closeObject, closeArray:
                    if depth == 3, let array, let start = elementStart {
                        found[array, default: []].append(start..<(i + 1))
                        elementStart = nil
                    } else if depth == 2 {
                        array = nil
                    }
                    depth -= 1
                    guard depth >= 0 else { return nil }
                default:
                    break
                }
                i += 1
            }
            return depth == 0 ? found : nil
        }
    }
}
