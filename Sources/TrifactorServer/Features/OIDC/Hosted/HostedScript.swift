/// The hosted pages' one script (served as a file: the policy forbids
/// inline script). It posts a `form_post` answer to the client at once (the
/// button under it is the way without script), waits for a device's answer
/// without reloading the page until it comes, and drives passkeys: the
/// "Sign in with a passkey" button and the browser's autofill on the email
/// field (conditional mediation), and the passkey of a second step. Each
/// puts the assertion in its form and submits it; the server checks it.
enum HostedScript {
    static let source = #"""
        "use strict";
        const b64 = {
          enc(buffer) {
            let s = "";
            for (const b of new Uint8Array(buffer)) s += String.fromCharCode(b);
            return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
          },
          dec(text) {
            const s = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
            return Uint8Array.from(s, (c) => c.charCodeAt(0)).buffer;
          },
        };
        function requestOptions(o) {
          return { ...o, challenge: b64.dec(o.challenge),
                   allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: b64.dec(c.id) })) };
        }
        function credentialJSON(c) {
          const r = c.response;
          const response = { clientDataJSON: b64.enc(r.clientDataJSON), authenticatorData: b64.enc(r.authenticatorData),
                             signature: b64.enc(r.signature) };
          if (r.userHandle) response.userHandle = b64.enc(r.userHandle);
          return { id: c.id, rawId: b64.enc(c.rawId), type: c.type, response };
        }
        function submitWith(form, credential) {
          form.querySelector("[data-assertion]").value = JSON.stringify(credentialJSON(credential));
          form.submit();
        }
        function showError(form) {
          const error = form.querySelector("[data-passkey-error]");
          if (error) { error.hidden = false; error.focus(); }
        }
        async function discoverableOptions(form) {
          const body = new URLSearchParams({ flow: form.elements.flow.value, csrf: form.elements.csrf.value });
          const answer = await fetch("/authorize/passkey/options", { method: "POST", body, credentials: "same-origin" });
          if (!answer.ok) throw new Error("options " + answer.status);
          return requestOptions((await answer.json()).options);
        }
        let conditional = null;
        function waitForDevice(delay = 2000) {
          // 204: nothing changed yet. Anything else (a redirect, another page): reload and let the browser follow it.
          // No answer at all (offline for a moment): ask again later, up to every 30 s, rather than reload into the
          // browser's own error page, which would wait for nothing.
          setTimeout(async () => {
            let answer;
            try {
              answer = await fetch(location.href, { headers: { "X-Trifactor-Wait": "1" }, credentials: "same-origin",
                                                    redirect: "manual", cache: "no-store" });
            } catch (e) { waitForDevice(Math.min(delay * 2, 30000)); return; }
            if (answer.status === 204) { waitForDevice(); return; }
            location.reload();
          }, delay);
        }
        document.addEventListener("DOMContentLoaded", async () => {
          if (document.querySelector("[data-wait]")) waitForDevice();
          const autoPost = document.querySelector("form[data-auto-submit]");
          if (autoPost) { autoPost.submit(); return; }
          for (const button of document.querySelectorAll("[data-passkey]")) {
            button.addEventListener("click", async () => {
              const form = button.closest("form");
              button.disabled = true;
              try {
                if (conditional) conditional.abort();
                const publicKey = button.dataset.passkey === "get"
                  ? requestOptions(JSON.parse(button.dataset.options)) : await discoverableOptions(form);
                submitWith(form, await navigator.credentials.get({ publicKey }));
              } catch (e) {
                button.disabled = false;
                showError(form);
              }
            });
          }
          const signin = document.querySelector("form[data-passkey-signin]");
          if (signin && window.PublicKeyCredential && PublicKeyCredential.isConditionalMediationAvailable
              && await PublicKeyCredential.isConditionalMediationAvailable()) {
            conditional = new AbortController();
            try {
              const publicKey = await discoverableOptions(signin);
              const credential = await navigator.credentials.get({ publicKey, mediation: "conditional", signal: conditional.signal });
              if (credential) submitWith(signin, credential);
            } catch (e) { /* aborted, or the user typed their email instead */ }
          }
        });
        """#
}
