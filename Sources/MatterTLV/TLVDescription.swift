// Text forms for logs. `description` uses the notation of the spec's
// Appendix A encoding examples: `{0 = 42, 1 = -17}`, `[1, 2]` for arrays,
// `[[1, 0 = 42]]` for lists, `42U` for unsigned integers, `Matter::1` for
// common-profile tags, `65521::57069:1` for fully qualified ones; an `f` marks
// single-precision floats. `debugDescription` is the same tree spread over
// indented lines.

extension TLVTag: CustomStringConvertible {
    public var description: String {
        switch self {
        case .anonymous: "anonymous"
        case .context(let n): "\(n)"
        case .commonProfile(let n): "Matter::\(n)"
        case .implicitProfile(let n): "implicit::\(n)"
        case .fullyQualified(let v, let p, let n): "\(v)::\(p):\(n)"
        }
    }
}

extension TLVValue: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        var out = ""
        TLVTextFormat.append(self, to: &out, indent: nil)
        return out
    }

    public var debugDescription: String {
        var out = ""
        TLVTextFormat.append(self, to: &out, indent: 0)
        return out
    }
}

extension TLVElement: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        var out = ""
        TLVTextFormat.append(self, to: &out, indent: nil)
        return out
    }

    public var debugDescription: String {
        var out = ""
        TLVTextFormat.append(self, to: &out, indent: 0)
        return out
    }
}

enum TLVTextFormat {
    /// `indent` nil: one line; otherwise members go on lines of their own.
    static func append(_ element: TLVElement, to out: inout String, indent: Int?) {
        if element.tag != .anonymous {
            out += element.tag.description
            out += " = "
        }
        append(element.value, to: &out, indent: indent)
    }

    static func append(_ value: TLVValue, to out: inout String, indent: Int?) {
        switch value {
        case .signed(let v): out += "\(v)"
        case .unsigned(let v): out += "\(v)U"
        case .bool(let v): out += v ? "true" : "false"
        case .float(let v): out += "\(v)f"
        case .double(let v): out += "\(v)"
        case .utf8(let v): out += v.debugDescription
        case .bytes(let v): appendHex(v, to: &out)
        case .null: out += "null"
        case .structure(let m): appendMembers(m, open: "{", close: "}", to: &out, indent: indent)
        case .array(let m): appendMembers(m, open: "[", close: "]", to: &out, indent: indent)
        case .list(let m): appendMembers(m, open: "[[", close: "]]", to: &out, indent: indent)
        }
    }

    private static func appendMembers(
        _ members: [TLVElement], open: String, close: String, to out: inout String, indent: Int?
    ) {
        out += open
        guard !members.isEmpty else {
            out += close
            return
        }
        for (i, member) in members.enumerated() {
            if let indent {
                out += i == 0 ? "\n" : ",\n"
                out += String(repeating: "  ", count: indent + 1)
                append(member, to: &out, indent: indent + 1)
            } else {
                out += i == 0 ? "" : ", "
                append(member, to: &out, indent: nil)
            }
        }
        if let indent {
            out += "\n" + String(repeating: "  ", count: indent)
        }
        out += close
    }

    private static func appendHex(_ octets: [UInt8], to out: inout String) {
        let digits: [Character] = Array("0123456789abcdef")
        out += "hex:"
        for octet in octets {
            out.append(digits[Int(octet >> 4)])
            out.append(digits[Int(octet & 0x0F)])
        }
    }
}
