#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A minimal blocking Redis client over one TCP socket (RESP2): the least client overhead
/// possible, so Redis's figures are Redis's and not a client library's.
final class RESPConnection {
    enum Value {
        case simple(String)
        case error(String)
        case integer(Int)
        case bulk([UInt8]?)
        case array([Value]?)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 20)
    private var start = 0
    private var end = 0

    init(host: String, port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw Failure(description: "connect to \(host):\(port) failed (errno \(errno))")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// RESP encoding of one command.
    static func encode(_ arguments: [String]) -> [UInt8] {
        var out = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            let bytes = Array(argument.utf8)
            out += Array("$\(bytes.count)\r\n".utf8)
            out += bytes
            out += [13, 10]
        }
        return out
    }

    func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "write failed (errno \(errno))")
                }
                offset += n
            }
        }
    }

    func command(_ arguments: [String]) throws -> Value {
        try send(Self.encode(arguments))
        return try readValue()
    }

    func readValue() throws -> Value {
        let type = try readByte()
        switch type {
        case UInt8(ascii: "+"): return .simple(try readLineString())
        case UInt8(ascii: "-"): return .error(try readLineString())
        case UInt8(ascii: ":"): return .integer(try readLineInteger())
        case UInt8(ascii: "$"):
            let length = try readLineInteger()
            if length < 0 { return .bulk(nil) }
            let bytes = try readBytes(length)
            try skipCRLF()
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            let count = try readLineInteger()
            if count < 0 { return .array(nil) }
            var items: [Value] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try readValue()) }
            return .array(items)
        default:
            throw Failure(description: "unexpected RESP type byte \(type)")
        }
    }

    /// Reads one reply without building it (for throughput runs); returns its top-level element count.
    @discardableResult
    func skipValue() throws -> Int {
        let type = try readByte()
        switch type {
        case UInt8(ascii: "+"), UInt8(ascii: ":"):
            _ = try readLineInteger(lenient: true)
            return 1
        case UInt8(ascii: "-"):
            throw Failure(description: "Redis error: \(try readLineString())")
        case UInt8(ascii: "$"):
            let length = try readLineInteger()
            if length >= 0 {
                _ = try readBytes(length)
                try skipCRLF()
            }
            return 1
        case UInt8(ascii: "*"):
            let count = try readLineInteger()
            for _ in 0..<max(0, count) { try skipValue() }
            return max(0, count)
        default:
            throw Failure(description: "unexpected RESP type byte \(type)")
        }
    }

    private func fill() throws {
        if start == end {
            start = 0
            end = 0
        } else if end == buffer.count {
            buffer.replaceSubrange(0..<(end - start), with: buffer[start..<end])
            end -= start
            start = 0
        }
        let n = buffer.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress! + end, raw.count - end) }
        if n < 0 && errno == EINTR { return }
        guard n > 0 else { throw Failure(description: "connection closed (read returned \(n), errno \(errno))") }
        end += n
    }

    @inline(__always)
    private func readByte() throws -> UInt8 {
        if start == end { try fill() }
        let byte = buffer[start]
        start += 1
        return byte
    }

    private func readBytes(_ count: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if start == end { try fill() }
            let take = min(count - out.count, end - start)
            out += buffer[start..<(start + take)]
            start += take
        }
        return out
    }

    private func skipCRLF() throws {
        _ = try readByte()
        _ = try readByte()
    }

    private func readLineBytes() throws -> [UInt8] {
        var out: [UInt8] = []
        while true {
            let byte = try readByte()
            if byte == 13 {
                _ = try readByte()
                return out
            }
            out.append(byte)
        }
    }

    private func readLineString() throws -> String {
        String(decoding: try readLineBytes(), as: UTF8.self)
    }

    private func readLineInteger(lenient: Bool = false) throws -> Int {
        var value = 0
        var negative = false
        while true {
            let byte = try readByte()
            if byte == 13 {
                _ = try readByte()
                return negative ? -value : value
            }
            if byte == UInt8(ascii: "-") {
                negative = true
            } else if byte >= 48 && byte <= 57 {
                value = value * 10 + Int(byte - 48)
            } else if !lenient {
                throw Failure(description: "bad integer byte \(byte)")
            }
        }
    }
}
