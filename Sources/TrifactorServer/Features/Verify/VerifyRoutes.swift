import Core
import API
import Foundation
import HTTP
import Messaging
import Phone

/// The phone verification API, wire-compatible with Vonage Verify v2:
/// `POST /v2/verify`, `POST /v2/verify/{id}`, `DELETE /v2/verify/{id}`,
/// `POST /v2/verify/{id}/next_workflow` (also spelled `next-workflow`).
/// HTTP Basic with an API key and secret (`trifactord keys create`).
struct VerifyRoutes {
    let env: Environment
    static let locales: Set<String> = ["en-us", "en-gb", "es-es", "es-mx", "es-us", "it-it", "fr-fr", "de-de", "ru-ru", "hi-in",
                                       "pt-br", "pt-pt", "id-id", "ja-jp"]

    func register(on router: inout Router) {
        let service = VerifyService(env: env)
        router.add("POST", "/v2/verify") { request in
            let key = try authenticate(request)
            let start: VerifyService.Start
            do {
                start = try Self.validate(try decode(StartVerificationRequest.self, request))
            } catch let refusal as VerifyError {
                try service.refused(refusal, key: key, context: AuditContext(request))
                throw refusal
            }
            let id = try service.start(start, key: key, context: AuditContext(request))
            return .json(VerificationStarted(requestID: id), status: 202)
        }
        router.add("POST", "/v2/verify/:id") { request in
            let key = try authenticate(request)
            let id = try requestID(request)
            let body = try decode(CheckCodeRequest.self, request)
            guard let code = body.code, VerifyWorkflow.isValidCode(code) else {
                throw VerifyError.invalidParameters([.init(name: "code", reason: "must be 4 to 10 letters or digits")])
            }
            try service.check(id: id, code: code, key: key, context: AuditContext(request))
            return .json(CodeChecked(requestID: id))
        }
        router.add("DELETE", "/v2/verify/:id") { request in
            let key = try authenticate(request)
            try service.cancel(id: try requestID(request), key: key, context: AuditContext(request))
            return .noContent
        }
        for spelling in ["next_workflow", "next-workflow"] {
            router.add("POST", "/v2/verify/:id/\(spelling)") { request in
                let key = try authenticate(request)
                try service.nextWorkflow(id: try requestID(request), key: key, context: AuditContext(request))
                return Response(status: 200)
            }
        }
    }

    /// The API key of the request, read without the write lock. A rejected
    /// one spends a token of the client's bucket before it is audited, so
    /// wrong credentials cannot fill the audit log at will.
    private func authenticate(_ request: Request) throws -> APIKeys.Key {
        if let key = try env.read({ try APIKeys(env: env).authenticate(request, on: $0) }) { return key }
        let v = env.configuration.verify
        let wait = try env.transaction { db -> Int? in
            if let wait = try RateLimiter.take("verify:ip:\(ClientKey.of(request))", limit: .init(burst: v.perIPBurst, rate: v.perIPRate),
                                               nowMillis: env.nowMillis, on: db) { return wait }
            try AuditLog.append(AuditContext(request).event(.apiKeyRejected, .denied), at: env.nowMillis, on: db)
            return nil
        }
        if let wait { throw VerifyError.rateLimited(retryAfter: wait) }
        throw VerifyError.unauthorized
    }

    /// The `{id}` of the path; anything that is not a UUID cannot exist.
    private func requestID(_ request: Request) throws -> String {
        let id = request.parameters["id"] ?? ""
        guard id.count == 36, UUID(uuidString: id) != nil else { throw VerifyError.notFound(id) }
        return id.lowercased()
    }

    /// JSON decoding whose field errors read the way Vonage clients expect.
    private func decode<T: Decodable>(_ type: T.Type, _ request: Request) throws -> T {
        do {
            return try request.decode(type)
        } catch let problem as HTTPProblem where problem.status == 422 {
            throw VerifyError.invalidParameters(problem.invalidParams ?? [])
        }
    }

    /// Checks every field, reporting all that are wrong at once.
    static func validate(_ body: StartVerificationRequest) throws -> VerifyService.Start {
        var invalid: [Problem.InvalidParameter] = []
        let brand = body.brand ?? ""
        if brand.isEmpty || brand.count > 18 || brand.contains(where: { "/{}:$".contains($0) }) || brand.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            invalid.append(.init(name: "brand", reason: "must be 1 to 18 characters, without / { } : $"))
        }
        var steps: [VerifyRecord.Step] = []
        var countries: [Int] = []
        let workflow = body.workflow ?? []
        if !(1...3).contains(workflow.count) { invalid.append(.init(name: "workflow", reason: "must have 1 to 3 steps")) }
        for (index, step) in workflow.prefix(3).enumerated() {
            let name = "workflow[\(index)]"
            guard let channel = step.channel.flatMap(Channel.init(rawValue:)), channel == .sms || channel == .voice else {
                invalid.append(.init(name: "\(name).channel", reason: "must be sms or voice"))
                continue
            }
            let to = step.to ?? ""
            guard to.count <= 15, to.first != "0", to.allSatisfy({ $0.isASCII && $0.isNumber }), let number = try? PhoneNumber(parsing: to) else {
                invalid.append(.init(name: "\(name).to", reason: "must be a valid phone number in E.164 digits without +"))
                continue
            }
            if channel == .sms && !number.canReceiveSMS {
                invalid.append(.init(name: "\(name).to", reason: "is a \(number.kind.rawValue.replacingOccurrences(of: "_", with: " ")) number, which cannot receive SMS"))
                continue
            }
            steps.append(.init(channel: channel, to: number.digits))
            countries.append(number.countryCallingCode)
        }
        let locale = (body.locale ?? "en-us").lowercased()
        if !locales.contains(locale) { invalid.append(.init(name: "locale", reason: "is not a supported locale")) }
        let timeout = body.channelTimeout ?? 300
        if !(15...900).contains(timeout) { invalid.append(.init(name: "channel_timeout", reason: "must be 15 to 900 seconds")) }
        let length = body.codeLength ?? 4
        if !(4...10).contains(length) { invalid.append(.init(name: "code_length", reason: "must be 4 to 10")) }
        if let code = body.code, !VerifyWorkflow.isValidCode(code) {
            invalid.append(.init(name: "code", reason: "must be 4 to 10 letters or digits"))
        }
        if let ref = body.clientRef, ref.isEmpty || ref.count > 40 { invalid.append(.init(name: "client_ref", reason: "must be 1 to 40 characters")) }
        guard invalid.isEmpty else { throw VerifyError.invalidParameters(invalid) }
        return .init(brand: brand, locale: locale, steps: steps, countryCodes: countries, channelTimeout: timeout, codeLength: length,
                     customCode: body.code, clientRef: body.clientRef)
    }
}
