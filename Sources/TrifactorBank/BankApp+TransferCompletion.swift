import API
import Foundation
import HTTP
import Logging
import TrifactorKit

/// Completing a transfer: the proof (a code or a passkey) approves its
/// authorization, which is then spent for exactly this action, and the
/// ledger moves once. A wrong code says what is left and too many wrong codes
/// end the transfer. Each transfer has a code of its own (Trifactor scopes a phone code to what it proves), so a
/// transfer started in another tab leaves this one's code working.
extension BankApp {
    struct TransferAssertionBody: Decodable {
        let transfer: String
        let assertion: CredentialJSON
    }

    /// How completing a transfer ended.
    enum Completion {
        /// The money moved (or had moved already for this transfer): its notice is flashed.
        case moved
        /// The code was refused; the transfer still waits (the sentence says whether to type it again or get a new one).
        case wrongCode(String)
        /// Too many wrong codes: the transfer is dropped.
        case ended(String)
        /// Nothing moved, for another reason.
        case refused(String)
    }

    /// Approves the transfer's authorization with `proof`, spends it for exactly this action, then moves the money once.
    func complete(_ pending: PendingTransfer, _ session: BankSession, _ request: Request, proof: SecondFactorProof)
        -> Completion
    {
        guard let authorization = pending.authorizationID else {
            return .refused("This transfer is no longer waiting. Nothing was moved.")
        }
        let client = trifactor(session, request)
        do {
            try blocking({ try await client.approveAuthorization(authorization, with: proof) })
        } catch {
            var waiting = pending
            let texted: Bool = if case .phone? = pending.factor?.kind { true } else { false }
            guard let verdict = Self.verdict(error, tries: &waiting.wrongTries, texted: texted) else {
                return .refused(Self.sentence(error) + " Nothing was moved.")
            }
            if case .over(let sentence) = verdict {
                session.dropTransfer(pending.id)
                return .ended("\(sentence) The transfer was cancelled. Nothing was moved.")
            }
            session.store(waiting)
            switch verdict {
            case .again(let sentence), .newCode(let sentence), .over(let sentence): return .wrongCode(sentence)
            }
        }
        // Spent for exactly this action, then the ledger moves (once per transfer id).
        session.dropTransfer(pending.id)
        do { try blocking({ try await client.consumeAuthorization(authorization, for: Self.action(pending)) }) } catch {
            return .refused(Self.sentence(error) + " Nothing was moved.")
        }
        do {
            _ = try ledger.transfer(
                .init(
                    idempotencyKey: pending.id, from: pending.from, to: pending.to, amount: pending.amount,
                    authorizationID: authorization, memo: Self.memo(pending), reference: pending.reference), now: now())
        } catch let refusal as Ledger.Refusal {
            return .refused(refusal.description + " Nothing was moved.")
        } catch {
            logger.log(.error, "bank_transfer_failed", ["error": .string(String(reflecting: error))])
            return .refused("The transfer could not be made. Nothing was moved.")
        }
        let sent = "Sent \(pending.amount.description) to \(pending.toLabel)."
        session.flows { $0.sent[pending.id] = sent }
        session.flash(sent)
        return .moved
    }

    /// What Trifactor binds the approval to: amount, currency, payee and the source account.
    static func action(_ pending: PendingTransfer) -> BoundAction {
        .transfer(
            amount: pending.amount.plain, currency: pending.amount.currency, payee: pending.toLabel, from: pending.from)
    }

    static func memo(_ pending: PendingTransfer) -> String {
        switch pending.to {
        case .account: "Transfer to \(pending.toLabel)"
        case .payee(let name, _): "To \(name)"
        }
    }

    /// `POST /transfer/passkey/options`: the request options whose challenge covers the transfer.
    func transferPasskeyOptions(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard session.isSignedIn,
            let id = (try? WireJSON.sharedDecoder.decode([String: String].self, from: Data(request.body)))?["transfer"],
            let pending = session.pendingTransfer(id), let options = pending.passkeyOptions
        else {
            return jsonError(409, "This transfer is no longer waiting. Nothing was moved.")
        }
        return Response.json(RequestBody(options: options))
    }

    /// `POST /transfer/passkey`: the passkey's assertion approves the transfer, and the money moves once.
    func approveTransferWithPasskey(_ request: Request) throws -> Response {
        let (session, _) = try postedJSON(request)
        guard session.isSignedIn,
            let body = try? WireJSON.sharedDecoder.decode(TransferAssertionBody.self, from: Data(request.body)),
            let pending = session.pendingTransfer(body.transfer), pending.passkeyOptions != nil
        else {
            return jsonError(409, "This transfer is no longer waiting. Nothing was moved.")
        }
        switch complete(pending, session, request, proof: .assertion(body.assertion)) {
        case .moved: return Response.json(Next(redirect: "/accounts"))
        case .wrongCode:
            return jsonError(400, "Your passkey did not confirm this transfer. Try again, or use another way.")
        case .ended(let sentence):
            session.flash(sentence)
            return Response.json(Next(redirect: "/accounts"))
        case .refused(let sentence): return jsonError(409, sentence)
        }
    }
}
