import HeraldCore

extension JSONWriter {
    /// Writes a Socket.IO value. With `placeholders`, each binary value becomes a placeholder
    /// `{"_placeholder":true,"num":N}` and its bytes are appended to `attachments` (N = its index);
    /// otherwise binary is written the way `JSON.stringify` writes a Node.js Buffer.
    mutating func write(_ value: SocketValue, placeholders: Bool, attachments: inout [[UInt8]]) {
        switch value {
        case .null: ascii("null")
        case .bool(let flag): flag ? ascii("true") : ascii("false")
        case .number(let number): write(number: number)
        case .string(let text): write(string: text)
        case .binary(let data):
            if placeholders {
                ascii("{\"_placeholder\":true,\"num\":")
                write(integer: Int64(attachments.count))
                bytes.append(UInt8(ascii: "}"))
                attachments.append(data)
            } else {
                ascii("{\"type\":\"Buffer\",\"data\":[")
                for (index, byte) in data.enumerated() {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    write(integer: Int64(byte))
                }
                ascii("]}")
            }
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element, placeholders: placeholders, attachments: &attachments)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, entry) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: entry.key)
                bytes.append(UInt8(ascii: ":"))
                write(entry.value, placeholders: placeholders, attachments: &attachments)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

}
