import Foundation
import HeraldCore
import HeraldRealtime
import Hummingbird
import NIOCore

extension Request {
    /// Reads the body (bounded by the configured limit) and decodes it as `T`.
    ///
    /// Why not Hummingbird's `decode`: its errors do not name the field. Here a syntax error is
    /// 400 `INVALID_JSON`; a missing field, a wrong type or a null is 422
    /// `VALIDATION_FAILED` naming the field's JSON path.
    public func decodeJSON<T: Decodable>(_ type: T.Type, context: HeraldRequestContext) async throws -> T {
        let data = try await bodyData(context: context)
        guard let tree = StrictJSON.parse(data) else { throw APIError.invalidJSON() }
        if T.self == JSONValue.self, let tree = tree as? T { return tree }
        do {
            return try JSONValueDecoder().decode(T.self, from: tree)
        } catch let error as DecodingError {
            throw Self.apiError(for: error)
        }
    }

    /// Reads the body as a JSON object, for handlers that tell "absent" from "null".
    public func jsonObject(context: HeraldRequestContext) async throws -> [String: JSONValue] {
        let value = try await decodeJSON(JSONValue.self, context: context)
        guard case .object(let object) = value else {
            throw APIError.invalidJSON("The request body must be a JSON object.")
        }
        return object
    }

    func bodyData(context: HeraldRequestContext) async throws -> Data {
        let buffer: ByteBuffer
        do {
            buffer = try await body.collect(upTo: context.maxBodyBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.payloadTooLarge(limit: context.maxBodyBytes)
        } catch is NIOTooManyBytesError {
            // A chunked body (no Content-Length) that grows past the limit while being read.
            throw APIError.payloadTooLarge(limit: context.maxBodyBytes)
        }
        guard buffer.readableBytes > 0 else { throw APIError.invalidJSON("The request body is empty; a JSON object is required.") }
        return Data(buffer: buffer)
    }

    static func apiError(for error: DecodingError) -> APIError {
        switch error {
        case .dataCorrupted(let context):
            return .validation(field: path(context.codingPath), "has an invalid value")
        case .keyNotFound(let key, let context):
            return .validation(field: path(context.codingPath + [key]), "is required")
        case .typeMismatch(let type, let context):
            return .validation(field: path(context.codingPath), "must be \(describe(type))")
        case .valueNotFound(_, let context):
            return .validation(field: path(context.codingPath), "must not be null")
        @unknown default:
            return .invalidJSON()
        }
    }

    static func path(_ codingPath: [any CodingKey]) -> String {
        var result = ""
        for key in codingPath {
            if let index = key.intValue {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return result.isEmpty ? "body" : result
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: "an integer"
        case is Double.Type, is Float.Type: "a number"
        case is [Any].Type: "an array"
        default: type == [String: JSONValue].self ? "an object" : "of the right type"
        }
    }
}
