// Access and quality notation of the Matter spec (Core spec 7.6 "Access", 7.7 "Other Qualities").
// The model file keeps the spec's own letters ("RW VM T", "X N S P") so every row can be
// checked against the spec tables by eye; this file turns them into typed values.

/// Access privilege levels, ordered from least to most (Core spec 6.6.2.1).
public enum Privilege: UInt8, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    case view = 1, proxyView = 2, operate = 3, manage = 4, administer = 5

    public static func < (a: Privilege, b: Privilege) -> Bool { a.rawValue < b.rawValue }

    /// The spec's one-letter code: V, P, O, M, A.
    public var letter: Character {
        switch self {
        case .view: "V"
        case .proxyView: "P"
        case .operate: "O"
        case .manage: "M"
        case .administer: "A"
        }
    }

    public init?(letter: Character) {
        switch letter {
        case "V": self = .view
        case "P": self = .proxyView
        case "O": self = .operate
        case "M": self = .manage
        case "A": self = .administer
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .view: "view"
        case .proxyView: "proxyView"
        case .operate: "operate"
        case .manage: "manage"
        case .administer: "administer"
        }
    }
}

/// Attribute qualities (Core spec 7.7), one flag per letter of the spec's "Quality" column.
/// Nullability ("X") is not a flag here: it lives on `AttributeDefinition.nullable`.
public struct AttributeQuality: OptionSet, Sendable, Hashable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// N: persisted across restarts.
    public static let nonVolatile = AttributeQuality(rawValue: 1 << 0)
    /// F: fixed for the life of the firmware.
    public static let fixed = AttributeQuality(rawValue: 1 << 1)
    /// S: part of a scene.
    public static let scene = AttributeQuality(rawValue: 1 << 2)
    /// C: changes are omitted from reports (too frequent).
    public static let changesOmitted = AttributeQuality(rawValue: 1 << 3)
    /// P: reportable (legacy Zigbee letter, still in the tables).
    public static let reportable = AttributeQuality(rawValue: 1 << 4)
    /// Q: quieter reporting (reports are rate-limited).
    public static let quieterReporting = AttributeQuality(rawValue: 1 << 5)
    /// A: atomic write support.
    public static let atomic = AttributeQuality(rawValue: 1 << 6)
    /// I: singleton (one instance per node).
    public static let singleton = AttributeQuality(rawValue: 1 << 7)
    /// K: diagnostics data.
    public static let diagnostics = AttributeQuality(rawValue: 1 << 8)
    /// L: large message quality.
    public static let largeMessage = AttributeQuality(rawValue: 1 << 9)

    static let letters: [(Character, AttributeQuality)] = [
        ("N", .nonVolatile), ("F", .fixed), ("S", .scene), ("C", .changesOmitted),
        ("P", .reportable), ("Q", .quieterReporting), ("A", .atomic), ("I", .singleton),
        ("K", .diagnostics), ("L", .largeMessage),
    ]

    /// The spec's letters for this set, e.g. "N S".
    public var letters: String {
        Self.letters.filter { contains($0.1) }.map { String($0.0) }.joined(separator: " ")
    }
}

/// The parsed form of a spec access string such as "RW VM", "R F A", "RW VA T", "O T F".
struct AccessSpec: Equatable {
    var readable = false
    var writable = false
    var readPrivilege: Privilege?
    var writePrivilege: Privilege?
    /// A single privilege for commands/events ("O", "A").
    var privilege: Privilege?
    var fabricScoped = false
    var fabricSensitive = false
    var timed = false

    /// Parses access tokens. Tokens: R / W / RW / R[W] (operations), privilege letters
    /// (one letter = read or invoke privilege, two letters = read then write privilege),
    /// F (fabric scoped), S (fabric sensitive), T (timed).
    static func parse(_ text: String) -> AccessSpec? {
        var spec = AccessSpec()
        for token in text.split(whereSeparator: { $0 == " " || $0 == "," }) {
            switch token {
            case "R": spec.readable = true
            case "W": spec.writable = true
            case "RW", "R[W]": spec.readable = true; spec.writable = true
            case "F": spec.fabricScoped = true
            case "S": spec.fabricSensitive = true
            case "T": spec.timed = true
            default:
                let privileges = token.compactMap(Privilege.init(letter:))
                guard privileges.count == token.count, (1...2).contains(privileges.count) else { return nil }
                if privileges.count == 1 {
                    spec.privilege = privileges[0]
                } else {
                    spec.readPrivilege = privileges[0]
                    spec.writePrivilege = privileges[1]
                }
            }
        }
        return spec
    }
}
