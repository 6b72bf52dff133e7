/// Opcodes of the Secure Channel protocol (Matter Core spec 4.11.1, Table 18).
public enum SecureChannelOpcode: UInt8, Sendable, Hashable {
    case messageCounterSyncRequest = 0x00
    case messageCounterSyncResponse = 0x01
    case standaloneAck = 0x10
    case pbkdfParamRequest = 0x20
    case pbkdfParamResponse = 0x21
    case pake1 = 0x22
    case pake2 = 0x23
    case pake3 = 0x24
    case sigma1 = 0x30
    case sigma2 = 0x31
    case sigma3 = 0x32
    case sigma2Resume = 0x33
    case statusReport = 0x40
    case icdCheckIn = 0x50
}
