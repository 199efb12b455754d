// Trifactor dev page: passkeys through the HTTP API, for the demo and the browser tests.
"use strict";
const b64 = {
  enc(buffer) {
    const bytes = new Uint8Array(buffer);
    let s = "";
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  },
  dec(text) {
    const s = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
    return Uint8Array.from(s, (c) => c.charCodeAt(0)).buffer;
  },
};

async function api(method, path, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers["Authorization"] = "Bearer " + token;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : null };
}

function creationOptions(o) {
  return { ...o, challenge: b64.dec(o.challenge), user: { ...o.user, id: b64.dec(o.user.id) },
           excludeCredentials: o.excludeCredentials.map((c) => ({ ...c, id: b64.dec(c.id) })) };
}

function requestOptions(o) {
  return { ...o, challenge: b64.dec(o.challenge), allowCredentials: o.allowCredentials.map((c) => ({ ...c, id: b64.dec(c.id) })) };
}

function credentialJSON(c) {
  const r = c.response;
  const response = { clientDataJSON: b64.enc(r.clientDataJSON) };
  if (r.attestationObject) response.attestationObject = b64.enc(r.attestationObject);
  if (r.authenticatorData) response.authenticatorData = b64.enc(r.authenticatorData);
  if (r.signature) response.signature = b64.enc(r.signature);
  if (r.userHandle) response.userHandle = b64.enc(r.userHandle);
  if (r.getTransports) response.transports = r.getTransports();
  return { id: c.id, rawId: b64.enc(c.rawId), type: c.type, response };
}

window.trifactor = {
  api,
  /** Registers a passkey on the signed-in session `token`. */
  async register(token, name) {
    const begin = await api("POST", "/v1/mfa/enrollments", { kind: "passkey", device_name: name }, token);
    if (begin.status !== 202) return begin;
    const credential = await navigator.credentials.create({ publicKey: creationOptions(begin.json.options) });
    return api("POST", "/v1/mfa/enrollments/" + begin.json.enrollment_session, { credential: credentialJSON(credential) }, token);
  },
  /** Password, then the passkey as second factor. */
  async secondFactor(email, password) {
    const first = await api("POST", "/v1/sessions", { email, password });
    if (!first.json || !first.json.mfa_required) return first;
    const hint = first.json.hints.find((h) => h.kind === "passkey");
    const body = { pending_credential: first.json.pending_credential, enrollment_id: hint.enrollment_id };
    const challenge = await api("POST", "/v1/mfa/sign-in/challenges", body);
    const assertion = await navigator.credentials.get({ publicKey: requestOptions(challenge.json.options) });
    return api("POST", "/v1/sessions/mfa", { ...body, assertion: credentialJSON(assertion) });
  },
  /** No password: a discoverable passkey alone. */
  async passwordless() {
    const options = await api("POST", "/v1/sessions/passkey/options", {});
    const assertion = await navigator.credentials.get({ publicKey: requestOptions(options.json.options) });
    return api("POST", "/v1/sessions/passkey", { assertion: credentialJSON(assertion) });
  },
};
