import API
import Foundation

extension Request {
    /// Decodes the JSON body into `T`.
    /// - Throws: `HTTPProblem` 415 when the body is not declared as JSON, 400
    ///   when it is not well-formed JSON, 422 naming the field when a field is
    ///   missing, of the wrong type, or a number that does not fit it.
    package func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let contentType = header("content-type")?.split(separator: ";").first.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard contentType == "application/json" else {
            throw HTTPProblem.unsupportedMediaType
        }
        do {
            return try WireJSON.sharedDecoder.decode(T.self, from: Data(body))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // Either not JSON at all, or (Foundation on Linux reports it the same way)
            // a number that does not fit its field: 6.5, 2^63 or 1e308 for an integer.
            guard let field = Self.unfitNumber(in: body, decoding: T.self) else { throw HTTPProblem.malformedJSON }
            throw HTTPProblem.invalidFields([.init(name: field, reason: "must be a whole number in range")])
        } catch let error as DecodingError {
            throw HTTPProblem.invalidFields(Self.invalidParameters(error))
        }
    }

    private static func invalidParameters(_ error: DecodingError) -> [Problem.InvalidParameter] {
        func name(_ path: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = path + (key.map { [$0] } ?? [])
            return keys.isEmpty
                ? "body" : keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return [.init(name: name(context.codingPath, key), reason: "is required")]
        case .typeMismatch(let type, let context):
            return [.init(name: name(context.codingPath), reason: "must be \(describe(type))")]
        case .valueNotFound(let type, let context):
            return [.init(name: name(context.codingPath), reason: "must be \(describe(type)), not null")]
        case .dataCorrupted(let context):
            return [.init(name: name(context.codingPath), reason: "is not valid")]
        @unknown default:
            return [.init(name: "body", reason: "is not valid")]
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "a boolean"
        case is Double.Type: "a number"
        default: "an object of the documented shape"
        }
    }

    /// The path of the number in `body` that keeps it from decoding as `T`,
    /// when `body` is well-formed JSON and one is to blame: each number that
    /// is not a plain integer is replaced by 0 in turn (8 at most) until the
    /// decoding error changes.
    private static func unfitNumber<T: Decodable>(in body: [UInt8], decoding type: T.Type) -> String? {
        guard let root = try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) else {
            return nil
        }
        var candidates: [[Any]] = []
        collectUnfitNumbers(root, path: [], into: &candidates)
        for path in candidates.prefix(8) {
            guard
                let patched = try? JSONSerialization.data(
                    withJSONObject: replacing(path, in: root, with: 0), options: [.fragmentsAllowed])
            else { continue }
            do {
                _ = try WireJSON.sharedDecoder.decode(T.self, from: patched)
            } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
                continue
            } catch {}
            return path.map { "\($0)" }.joined(separator: ".")
        }
        return nil
    }

    /// Paths (keys and indexes) of numbers that are not integers of 64 bits or fewer, stored as such.
    private static func collectUnfitNumbers(_ value: Any, path: [Any], into paths: inout [[Any]]) {
        switch value {
        case let object as [String: Any]:
            for (key, inner) in object.sorted(by: { $0.key < $1.key }) {
                collectUnfitNumbers(inner, path: path + [key], into: &paths)
            }
        case let array as [Any]:
            for (index, inner) in array.enumerated() { collectUnfitNumbers(inner, path: path + [index], into: &paths) }
        case is Bool:
            break
        case let number as NSNumber:
            let integerTypes: Set<String> = ["c", "s", "i", "l", "q", "C", "S", "I", "L"]
            if number is NSDecimalNumber || !integerTypes.contains(String(cString: number.objCType)) {
                paths.append(path)
            }
        default:
            break
        }
    }

    private static func replacing(_ path: [Any], in value: Any, with replacement: Any) -> Any {
        guard let head = path.first else { return replacement }
        let rest = Array(path.dropFirst())
        if let key = head as? String, var object = value as? [String: Any], let inner = object[key] {
            object[key] = replacing(rest, in: inner, with: replacement)
            return object
        }
        if let index = head as? Int, var array = value as? [Any], array.indices.contains(index) {
            array[index] = replacing(rest, in: array[index], with: replacement)
            return array
        }
        return value
    }
}
