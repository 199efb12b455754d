internal import CMicroHTTPD
internal import CTrifactorShim
import Foundation

// libmicrohttpd's callbacks. They capture nothing: the server context comes
// through `cls`, the per-request state through `*con_cls`.

/// Called several times per request: first with the headers (we only set up
/// state, so that libmicrohttpd keeps the connection alive), then once per
/// body chunk, then with no data when the body is complete (we answer), and
/// once more after a worker resumed a suspended connection.
func mhdAccessHandler(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>?,
    conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let conCls, let uploadDataSize else { return MHD_Result.NO }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()

    guard let raw = conCls.pointee else {
        let state = RequestState(id: context.nextRequestID(), method: method.map { String(cString: $0) } ?? "",
                                 path: url.map { String(cString: $0) } ?? "/")
        conCls.pointee = Unmanaged.passRetained(state).toOpaque()
        context.inFlight.add(1, ordering: .releasing)
        if let length = header(connection, "content-length").flatMap(Int.init), length > context.configuration.maxBodyBytes {
            // Refuse before reading a byte of it; libmicrohttpd then closes the connection.
            state.state.withLock { $0.dispatched = true }
            return queue(tooLarge(context: context, state: state), on: connection, state: state)
        }
        return MHD_Result.YES
    }
    let state = Unmanaged<RequestState>.fromOpaque(raw).takeUnretainedValue()

    if uploadDataSize.pointee > 0 {
        let size = uploadDataSize.pointee
        let limit = context.configuration.maxBodyBytes
        let keep = state.state.withLock { s -> Bool in
            if s.discarded > 0 || s.body.count + size > limit {
                // Over the limit without a declared length: read on and discard, so
                // the client can read the 413, but only so far: past that, drop it.
                s.body = []
                s.discarded += size
                return s.discarded <= max(1 << 20, 4 * limit)
            }
            if let uploadData {
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { s.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size)) }
            }
            return true
        }
        uploadDataSize.pointee = 0
        return keep ? MHD_Result.YES : MHD_Result.NO
    }

    // The body is complete, or a worker has resumed us.
    let step = state.state.withLock { s -> (ready: Response?, dispatched: Bool, body: [UInt8], tooLarge: Bool) in
        let r = (s.response, s.dispatched, s.body, s.discarded > 0)
        s.dispatched = true
        return r
    }
    if let ready = step.ready { return queue(ready, on: connection, state: state) }
    if step.dispatched { return MHD_Result.YES }  // a spurious call while a worker runs
    if step.tooLarge { return queue(tooLarge(context: context, state: state), on: connection, state: state) }


    var request = Request(id: state.id, method: state.method, path: state.path, query: values(connection, .GET_ARGUMENT_KIND),
                          headers: values(connection, .HEADER_KIND, lowercase: true), body: step.body,
                          remoteAddress: clientAddress(connection))
    switch context.router.match(method: request.method, path: request.path) {
    case .notFound:
        return queue(problemResponse(HTTPProblem.notFound, context: context, state: state), on: connection, state: state)
    case .methodNotAllowed(let allowed):
        return queue(problemResponse(HTTPProblem.methodNotAllowed(allowed: allowed), context: context, state: state), on: connection, state: state)
    case .found(let route, let parameters):
        request.parameters = parameters
        switch route.execution {
        case .inline:
            let answer = context.respond(request, handler: route.handler)
            guard let deferral = answer.deferral else {
                return queue(context.finish(answer, requestID: state.id), on: connection, state: state)
            }
            // Park the request: the connection is suspended, no thread waits.
            MHD_suspend_connection(connection)
            let handle = ConnectionHandle(pointer: connection)
            let handler = route.handler
            context.hub.add(key: deferral.key, timeout: deferral.timeout, request: request, handler: { context.respond($0, handler: handler) },
                            onTimeout: deferral.onTimeout) { response in
                state.state.withLock { $0.response = context.finish(response, requestID: state.id) }
                MHD_resume_connection(handle.pointer)
            }
            return MHD_Result.YES
        case .worker:
            // Suspend before the job can possibly resume us.
            MHD_suspend_connection(connection)
            let sendableConnection = ConnectionHandle(pointer: connection)
            let accepted = context.workers.submit { [request] in
                let answer = context.respond(request, handler: route.handler)
                // Waiting is for inline routes; a worker route that asks to wait gets its timeout answer.
                let response = context.finish(answer.deferral?.onTimeout ?? answer, requestID: request.id)
                state.state.withLock { $0.response = response }
                MHD_resume_connection(sendableConnection.pointer)
            }
            if !accepted {
                let response = problemResponse(HTTPProblem.overloaded, context: context, state: state)
                state.state.withLock { $0.response = response }
                MHD_resume_connection(connection)
            }
            return MHD_Result.YES
        }
    }
}

/// A connection pointer handed to a worker. `@unchecked Sendable`:
/// libmicrohttpd allows `MHD_resume_connection` from any thread, and the
/// worker touches the connection through nothing else.
struct ConnectionHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// Called when a request is over (answered, or the client went away): logs
/// it and releases its state.
func mhdCompletedHandler(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?, conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    termination: MHD_RequestTerminationCode
) {
    guard let cls, let conCls, let raw = conCls.pointee else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let state = Unmanaged<RequestState>.fromOpaque(raw).takeRetainedValue()
    conCls.pointee = nil
    let elapsed = ContinuousClock.now - state.started
    let millis = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    let status = state.state.withLock { $0.status }
    var fields: [String: Logger.Value] = [
        "id": .string(state.id), "method": .string(state.method), "path": .string(state.path),
        "status": .int(status), "duration_ms": .double((millis * 1000).rounded() / 1000),
    ]
    if termination != .REQUEST_TERMINATED_COMPLETED_OK { fields["aborted"] = .bool(true) }
    context.logger.log("info", "request", fields)
    context.inFlight.subtract(1, ordering: .releasing)
}

private func tooLarge(context: ServerContext, state: RequestState) -> Response {
    let problem = HTTPProblem.payloadTooLarge(limit: context.configuration.maxBodyBytes)
    return context.finish(Response.problem(problem.problem(requestID: state.id), headers: [("Connection", "close")]), requestID: state.id)
}

private func problemResponse(_ problem: HTTPProblem, context: ServerContext, state: RequestState) -> Response {
    context.finish(Response.problem(problem.problem(requestID: state.id), headers: problem.headers), requestID: state.id)
}

private func queue(_ response: Response, on connection: OpaquePointer, state: RequestState) -> MHD_Result {
    state.state.withLock { $0.status = response.status }
    // For HEAD libmicrohttpd sends the headers only, with the body's real length.
    let handle = response.body.withUnsafeBytes { buffer in
        MHD_create_response_from_buffer(buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let handle else { return MHD_Result.NO }
    defer { MHD_destroy_response(handle) }
    for (name, value) in response.headers {
        // A header with a forbidden character is dropped rather than sent malformed.
        if MHD_add_response_header(handle, name, value) != MHD_Result.YES { continue }
    }
    return MHD_queue_response(connection, UInt32(response.status), handle)
}

private func header(_ connection: OpaquePointer, _ name: String) -> String? {
    MHD_lookup_connection_value(connection, .HEADER_KIND, name).map { String(cString: $0) }
}

private final class ValueCollector {
    var values: [String: String] = [:]
    var lowercase = false
}

private func collect(cls: UnsafeMutableRawPointer?, kind: MHD_ValueKind, key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
    let name = String(cString: key)
    collector.values[collector.lowercase ? name.lowercased() : name] = value.map { String(cString: $0) } ?? ""
    return MHD_Result.YES
}

private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercase: Bool = false) -> [String: String] {
    let collector = ValueCollector()
    collector.lowercase = lowercase
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, collect, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.values
}

private func clientAddress(_ connection: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    guard trifactor_mhd_client_address(connection, &buffer, buffer.count) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
