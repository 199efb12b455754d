-- wrk script: sign in (POST /v1/sessions) with the correct password of the
-- benchmark account, given in BENCH_EMAIL and BENCH_PASSWORD.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = string.format('{"email":"%s","password":"%s"}', os.getenv("BENCH_EMAIL"), os.getenv("BENCH_PASSWORD"))
