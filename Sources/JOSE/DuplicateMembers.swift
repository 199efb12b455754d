import Foundation

/// Finds an object that names one member twice. RFC 7515 §5.2 and RFC 7519
/// §4 let a reader either refuse such JSON or keep the last member;
/// `JSONDecoder` keeps the first, so `{"alg":"ES256","alg":"none"}` would
/// read differently here than in a library that keeps the last. Refusing
/// leaves no such room.
package enum DuplicateMembers {
    /// One open object or array while scanning.
    private struct Level {
        let isObject: Bool
        var names: Set<String> = []
        var expectingName: Bool
    }

    /// True when some object in `json` names a member twice (escapes decoded,
    /// so `"alg"` and `"\u0061lg"` are the same name). Meant for text
    /// `JSONDecoder` has accepted: it checks no other rule of JSON.
    package static func found(in json: [UInt8]) -> Bool {
        var stack: [Level] = []
        var index = 0
        while index < json.count {
            switch json[index] {
            case UInt8(ascii: "{"): stack.append(Level(isObject: true, expectingName: true))
            case UInt8(ascii: "["): stack.append(Level(isObject: false, expectingName: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = stack.popLast()
            case UInt8(ascii: ","): if stack.last?.isObject == true { stack[stack.count - 1].expectingName = true }
            case UInt8(ascii: "\""):
                let start = index
                index += 1
                var escaped = false
                while index < json.count && json[index] != UInt8(ascii: "\"") {
                    if json[index] == UInt8(ascii: "\\") {
                        escaped = true
                        index += 1
                    }
                    index += 1
                }
                guard index < json.count else { return false }
                if let level = stack.last, level.isObject, level.expectingName {
                    let quoted = Array(json[start...index])
                    let name =
                        escaped
                        ? try? JSONDecoder().decode(String.self, from: Data(quoted))
                        : String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self)
                    guard let name, stack[stack.count - 1].names.insert(name).inserted else { return true }
                    stack[stack.count - 1].expectingName = false
                }
            default: break
            }
            index += 1
        }
        return false
    }
}
