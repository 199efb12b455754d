/// The bank's passkey script (served as /static/passkey.js, never inline):
/// buttons marked `data-passkey` (register, second-factor, step-up,
/// authorize, reset, passwordless) run the WebAuthn ceremony against the
/// bank's JSON endpoints, which speak to trifactord. The CSRF token comes
/// from `<meta name="csrf-token">` and travels as `X-CSRF-Token`.
enum PasskeyScript {
    static let source = """
        "use strict";
        (function () {
          var b64 = {
            enc: function (buffer) {
              var bytes = new Uint8Array(buffer), s = "";
              for (var i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
              return btoa(s).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
            },
            dec: function (text) {
              var s = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
              return Uint8Array.from(s, function (c) { return c.charCodeAt(0); }).buffer;
            }
          };
          function creation(o) {
            return Object.assign({}, o, { challenge: b64.dec(o.challenge), user: Object.assign({}, o.user, { id: b64.dec(o.user.id) }),
              excludeCredentials: o.excludeCredentials.map(function (c) { return Object.assign({}, c, { id: b64.dec(c.id) }); }) });
          }
          function request(o) {
            return Object.assign({}, o, { challenge: b64.dec(o.challenge),
              allowCredentials: o.allowCredentials.map(function (c) { return Object.assign({}, c, { id: b64.dec(c.id) }); }) });
          }
          function json(c) {
            var r = c.response, out = { clientDataJSON: b64.enc(r.clientDataJSON) };
            if (r.attestationObject) out.attestationObject = b64.enc(r.attestationObject);
            if (r.authenticatorData) out.authenticatorData = b64.enc(r.authenticatorData);
            if (r.signature) out.signature = b64.enc(r.signature);
            if (r.userHandle) out.userHandle = b64.enc(r.userHandle);
            if (r.getTransports) out.transports = r.getTransports();
            return { id: c.id, rawId: b64.enc(c.rawId), type: c.type, response: out };
          }
          function post(path, body) {
            var token = document.querySelector('meta[name="csrf-token"]').content;
            return fetch(path, { method: "POST", credentials: "same-origin",
              headers: { "Content-Type": "application/json", "X-CSRF-Token": token }, body: JSON.stringify(body || {}) })
              .then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || "Something went wrong."); return j; }); });
          }
          function show(message) {
            var box = document.getElementById("passkey-error");
            if (box) { box.textContent = message; box.hidden = false; box.focus(); }
          }
          var flows = {
            register: function (button) {
              return post("/settings/passkey/options").then(function (r) {
                if (r.redirect) return r;
                return navigator.credentials.create({ publicKey: creation(r.options) })
                  .then(function (c) { return post("/settings/passkey", { credential: json(c), name: button.dataset.name || "Passkey" }); });
              });
            },
            "second-factor": function (button) {
              return post("/signin/passkey/options", { factor: button.dataset.factor }).then(function (r) {
                return navigator.credentials.get({ publicKey: request(r.options) })
                  .then(function (a) { return post("/signin/passkey", { assertion: json(a) }); });
              });
            },
            "step-up": function (button) {
              return post("/confirm/passkey/options", { factor: button.dataset.factor }).then(function (r) {
                return navigator.credentials.get({ publicKey: request(r.options) })
                  .then(function (a) { return post("/confirm/passkey", { assertion: json(a) }); });
              });
            },
            authorize: function (button) {
              return post("/transfer/passkey/options", { transfer: button.dataset.transfer }).then(function (r) {
                return navigator.credentials.get({ publicKey: request(r.options) })
                  .then(function (a) { return post("/transfer/passkey", { transfer: button.dataset.transfer, assertion: json(a) }); });
              });
            },
            reset: function () {
              return post("/forgot/passkey/options").then(function (r) {
                return navigator.credentials.get({ publicKey: request(r.options) })
                  .then(function (a) { return post("/forgot/passkey", { assertion: json(a) }); });
              });
            },
            passwordless: function () {
              return post("/signin/passkeyless/options").then(function (r) {
                return navigator.credentials.get({ publicKey: request(r.options) })
                  .then(function (a) { return post("/signin/passkeyless", { assertion: json(a) }); });
              });
            }
          };
          document.querySelectorAll("button[data-passkey]").forEach(function (button) {
            button.addEventListener("click", function () {
              button.disabled = true;
              flows[button.dataset.passkey](button).then(function (r) { window.location.assign(r.redirect || window.location.href); })
                .catch(function (e) { show(e && e.name === "NotAllowedError" ? "The passkey check was cancelled, timed out, or not accepted on this device. Try again, or use another way." : (e.message || String(e))); })
                .then(function () { button.disabled = false; });
            });
          });
        })();
        """
}
