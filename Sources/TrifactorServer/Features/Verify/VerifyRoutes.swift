import API
import Core
import Foundation
import HTTP
import Messaging
import Phone

/// The phone verification API, wire-compatible with Vonage Verify v2:
/// `POST /v2/verify`, `POST /v2/verify/{id}`, `DELETE /v2/verify/{id}`,
/// `POST /v2/verify/{id}/next_workflow` (also spelled `next-workflow`).
/// HTTP Basic with an API key and secret (`trifactord keys create`). Every
/// answer, errors included, has Vonage's shape.
struct VerifyRoutes {
    let verifications: PhoneVerificationService
    let keys: APIKeys
    let transactions: Transactions
    let clock: Clock
    /// Starts and next steps honour `Idempotency-Key`, per API key.
    let idempotency: Idempotency
    let perIP: RateLimiter.Limit
    /// Vonage's locales, and one for each other language Trifactor has messages in.
    static let locales: Set<String> = [
        "en-us", "en-gb", "en-au", "en-in", "es-es", "es-mx", "es-us", "it-it", "fr-fr", "fr-ca", "de-de", "ru-ru",
        "hi-in", "pt-br", "pt-pt", "id-id", "ja-jp", "nl-nl", "tr-tr", "pl-pl", "ar-xa", "fa-ir", "zh-cn", "zh-tw",
    ]

    func register(on router: inout Router) {
        add(&router, "POST", "/v2/verify") { request in
            let key = try authenticate(request)
            return try idempotency.run(
                request, operation: "POST /v2/verify", caller: "key:\(key.id.raw)", answer: VonageProblem.answer
            ) {
                try start(request, key: key)
            }
        }
        add(&router, "POST", "/v2/verify/:id") { request in
            let key = try authenticate(request)
            let id = try Self.requestID(request)
            let body = try request.decode(CheckCodeRequest.self)
            guard let code = body.code, VerifyWorkflow.isValidCode(code) else {
                throw PhoneVerificationFailure.invalidParameters([
                    FieldProblem(name: "code", reason: "must be 4 to 10 letters or digits")
                ])
            }
            try verifications.check(id, code: code, key: key, client: AuditContext(request))
            return .json(CodeChecked(requestID: id.raw))
        }
        add(&router, "DELETE", "/v2/verify/:id") { request in
            let key = try authenticate(request)
            try verifications.cancel(try Self.requestID(request), key: key, client: AuditContext(request))
            return .noContent
        }
        for spelling in ["next_workflow", "next-workflow"] {
            add(&router, "POST", "/v2/verify/:id/\(spelling)") { request in
                let key = try authenticate(request)
                return try idempotency.run(
                    request, operation: "POST /v2/verify/:id/next_workflow", caller: "key:\(key.id.raw)",
                    answer: VonageProblem.answer
                ) {
                    try verifications.nextWorkflow(try Self.requestID(request), key: key, client: AuditContext(request))
                    return Response(status: 200)
                }
            }
        }
    }

    /// Starts a verification for `key`; a refused start is audited.
    private func start(_ request: Request, key: APIKey) throws -> Response {
        let client = AuditContext(request)
        let start: PhoneVerificationService.Start
        do {
            do {
                start = try Self.validate(try request.decode(StartVerificationRequest.self))
            } catch let problem as HTTPProblem where problem.status == 422 {
                throw PhoneVerificationFailure.invalidParameters(
                    (problem.invalidParams ?? []).map { FieldProblem(name: $0.name, reason: $0.reason) })
            }
        } catch let refusal as PhoneVerificationFailure {
            try verifications.refused(refusal, key: key, client: client)
            throw refusal
        }
        let id = try verifications.start(start, key: key, client: client)
        return .json(VerificationStarted(requestID: id.raw), status: 202)
    }

    /// A route whose every failure is answered in Vonage's shape.
    private func add(
        _ router: inout Router, _ method: String, _ path: String,
        _ handler: @escaping @Sendable (Request) throws -> Response
    ) {
        router.add(method, path) { request in
            do { return try handler(request) } catch { throw VonageProblem.answer(error) }
        }
    }

    /// The API key of the request, read without the write lock, in one
    /// statement outside any transaction. A rejected one spends a token of
    /// the client's bucket before it is audited, so wrong credentials cannot
    /// fill the audit log at will.
    private func authenticate(_ request: Request) throws -> APIKey {
        if let key = try transactions.readStatement({
            try keys.authenticate(authorization: request.header("authorization"), on: $0)
        }) {
            return key
        }
        let client = AuditContext(request)
        let now = clock.now().millis
        let wait = try transactions.write { db -> Int? in
            if let wait = try RateLimiter.take("verify:ip:\(client.clientKey)", limit: perIP, nowMillis: now, on: db) {
                return wait
            }
            try AuditLog.append(client.event(.apiKeyRejected, .denied), at: now, on: db)
            return nil
        }
        if let wait { throw PhoneVerificationFailure.rateLimited(retryAfter: wait) }
        throw PhoneVerificationFailure.unauthorized
    }

    /// The `{id}` of the path; anything that is not a UUID cannot exist.
    private static func requestID(_ request: Request) throws -> VerificationID {
        let id = request.parameters["id"] ?? ""
        guard id.count == 36, UUID(uuidString: id) != nil else {
            throw PhoneVerificationFailure.notFound(VerificationID(id))
        }
        return VerificationID(id.lowercased())
    }

    /// Checks every field, reporting all that are wrong at once.
    static func validate(_ body: StartVerificationRequest) throws -> PhoneVerificationService.Start {
        var invalid: [FieldProblem] = []
        let brand = body.brand ?? ""
        if brand.isEmpty || brand.count > 18 || brand.contains(where: { "/{}:$".contains($0) })
            || brand.unicodeScalars.contains(where: { $0.value < 0x20 })
        {
            invalid.append(.init(name: "brand", reason: "must be 1 to 18 characters, without / { } : $"))
        }
        var steps: [VerifyRecord.Step] = []
        var countries: [Int] = []
        let workflow = body.workflow ?? []
        if !(1...3).contains(workflow.count) {
            invalid.append(.init(name: "workflow", reason: "must have 1 to 3 steps"))
        }
        for (index, step) in workflow.prefix(3).enumerated() {
            let name = "workflow[\(index)]"
            guard let channel = step.channel.flatMap(Channel.init(rawValue:)), channel == .sms || channel == .voice
            else {
                invalid.append(.init(name: "\(name).channel", reason: "must be sms or voice"))
                continue
            }
            let to = step.to ?? ""
            guard to.count <= 15, to.first != "0", to.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = try? PhoneNumber(parsing: to)
            else {
                invalid.append(
                    .init(name: "\(name).to", reason: "must be a valid phone number in E.164 digits without +"))
                continue
            }
            if channel == .sms && !number.canReceiveSMS {
                invalid.append(
                    .init(
                        name: "\(name).to",
                        reason:
                            "is a \(number.kind.rawValue.replacingOccurrences(of: "_", with: " ")) number, which cannot receive SMS"
                    ))
                continue
            }
            steps.append(.init(channel: channel, to: number.digits))
            countries.append(number.countryCallingCode)
        }
        let locale = (body.locale ?? "en-us").lowercased()
        if !locales.contains(locale) { invalid.append(.init(name: "locale", reason: "is not a supported locale")) }
        let timeout = body.channelTimeout ?? 300
        if !(15...900).contains(timeout) {
            invalid.append(.init(name: "channel_timeout", reason: "must be 15 to 900 seconds"))
        }
        let length = body.codeLength ?? 4
        if !(4...10).contains(length) { invalid.append(.init(name: "code_length", reason: "must be 4 to 10")) }
        if let code = body.code, !VerifyWorkflow.isValidCode(code) {
            invalid.append(.init(name: "code", reason: "must be 4 to 10 letters or digits"))
        }
        if let ref = body.clientRef, ref.isEmpty || ref.count > 40 {
            invalid.append(.init(name: "client_ref", reason: "must be 1 to 40 characters"))
        }
        guard invalid.isEmpty else { throw PhoneVerificationFailure.invalidParameters(invalid) }
        return .init(
            brand: brand, locale: locale, steps: steps, countryCodes: countries, channelTimeout: timeout,
            codeLength: length,
            customCode: body.code, clientRef: body.clientRef)
    }
}
