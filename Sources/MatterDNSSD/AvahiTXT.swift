import CAvahi

/// Conversions between `DNSSDTXTRecord` and Avahi's `AvahiStringList` (a singly linked list
/// that Avahi builds by prepending).
enum AvahiTXT {
    /// A new list holding `txt`'s strings in order; free it with `avahi_string_list_free`.
    /// `nil` for an empty record (Avahi then publishes the empty TXT record RFC 6763 §6.1
    /// asks for) or when out of memory (`failed` is set).
    static func make(_ txt: DNSSDTXTRecord, failed: inout Bool) -> UnsafeMutablePointer<AvahiStringList>? {
        failed = false
        var list: UnsafeMutablePointer<AvahiStringList>? = nil
        // Prepending in reverse keeps the record's order on the wire.
        for string in txt.encoded().reversed() {
            let next = string.withUnsafeBufferPointer { buffer in
                avahi_string_list_add_arbitrary(list, buffer.baseAddress, buffer.count)
            }
            guard let next else {
                avahi_string_list_free(list)
                failed = true
                return nil
            }
            list = next
        }
        return list
    }

    /// The strings of a received list, in list order.
    static func strings(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var node = list
        // A TXT record holds at most 64 KiB, so a few thousand strings at most; the bound
        // only guards against a corrupted list.
        var remaining = 65_536
        while let current = node, remaining > 0 {
            let size = avahi_string_list_get_size(current)
            if let text = avahi_string_list_get_text(current), size > 0 {
                result.append(Array(UnsafeBufferPointer(start: text, count: size)))
            } else {
                result.append([])
            }
            node = avahi_string_list_get_next(current)
            remaining -= 1
        }
        return result
    }
}
