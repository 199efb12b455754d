import Foundation

/// The bank's pages: one layout, labelled fields with their errors announced
/// next to them, buttons named for what they do. No inline script or style.
enum Page {
    static func layout(_ title: String, session: (any Viewer)?, devPhone: URL?, notice: String? = nil, refresh: Int? = nil, idle: TimeInterval? = nil,
                       passkeys: Bool = false, _ body: [HTML]) -> HTML {
        var head: [HTML] = [
            .element("meta", ["charset": "utf-8"]),
            .element("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"]),
            .element("title", [:], [.text("\(title) · Trifactor Bank")]),
            .element("link", ["rel": "stylesheet", "href": "/static/bank.css"]),
        ]
        if let refresh { head.append(.element("meta", ["http-equiv": "refresh", "content": String(refresh)])) }
        if idle != nil { head.append(.element("script", ["src": "/static/bank.js", "defer": ""])) }
        if passkeys, let session {
            head.append(.element("meta", ["name": "csrf-token", "content": session.csrf]))
            head.append(.element("script", ["src": "/static/passkey.js", "defer": ""]))
        }
        var nav: [HTML] = [.element("a", ["href": "/", "class": "brand"], ["Trifactor Bank"])]
        if let session, session.isSignedIn {
            nav.append(.element("a", ["href": "/accounts"], ["Accounts"]))
            nav.append(.element("a", ["href": "/transfer"], ["Transfer"]))
            nav.append(.element("a", ["href": "/settings"], ["Settings"]))
            nav.append(form("/signout", session, [button("Sign out", kind: "link")]))
        }
        if let devPhone { nav.append(.element("a", ["href": devPhone.absoluteString, "target": "_blank", "rel": "noopener"], ["Dev phone"])) }
        var main: [HTML] = [.element("h1", [:], [.text(title)])]
        if let notice { main.append(.element("p", ["class": "notice", "role": "status"], [.text(notice)])) }
        if passkeys { main.append(.element("p", ["id": "passkey-error", "class": "error", "role": "alert", "tabindex": "-1", "hidden": ""])) }
        main += body
        return .document(head, [.element("header", [:], [.element("nav", ["aria-label": "Main"], nav)]), .element("main", [:], main)],
                         bodyAttributes: ["data-idle": idle.map { String(Int($0)) }])
    }

    /// A POST form with the viewer's CSRF token.
    static func form(_ action: String, _ session: any Viewer, _ children: [HTML]) -> HTML {
        .element("form", ["method": "post", "action": action],
                 [.element("input", ["type": "hidden", "name": CSRF.field, "value": session.csrf])] + children)
    }

    /// A labelled input with its error (if any) announced next to it.
    static func field(_ label: String, name: String, type: String = "text", value: String? = nil, error: String? = nil,
                      autocomplete: String? = nil, inputmode: String? = nil, required: Bool = true, autofocus: Bool = false) -> HTML {
        let id = "f-\(name)"
        var children: [HTML] = [.element("label", ["for": id], [.text(label)]),
                                .element("input", ["id": id, "name": name, "type": type, "value": value, "autocomplete": autocomplete,
                                                   "inputmode": inputmode, "required": required ? "" : nil, "autofocus": autofocus ? "" : nil,
                                                   "aria-invalid": error == nil ? nil : "true", "aria-describedby": error == nil ? nil : "\(id)-error"])]
        if let error { children.append(.element("p", ["id": "\(id)-error", "class": "error", "role": "alert"], [.text(error)])) }
        return .element("div", ["class": "field"], children)
    }

    static func select(_ label: String, name: String, options: [(value: String, label: String)], selected: String? = nil, error: String? = nil) -> HTML {
        let id = "f-\(name)"
        var children: [HTML] = [.element("label", ["for": id], [.text(label)]),
                                .element("select", ["id": id, "name": name, "aria-describedby": error == nil ? nil : "\(id)-error"],
                                         options.map { .element("option", ["value": $0.value, "selected": $0.value == selected ? "" : nil], [.text($0.label)]) })]
        if let error { children.append(.element("p", ["id": "\(id)-error", "class": "error", "role": "alert"], [.text(error)])) }
        return .element("div", ["class": "field"], children)
    }

    static func button(_ label: String, name: String? = nil, value: String? = nil, kind: String = "primary") -> HTML {
        .element("button", ["type": "submit", "name": name, "value": value, "class": kind], [.text(label)])
    }

    /// A button the passkey script drives (`data-passkey` names the ceremony).
    static func passkeyButton(_ label: String, flow: String, factor: String? = nil, kind: String = "secondary") -> HTML {
        .element("button", ["type": "button", "class": kind, "data-passkey": flow, "data-factor": factor], [.text(label)])
    }

    static func link(_ label: String, _ href: String) -> HTML { .element("a", ["href": href], [.text(label)]) }

    static func paragraph(_ text: String, class name: String? = nil) -> HTML { .element("p", ["class": name], [.text(text)]) }

    /// The only script of signed-in pages: after `data-idle` seconds without
    /// activity, or when the tab comes back after being hidden that long,
    /// it leaves for /confirm, so balances are not left on screen.
    static let script = """
        (function () {
          var idle = Number(document.body.dataset.idle || 0) * 1000;
          if (!idle) return;
          var leave = function () { window.location.assign("/confirm"); };
          var timer = setTimeout(leave, idle + 500);
          var hiddenAt = null;
          document.addEventListener("visibilitychange", function () {
            if (document.hidden) { hiddenAt = Date.now(); return; }
            if (hiddenAt !== null && Date.now() - hiddenAt > idle) leave();
          });
          ["keydown", "pointerdown"].forEach(function (name) {
            document.addEventListener(name, function () { clearTimeout(timer); timer = setTimeout(leave, idle + 500); });
          });
        })();
        """

    /// The stylesheet: phone first, readable on a desktop.
    static let css = """
        *{box-sizing:border-box}body{margin:0;font:17px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;background:#f4f6f8}
        header{background:#0b3d5c;color:#fff}nav{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;max-width:44rem;margin:0 auto;padding:.75rem 1rem}
        nav a,nav .link{color:#fff}nav form{display:inline}.brand{font-weight:700;margin-right:auto;text-decoration:none}
        main{max-width:44rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.5rem 0 1rem}
        .field{margin:0 0 1rem}label{display:block;font-weight:600;margin-bottom:.25rem}
        input,select{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #8a96a3;border-radius:.4rem;background:#fff}
        input[aria-invalid=true]{border-color:#b42318}.error{color:#b42318;margin:.3rem 0 0}
        button{font:inherit;padding:.65rem 1.1rem;border-radius:.4rem;border:1px solid #0b3d5c;cursor:pointer;margin:.25rem .5rem .25rem 0}
        .primary{background:#0b5c8a;color:#fff}.secondary{background:#fff;color:#0b3d5c}.link{background:none;border:none;padding:0;text-decoration:underline;color:#0b3d5c}
        .notice{background:#e8f1fb;border-left:4px solid #0b5c8a;padding:.6rem .8rem}.card{background:#fff;border-radius:.6rem;padding:1rem;margin:0 0 1rem;box-shadow:0 1px 2px #0002}
        .sitekey{display:flex;gap:1rem;align-items:center}.sitekey img{width:96px;height:96px}.number{font-size:4rem;font-weight:800;letter-spacing:.1em;text-align:center}
        table{width:100%;border-collapse:collapse;background:#fff}th,td{padding:.5rem;border-bottom:1px solid #dde3ea;text-align:left}td.amount,th.amount{text-align:right;font-variant-numeric:tabular-nums}
        .pictures{display:grid;grid-template-columns:repeat(4,1fr);gap:.5rem;border:0;padding:0}.pictures label{font-weight:400;text-align:center}
        .pictures input{width:auto}.pictures img{width:100%;max-width:72px;display:block;margin:0 auto}
        a:focus,button:focus,input:focus,select:focus{outline:3px solid #f59e0b;outline-offset:2px}
        """
}
