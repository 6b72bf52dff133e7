// Name forms: the spec's UpperCamel names ("CurrentLevel", "NOCs", "ACL") and the
// lowerCamel forms profiles and controller code use ("currentLevel", "nocs", "acl").

enum Naming {
    /// "CurrentLevel" → "currentLevel"; "ACL" → "acl"; "NOCs" → "nocs";
    /// "UTCTime" → "utcTime"; "TCAcceptedVersion" → "tcAcceptedVersion".
    static func lowerCamel(_ name: String) -> String {
        // "IPv4Addresses": "IPv4"/"IPv6" is one word.
        if name.hasPrefix("IPv") { return "ipv" + name.dropFirst(3) }
        let chars = Array(name)
        var run = 0
        while run < chars.count, chars[run].isUppercase { run += 1 }
        if run == 0 { return name }
        if run == 1 || run == chars.count {  // "Foo" or "ACL"
            return String(chars[0..<run]).lowercased() + String(chars[run...])
        }
        let rest = String(chars[run...])
        if rest == "s" { return name.lowercased() }  // plural acronym: "NOCs"
        if chars[run].isLowercase {
            // "UTCTime": the last capital of the run starts the next word.
            return String(chars[0..<(run - 1)]).lowercased() + String(chars[(run - 1)...])
        }
        // Run followed by a digit or underscore: lowercase the whole run.
        return String(chars[0..<run]).lowercased() + rest
    }

    /// True when `query` names `name`: exact, lowerCamel form, or the first letter in either case.
    static func matches(_ name: String, _ query: String) -> Bool {
        if name == query { return true }
        // Both other forms only change the case of ASCII letters, which keeps the length: most
        // names a lookup passes fail here, before lowerCamel's allocations (a home's profiles
        // look up hundreds of names in clusters of dozens).
        if name.utf8.count != query.utf8.count, name.utf8.allSatisfy({ $0 < 128 }), query.utf8.allSatisfy({ $0 < 128 }) {
            return false
        }
        if let q = query.first, let n = name.first, q.lowercased() == n.lowercased(),
            query.dropFirst() == name.dropFirst()
        {
            return true
        }
        return lowerCamel(name) == query
    }
}
