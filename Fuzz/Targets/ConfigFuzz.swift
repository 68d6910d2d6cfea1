// Configuration files (YAML or JSON, the first input byte says which) as an operator writes
// them. Properties: loading never traps, a document is either a config or a
// `ConfigurationError` with problems named, validation of whatever loads never traps, and a
// config that loads, written back as JSON, loads to the same config.
import Foundation
@testable import HeraldCore
@testable import HeraldServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let isYAML = data[0] & 1 == 1
    let text = String(decoding: UnsafeBufferPointer(start: data + 1, count: size - 1), as: UTF8.self)
    let config: HeraldConfig
    do {
        config = try ConfigLoader.parse(text, isYAML: isYAML)
    } catch let error as ConfigurationError {
        precondition(!error.problems.isEmpty, "a refused config names no problem")
        return 0
    } catch {
        preconditionFailure("the loader threw something other than ConfigurationError: \(error)")
    }
    _ = config.validationErrors()
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    guard let json = try? encoder.encode(config) else { preconditionFailure("a loaded config does not encode") }
    let again = try? ConfigLoader.parse(String(decoding: json, as: UTF8.self), isYAML: false)
    precondition(again == config, "a config does not survive encode → load")
    return 0
}
