-- wrk script: client_credentials grants, the same request every time.
-- Env: OIDC_BASIC (base64 of client_id:client_secret), OIDC_SCOPE.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic " .. os.getenv("OIDC_BASIC")
wrk.body = "grant_type=client_credentials&scope=" .. os.getenv("OIDC_SCOPE")
