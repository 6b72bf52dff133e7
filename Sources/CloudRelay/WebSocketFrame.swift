/// The WebSocket frame header's bits and opcodes the relay writes and checks (RFC 6455 5.2).
public enum WebSocketFrame {
    /// First octet: FIN (a message's last frame) over the opcode.
    public static let fin: UInt8 = 0x80
    public static let opcodeMask: UInt8 = 0x0F
    /// Opcodes with this bit are control frames (close, ping, pong).
    public static let control: UInt8 = 0x08
    public static let binary: UInt8 = 0x2
    public static let close: UInt8 = 0x8
    /// Second octet: MASK over the payload length (7 bits; 126 or 127 announce a longer field).
    public static let masked: UInt8 = 0x80
    public static let lengthMask: UInt8 = 0x7F
}
