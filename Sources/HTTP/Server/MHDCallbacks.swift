internal import CMicroHTTPD
internal import CMicroHTTPDShim
internal import CThreadShim
import Foundation
import Logging
import Synchronization

// libmicrohttpd's callbacks. They capture nothing: the server context comes
// through `cls`, the per-request state through `*con_cls`.

/// Called when a connection opens and when it closes: registers it with the
/// guard that enforces the head and body deadlines.
func mhdNotifyConnection(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?,
    socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    code: MHD_ConnectionNotificationCode
) {
    guard let cls, let connection, let socketContext else { return }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        socketContext.pointee = Unmanaged.passRetained(context.connections.opened(connection)).toOpaque()
    } else if let raw = socketContext.pointee {
        context.connections.closed(Unmanaged<ConnectionRecord>.fromOpaque(raw).takeRetainedValue())
        socketContext.pointee = nil
    }
}

/// Called with the raw request target as soon as the request line is read,
/// before libmicrohttpd decodes it or splits its arguments: makes the
/// request's state, and refuses a target that is too large at once (the
/// arguments of a large one can exhaust the connection's memory pool, after
/// which libmicrohttpd never answers).
func mhdURILog(cls: UnsafeMutableRawPointer?, uri: UnsafePointer<CChar>?, connection: OpaquePointer?)
    -> UnsafeMutableRawPointer?
{
    guard let cls else { return nil }
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let length = uri.map { strlen($0) } ?? 0
    let state = RequestState(
        id: context.nextRequestID(), rawTargetEnd: uri.map { UInt(bitPattern: $0) + UInt(length) } ?? 0)
    context.inFlight.add(1, ordering: .releasing)
    if let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        // Within the target's limit (a longer target is refused below): what signatures over the URL cover.
        let query = String(
            decoding: UnsafeRawBufferPointer(
                start: mark + 1, count: min(strlen(mark + 1), RequestHead.maximumTargetBytes)), as: UTF8.self)
        state.state.withLock { $0.rawQuery = query }
    }
    if let uri, let problem = RequestHead.checkTarget(UnsafeRawBufferPointer(start: uri, count: length)) {
        let response = problemResponse(problem, context: context, state: state)
        state.state.withLock {
            // The log line names the path only (no query), and at most 100 bytes of it.
            let target = UnsafeRawBufferPointer(start: uri, count: length)
            $0.path = String(decoding: target.prefix { $0 != UInt8(ascii: "?") }.prefix(100), as: UTF8.self)
            $0.problem = problem
            if problem.status == 414 {
                $0.refused = true
                $0.status = 414
            }
        }
        if problem.status == 414, let connection {
            context.connections.refuse(
                record(connection), response: context.configuration.usesTLS ? nil : serialized(response))
        }
    }
    return Unmanaged.passRetained(state).toOpaque()
}

/// Called several times per request: first when the head is complete (we
/// check it and set up state, so that libmicrohttpd keeps the connection
/// alive), then once per body chunk, then with no data when the body is
/// complete (we answer), and once more after a worker resumed a suspended
/// connection.
func mhdAccessHandler(
    cls: UnsafeMutableRawPointer?, connection: OpaquePointer?, url: UnsafePointer<CChar>?,
    method: UnsafePointer<CChar>?,
    version: UnsafePointer<CChar>?, uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>?,
    conCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let cls, let connection, let conCls, let uploadDataSize, let raw = conCls.pointee else {
        return MHD_Result.NO
    }
    _ = trifactor_set_http_thread(1)
    let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
    let state = Unmanaged<RequestState>.fromOpaque(raw).takeUnretainedValue()
    let first = state.state.withLock { s -> (first: Bool, refused: Bool, problem: HTTPProblem?) in
        defer { s.headSeen = true }
        if !s.headSeen {
            s.method = method.map { String(cString: $0) } ?? ""
            if s.problem == nil { s.path = url.map { String(cString: $0) } ?? "/" }
        }
        return (!s.headSeen, s.refused, s.problem)
    }
    if first.first {
        if first.refused { return MHD_Result.NO }
        context.connections.headReceived(record(connection))
        let fields = headerFields(connection)
        let versionText = version.map { String(cString: $0) } ?? ""
        // The version follows the raw target at once, unless a NUL byte cut the target short.
        let cutAtNUL = !versionText.isEmpty && version.map { UInt(bitPattern: $0) } != state.rawTargetEnd + 1
        if let problem = first.problem ?? (cutAtNUL ? .malformedRequest("The request target contains NUL.") : nil)
            ?? RequestHead.checkFields(fields, version: versionText)
        {
            // Answered before a byte of the body is read; the connection closes after it.
            state.state.withLock { $0.dispatched = true }
            return queue(problemResponse(problem, context: context, state: state), on: connection, state: state)
        }
        if let length = fields.first(where: { ASCII.equalsIgnoringCase($0.name, "content-length") }).flatMap({
            Int($0.value.trimmingCharacters(in: .whitespaces))
        }),
            length > context.configuration.maxBodyBytes
        {
            // Refuse before reading a byte of it; libmicrohttpd then closes the connection.
            state.state.withLock { $0.dispatched = true }
            return queue(tooLarge(context: context, state: state), on: connection, state: state)
        }
        state.state.withLock { $0.headers = fields }
        return MHD_Result.YES
    }

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
                uploadData.withMemoryRebound(to: UInt8.self, capacity: size) {
                    s.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: size))
                }
            }
            return true
        }
        uploadDataSize.pointee = 0
        return keep ? MHD_Result.YES : MHD_Result.NO
    }

    // The body is complete, or a worker has resumed us.
    let step = state.state.withLock {
        s -> (
            ready: Response?, dispatched: Bool, body: [UInt8], tooLarge: Bool, method: String, path: String,
            headers: [(name: String, value: String)], rawQuery: String
        ) in
        let r = (s.response, s.dispatched, s.body, s.discarded > 0, s.method, s.path, s.headers, s.rawQuery)
        s.dispatched = true
        return r
    }
    if let ready = step.ready { return queue(ready, on: connection, state: state) }
    if step.dispatched { return MHD_Result.YES }  // a spurious call while a worker runs
    context.connections.requestReceived(record(connection))
    if step.tooLarge { return queue(tooLarge(context: context, state: state), on: connection, state: state) }

    var headers: [String: String] = [:]
    for field in step.headers {
        let name = ASCII.lowercased(field.name)
        // A field that must come once (RFC 9449 §4.3: DPoP) arrives empty when repeated, so its reader refuses it;
        // any other keeps its last value.
        headers[name] = name == "dpop" && headers[name] != nil ? "" : field.value
    }
    var request = Request(
        id: state.id, method: step.method, path: step.path, query: values(connection, .GET_ARGUMENT_KIND),
        headers: headers, body: step.body, remoteAddress: clientAddress(connection))
    request.rawQuery = step.rawQuery
    let handle = ConnectionHandle(pointer: connection)
    let ready = context.dispatch(request, suspend: { MHD_suspend_connection(connection) }) { finished in
        ServerContext.answer(finished, state: state, connection: handle)
    }
    if let ready { return queue(ready, on: connection, state: state) }
    return MHD_Result.YES
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
    let (status, stats, method, path, traceHeader) = state.state.withLock { s in
        (
            s.status, s.routeStats, s.method, s.path,
            s.headers.first { ASCII.equalsIgnoringCase($0.name, "traceparent") }?.value
        )
    }
    if let connection { context.connections.answered(record(connection)) }
    context.completed(
        id: state.id, method: method, path: path, status: status, stats: stats, started: state.started,
        traceParent: traceHeader,
        aborted: termination != .REQUEST_TERMINATED_COMPLETED_OK)
    context.inFlight.subtract(1, ordering: .releasing)
}

private func tooLarge(context: ServerContext, state: RequestState) -> Response {
    let problem = HTTPProblem.payloadTooLarge(limit: context.configuration.maxBodyBytes)
    return context.finish(
        Response.problem(problem.problem(requestID: state.id), headers: [("Connection", "close")]), requestID: state.id)
}

private func problemResponse(_ problem: HTTPProblem, context: ServerContext, state: RequestState) -> Response {
    context.finish(
        Response.problem(problem.problem(requestID: state.id), headers: problem.headers), requestID: state.id)
}

private func queue(_ response: Response, on connection: OpaquePointer, state: RequestState) -> MHD_Result {
    state.state.withLock {
        $0.status = response.status
        $0.routeStats = response.routeStats
    }
    // For HEAD libmicrohttpd sends the headers only, with the body's real length.
    let handle = response.body.withUnsafeBytes { buffer in
        MHD_create_response_from_buffer(
            buffer.count, UnsafeMutableRawPointer(mutating: buffer.baseAddress), .RESPMEM_MUST_COPY)
    }
    guard let handle else { return MHD_Result.NO }
    defer { MHD_destroy_response(handle) }
    for (name, value) in response.headers {
        // A header with a forbidden character is dropped rather than sent malformed.
        if MHD_add_response_header(handle, name, value) != MHD_Result.YES { continue }
    }
    return MHD_queue_response(connection, UInt32(response.status), handle)
}

private final class ValueCollector {
    var fields: [(name: String, value: String)] = []
}

private func collect(
    cls: UnsafeMutableRawPointer?, kind: MHD_ValueKind, key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let cls, let key else { return MHD_Result.YES }
    let collector = Unmanaged<ValueCollector>.fromOpaque(cls).takeUnretainedValue()
    collector.fields.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
    return MHD_Result.YES
}

/// The values of `kind` in the order received, names as sent (repeated names included).
private func fields(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [(name: String, value: String)] {
    let collector = ValueCollector()
    withExtendedLifetime(collector) {
        _ = MHD_get_connection_values(connection, kind, collect, Unmanaged.passUnretained(collector).toOpaque())
    }
    return collector.fields
}

/// The header fields in the order received.
private func headerFields(_ connection: OpaquePointer) -> [(name: String, value: String)] {
    fields(connection, .HEADER_KIND)
}

/// Query arguments (the last of a repeated name wins).
private func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind) -> [String: String] {
    var values: [String: String] = [:]
    for field in fields(connection, kind) { values[field.name] = field.value }
    return values
}

/// The connection's record in the guard.
private func record(_ connection: OpaquePointer) -> ConnectionRecord? {
    trifactor_mhd_socket_context(connection).map { Unmanaged<ConnectionRecord>.fromOpaque($0).takeUnretainedValue() }
}

/// `response` as HTTP/1.1 bytes, for the rare answer written past libmicrohttpd.
private func serialized(_ response: Response) -> [UInt8] {
    let reasons = [400: "Bad Request", 414: "URI Too Long"]
    var head = "HTTP/1.1 \(response.status) \(reasons[response.status] ?? "Error")\r\n"
    for (name, value) in response.headers where name.lowercased() != "connection" { head += "\(name): \(value)\r\n" }
    head += "Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"
    return Array(head.utf8) + response.body
}

private func clientAddress(_ connection: OpaquePointer) -> String {
    record(connection)?.address ?? trifactor_mhd_client_address(connection).flatMap(SocketAddress.text(of:))
        ?? "unknown"
}
