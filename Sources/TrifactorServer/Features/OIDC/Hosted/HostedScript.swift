/// The hosted pages' one script (served as a file: the policy forbids
/// inline script): posts a `form_post` answer to the client at once, the
/// button under it being the way without script.
enum HostedScript {
    static let source = """
        "use strict";
        document.addEventListener("DOMContentLoaded", () => {
          const form = document.querySelector("form[data-auto-submit]");
          if (form) form.submit();
        });
        """
}
