// What went wrong in a profile, and where: the file, the path inside it
// ("endpoints[1].clusters.LevelControl.currentLevel") and what was expected.

/// A location inside a profile document, built from mapping keys and list indices.
public struct ProfilePath: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public enum Component: Hashable, Sendable {
        /// A mapping key: rendered ".key" (or `["odd key"]` when not a plain identifier).
        case key(String)
        /// A list index, or an endpoint number used as a key: rendered "[n]".
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component] = []) { self.components = components }

    /// Parses the rendered form back ("endpoints[1].clusters.OnOff"); for tests and tools.
    public init(stringLiteral text: String) {
        var parts: [Component] = []
        var current = ""
        var chars = Substring(text)
        func flush() {
            if !current.isEmpty { parts.append(.key(current)); current = "" }
        }
        while let c = chars.first {
            chars = chars.dropFirst()
            switch c {
            case ".":
                flush()
            case "[":
                flush()
                let inner = chars.prefix { $0 != "]" }
                chars = chars.dropFirst(inner.count + 1)
                if inner.hasPrefix("\""), inner.hasSuffix("\""), inner.count >= 2 {
                    parts.append(.key(String(inner.dropFirst().dropLast())))
                } else if let n = Int(inner) {
                    parts.append(.index(n))
                } else {
                    parts.append(.key(String(inner)))
                }
            default:
                current.append(c)
            }
        }
        flush()
        components = parts
    }

    public static let root = ProfilePath()

    public func key(_ name: String) -> ProfilePath { ProfilePath(components + [.key(name)]) }
    public func index(_ i: Int) -> ProfilePath { ProfilePath(components + [.index(i)]) }
    public func appending(_ other: ProfilePath) -> ProfilePath { ProfilePath(components + other.components) }

    public var isRoot: Bool { components.isEmpty }

    public var description: String {
        if components.isEmpty { return "<root>" }
        var out = ""
        for component in components {
            switch component {
            case .index(let i):
                out += "[\(i)]"
            case .key(let k):
                if Self.isPlainKey(k) {
                    out += out.isEmpty ? k : "." + k
                } else {
                    out += "[\"" + k + "\"]"
                }
            }
        }
        return out
    }

    private static func isPlainKey(_ k: String) -> Bool {
        guard let first = k.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else {
            return false
        }
        return k.unicodeScalars.allSatisfy {
            $0 == "_" || $0 == "-" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }
}

/// One problem found in a profile file.
public struct ProfileDiagnostic: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file as the user named it (or as a home's reference resolved it).
    public var file: String
    /// Where in the document; `.root` for whole-document problems.
    public var path: ProfilePath
    /// What was expected and what was found.
    public var message: String
    /// 1-based position in the file, when known.
    public var line: Int?
    public var column: Int?

    public init(file: String, path: ProfilePath, message: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.path = path
        self.message = message
        self.line = line
        self.column = column
    }

    /// `FILE: PATH: message`. YAML syntax errors, which have no path, show the position
    /// instead; whole-file problems ("file not found") show just the file.
    public var description: String {
        if path.isRoot {
            if let line { return "\(file): line \(line), column \(column ?? 1): \(message)" }
            return "\(file): \(message)"
        }
        return "\(file): \(path): \(message)"
    }
}

/// Every problem found while loading a profile (never just the first).
public struct ProfileErrors: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ProfileDiagnostic]
    public init(_ diagnostics: [ProfileDiagnostic]) { self.diagnostics = diagnostics }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Where a value came from: the file, the path inside it and the line.
struct Origin: Hashable, Sendable {
    var file: String
    var path: ProfilePath
    var mark: SourceMark?
}

/// A value together with where it was written, so a later check (a range that depends
/// on another attribute, a home's override) can still name the right file and path.
struct Located<Value> {
    var value: Value
    var origin: Origin
}

extension Located: Sendable where Value: Sendable {}

/// Collects diagnostics while documents are walked; one sink may cover several files
/// (a home and the device profiles it references).
final class DiagnosticSink {
    /// A hostile file could produce millions of errors; past this many the rest are summarised.
    static let limit = 500

    private(set) var diagnostics: [ProfileDiagnostic] = []
    private var seen: Set<ProfileDiagnostic> = []
    private var dropped = 0

    init() {}

    func error(_ origin: Origin, _ message: String) {
        add(
            ProfileDiagnostic(
                file: origin.file, path: origin.path, message: message,
                line: origin.mark?.line, column: origin.mark?.column))
    }

    func error(file: String, path: ProfilePath, _ message: String, at mark: SourceMark? = nil) {
        add(ProfileDiagnostic(file: file, path: path, message: message, line: mark?.line, column: mark?.column))
    }

    func append(_ others: [ProfileDiagnostic]) {
        for d in others { add(d) }
    }

    private func add(_ d: ProfileDiagnostic) {
        // The same problem reached twice (an alias used in two places) is reported once.
        guard seen.insert(d).inserted else { return }
        if diagnostics.count < Self.limit {
            diagnostics.append(d)
        } else {
            dropped += 1
        }
    }

    var hasErrors: Bool { !diagnostics.isEmpty }
    var count: Int { diagnostics.count + dropped }

    /// The diagnostics in reading order (files in the order first reported, then by line),
    /// with a closing note when some were left out.
    var all: [ProfileDiagnostic] {
        var fileOrder: [String: Int] = [:]
        for d in diagnostics where fileOrder[d.file] == nil { fileOrder[d.file] = fileOrder.count }
        let sorted = diagnostics.enumerated().sorted { a, b in
            let fa = fileOrder[a.element.file] ?? 0, fb = fileOrder[b.element.file] ?? 0
            if fa != fb { return fa < fb }
            let la = a.element.line ?? Int.max, lb = b.element.line ?? Int.max
            if la != lb { return la < lb }
            let ca = a.element.column ?? 0, cb = b.element.column ?? 0
            if ca != cb { return ca < cb }
            return a.offset < b.offset
        }.map(\.element)
        guard dropped > 0, let last = sorted.last else { return sorted }
        return sorted + [ProfileDiagnostic(file: last.file, path: .root, message: "\(dropped) more errors not shown")]
    }
}
