/// The bank's script (served as /static/bank.js, never inline; every page
/// loads it, and every page works without it):
/// - pages that show money (`data-idle` on the body) blur it while the tab
///   is hidden, and leave for /confirm after the idle time without activity
///   or when the tab comes back after being hidden that long;
/// - the transfer form keeps "To" on another account than "From";
/// - `data-copy` buttons copy the text of the element they name, and
///   `data-print` buttons print the page (the print sheet keeps the codes).
enum BankScript {
    static let source = """
        "use strict";
        (function () {
          var body = document.body;
          var idle = Number(body.dataset.idle || 0) * 1000;
          if (idle) {
            var leave = function () { window.location.assign("/confirm"); };
            var timer = setTimeout(leave, idle + 500);
            var hiddenAt = null;
            document.addEventListener("visibilitychange", function () {
              if (document.hidden) { hiddenAt = Date.now(); body.classList.add("veiled"); return; }
              if (hiddenAt !== null && Date.now() - hiddenAt > idle) { leave(); return; }
              body.classList.remove("veiled");
            });
            ["keydown", "pointerdown"].forEach(function (name) {
              document.addEventListener(name, function () { clearTimeout(timer); timer = setTimeout(leave, idle + 500); });
            });
          }
          var from = document.getElementById("f-from"), to = document.getElementById("f-to");
          if (from && to) {
            from.addEventListener("change", function () {
              if (to.value !== from.value) return;
              for (var i = 0; i < to.options.length; i++) {
                if (to.options[i].value !== from.value) { to.value = to.options[i].value; break; }
              }
            });
          }
          document.querySelectorAll("button[data-copy]").forEach(function (button) {
            button.hidden = false;
            button.addEventListener("click", function () {
              var source = document.getElementById(button.dataset.copy);
              var status = document.getElementById(button.dataset.status || "");
              var text = Array.prototype.map.call(source.querySelectorAll("code"), function (c) { return c.textContent; }).join("\\n");
              var done = function (ok) { if (status) status.textContent = ok ? "Copied." : "Copying did not work here: select the codes and copy them."; };
              if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(false); });
              else done(false);
            });
          });
          document.querySelectorAll("button[data-print]").forEach(function (button) {
            button.hidden = false;
            button.addEventListener("click", function () { window.print(); });
          });
        })();
        """
}
