#!/usr/bin/env bash
# What DPoP (RFC 9449) costs, in one run (about two minutes): trifactord --oidc 1 on SQLite, wrk -tN -cN, each load
# for BENCH_DURATION seconds after a 2 s warm-up:
#   GET /userinfo with a bearer token, then with a DPoP-bound token and a fresh proof on every request
#   (the proof's signature, claims and ath checked, its jti recorded once);
#   client_credentials grants without a proof, then with one (each token bound to the proof's key);
#   POST /introspect of a bearer token, then of a DPoP-bound one (the resource server brings no proof: it checks
#   the token's cnf.jkt against the proof it was sent);
#   authorization-code flows, each a signed-in browser's GET /authorize and its relying party's exchange
#   (bench/oidc/flows.py, 16 threads): the plain one (client_secret_basic, a bearer token), then the FAPI 2.0 one
#   (POST /par with a private_key_jwt assertion, GET /authorize with its request_uri, the code exchanged with a
#   second assertion and a DPoP proof).
# Prints each rate, the server's CPU per request, and the cost ratio (bearer rate / DPoP rate; the target is at
# most 1.5). Proofs are made ahead with python3-cryptography (bench/oidc/dpop_proofs.py), one per request.
# Knobs (env): TRIFACTORD, BENCH_DURATION (s, 8), BENCH_CONNECTIONS (16), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
export TRIFACTOR_MIGRATE_ON_START=always TRIFACTOR_ARGON2_OPSLIMIT=1 TRIFACTOR_ARGON2_MEMORY_KIB=8192
TRIFACTORD=${TRIFACTORD:-.build/release/trifactord}
DUR=${BENCH_DURATION:-8}
N=${BENCH_CONNECTIONS:-16}
die() { echo "bench: $*" >&2; exit 1; }
# A proof's iat is when it was made, and proofs are taken for 60 s: a load must end well before.
[ "$DUR" -le 40 ] || die "BENCH_DURATION must be at most 40 s: the proofs made before a load expire 60 s after"
for tool in wrk curl python3; do command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh bench)"; done
python3 -c 'import cryptography' 2>/dev/null || die "python3-cryptography is missing (scripts/install-deps.sh bench)"
[ -x "$TRIFACTORD" ] || die "no $TRIFACTORD (swift build -c release --product trifactord)"
TMP=$(mktemp -d /tmp/trifactor-dpop.XXXXXX)
SERVER=
cleanup() {
    [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "bench: outputs kept in $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
DB="sqlite:$TMP/t.db"
"$TRIFACTORD" clients create --name Bench --id bench --redirect-uris "http://127.0.0.1:9/cb" \
    --grants "authorization_code refresh_token client_credentials" --scopes "openid email offline_access reports" \
    --first-party --json --database-url "$DB" --key-file "$TMP/key" > "$TMP/client.json" || die "clients create failed"
python3 bench/oidc/dpop_proofs.py key "$TMP/fapi.jwk"
python3 bench/oidc/flows.py jwks "$TMP/fapi.jwk" "$TMP/fapi.jwks"
# FAPI 2.0 clients, all with the same signing key: trifactord takes 60 pushed requests of a client at once, then
# 10 a second, so the flows go to 64 clients in turn.
FAPI_CLIENTS=
for i in $(seq 64); do
    "$TRIFACTORD" clients create --name "Bench FAPI $i" --id "bench-fapi-$i" --redirect-uris "http://127.0.0.1:9/cb" \
        --auth-method private_key_jwt --jwks-file "$TMP/fapi.jwks" --fapi2 --first-party --grants authorization_code \
        --scopes openid --json --database-url "$DB" --key-file "$TMP/key" > /dev/null || die "clients create (FAPI) failed"
    FAPI_CLIENTS=${FAPI_CLIENTS:+$FAPI_CLIENTS,}bench-fapi-$i
done
SECRET=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["client_secret"])' "$TMP/client.json")
BASIC=$(printf 'bench:%s' "$SECRET" | base64 -w0)
"$TRIFACTORD" serve --oidc 1 --public-url "$BASE" --listen "127.0.0.1:$PORT" --dev --database-url "$DB" \
    --key-file "$TMP/key" --signin-ip-burst 1000000 --signin-ip-rate 1000000 --signup-ip-burst 1000000 \
    --signup-ip-rate 1000000 >/dev/null 2>"$TMP/server.log" &
SERVER=$!
ready=0
for _ in $(seq 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/ready" || true)" = 200 ] && { ready=1; break; }
    sleep 0.1
done
[ "$ready" = 1 ] || { tail -5 "$TMP/server.log" >&2; die "trifactord did not start"; }
python3 bench/oidc/hosted.py families "$BASE" "$TMP/families" --count 1 --client bench --secret="$SECRET" >/dev/null
REFRESH=$(head -1 "$TMP/families")
proofs() { python3 bench/oidc/dpop_proofs.py proofs "$TMP/dpop.jwk" "$@"; }
python3 bench/oidc/dpop_proofs.py key "$TMP/dpop.jwk"
# A bearer access token, then (refreshing again, with a proof) a DPoP-bound one, for the same user.
BEARER_JSON=$(curl -fsS -u "bench:$SECRET" -d grant_type=refresh_token -d "refresh_token=$REFRESH" "$BASE/token")
BEARER=$(echo "$BEARER_JSON" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
REFRESH=$(echo "$BEARER_JSON" | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh_token"])')
proofs POST "$BASE/token" "$TMP/one" --count 1
BOUND=$(curl -fsS -u "bench:$SECRET" -H "DPoP: $(cat "$TMP/one-1")" -d grant_type=refresh_token -d "refresh_token=$REFRESH" \
    "$BASE/token" | python3 -c 'import json,sys; d = json.load(sys.stdin); assert d["token_type"] == "DPoP"; print(d["access_token"])')

cpu() { python3 bench/oidc/cpu.py "$SERVER"; }
# run NAME: wrk with the DPOP_* environment; NAME.txt holds its output, NAME.cpu the server's CPU seconds.
run() {
    local name=$1 url=$2 c0
    c0=$(cpu)
    timeout 120 wrk --latency -t"$N" -c"$N" -d"$3" -s bench/oidc/dpop.lua "$url" > "$TMP/$name.txt" 2>&1 \
        || { cat "$TMP/$name.txt" >&2; die "wrk ($name) failed"; }
    python3 -c "print($(cpu) - $c0)" > "$TMP/$name.cpu"
    grep -q '^errors 0$' "$TMP/$name.txt" || { cat "$TMP/$name.txt" >&2; die "$name: answers other than 200"; }
    ! grep -q 'Socket errors' "$TMP/$name.txt" || { cat "$TMP/$name.txt" >&2; die "$name: socket errors"; }
}
rate() { sed -n 's/^Requests\/sec: *//p' "$TMP/$1.txt"; }
# Proofs for a load: enough for the bearer rate of the same endpoint (DPoP is slower), a tenth more.
enough() { python3 -c "import math; print(math.ceil($1 * $2 * 1.1 / $N) + 50)"; }

echo "bench: trifactord $("$TRIFACTORD" --version | cut -d' ' -f2), SQLite, wrk -t$N -c$N, ${DUR} s a load"
export DPOP_METHOD=GET DPOP_AUTH="Bearer $BEARER" DPOP_PROOFS= DPOP_BODY=
run userinfo-bearer-warmup "$BASE/userinfo" 2s
run userinfo-bearer "$BASE/userinfo" "${DUR}s"
proofs GET "$BASE/userinfo" "$TMP/warm" --threads "$N" --count "$(enough "$(rate userinfo-bearer)" 2)" --token "$BOUND"
proofs GET "$BASE/userinfo" "$TMP/ui" --threads "$N" --count "$(enough "$(rate userinfo-bearer)" "$DUR")" --token "$BOUND"
export DPOP_AUTH="DPoP $BOUND" DPOP_PROOFS="$TMP/warm"
run userinfo-dpop-warmup "$BASE/userinfo" 2s
export DPOP_PROOFS="$TMP/ui"
run userinfo-dpop "$BASE/userinfo" "${DUR}s"

export DPOP_METHOD=POST DPOP_AUTH="Basic $BASIC" DPOP_BODY="grant_type=client_credentials&scope=reports" DPOP_PROOFS=
run cc-bearer-warmup "$BASE/token" 2s
run cc-bearer "$BASE/token" "${DUR}s"
proofs POST "$BASE/token" "$TMP/warmcc" --threads "$N" --count "$(enough "$(rate cc-bearer)" 2)"
proofs POST "$BASE/token" "$TMP/cc" --threads "$N" --count "$(enough "$(rate cc-bearer)" "$DUR")"
export DPOP_PROOFS="$TMP/warmcc"
run cc-dpop-warmup "$BASE/token" 2s
export DPOP_PROOFS="$TMP/cc"
run cc-dpop "$BASE/token" "${DUR}s"

export DPOP_AUTH="Basic $BASIC" DPOP_BODY="token=$BEARER" DPOP_PROOFS=
run introspect-bearer-warmup "$BASE/introspect" 2s
run introspect-bearer "$BASE/introspect" "${DUR}s"
export DPOP_BODY="token=$BOUND"
run introspect-dpop-warmup "$BASE/introspect" 2s
run introspect-dpop "$BASE/introspect" "${DUR}s"

# flows NAME KIND SECONDS COUNT [ARGS]: bench/oidc/flows.py; NAME.flows holds its figures.
flows() {
    local name=$1 kind=$2 seconds=$3 count=$4
    shift 4
    python3 bench/oidc/flows.py run "$BASE" "$TMP/$name.flows" --kind "$kind" --cookies "$TMP/cookies" \
        --threads "$N" --seconds "$seconds" --count "$count" --server-pids "$SERVER" "$@"
    grep -q '^failures 0$' "$TMP/$name.flows" || { cat "$TMP/$name.flows" >&2; die "$name: flows that failed"; }
}
flow_rate() { python3 -c "import sys; d = dict(l.split(' ', 1) for l in open(sys.argv[1])); print(int(d['flows']) / float(d['elapsed']))" "$TMP/$1.flows"; }
python3 bench/oidc/flows.py session "$BASE" "$TMP/cookies" --client bench --secret="$SECRET"
flows code-bearer-warmup plain 2 100000 --client bench --secret="$SECRET"
flows code-bearer plain "$DUR" 100000 --client bench --secret="$SECRET"
FAPI=(--client "$FAPI_CLIENTS" --signing-key "$TMP/fapi.jwk" --dpop-key "$TMP/dpop.jwk")
# Material for as many flows as the plain rate would give (the FAPI flow is slower), a tenth more.
flow_count() { python3 -c "import math; print(math.ceil($(flow_rate code-bearer) * $1 * 1.1) + 100)"; }
flows code-dpop-warmup fapi 2 "$(flow_count 2)" "${FAPI[@]}"
flows code-dpop fapi "$DUR" "$(flow_count "$DUR")" "${FAPI[@]}"

python3 - "$TMP" "$DUR" <<'PY'
import sys
tmp = sys.argv[1]
def figures(name):
    try:
        d = dict(line.rstrip("\n").split(" ", 1) for line in open(f"{tmp}/{name}.flows"))
        return int(d["flows"]) / float(d["elapsed"]), float(d["server_cpu"]) / max(int(d["flows"]), 1) * 1e6
    except FileNotFoundError:
        pass
    text = open(f"{tmp}/{name}.txt").read()
    rate = float(text.split("Requests/sec:")[1].split()[0])
    ok = int(text.split("\nok ")[1].split()[0])
    cpu = float(open(f"{tmp}/{name}.cpu").read())
    return rate, cpu / max(ok, 1) * 1e6
print(f"{'load':52} {'per second':>11} {'server CPU µs each':>19}")
verdicts = []
for label, bearer, dpop in (("GET /userinfo", "userinfo-bearer", "userinfo-dpop"),
                            ("client_credentials grant", "cc-bearer", "cc-dpop"),
                            ("POST /introspect", "introspect-bearer", "introspect-dpop"),
                            ("code flow", "code-bearer", "code-dpop")):
    (rb, cb), (rd, cd) = figures(bearer), figures(dpop)
    plain, bound = (", plain", ", PAR + private_key_jwt + DPoP") if bearer == "code-bearer" else (", bearer", ", DPoP")
    print(f"{label + plain:52} {rb:11,.0f} {cb:19,.0f}")
    print(f"{label + bound:52} {rd:11,.0f} {cd:19,.0f}")
    ratio = rb / rd
    if bearer in ("userinfo-bearer", "cc-bearer"):
        verdicts.append(f"{'PASS' if ratio <= 1.5 else 'MISS'} {label}: DPoP costs {ratio:.2f}x the bearer rate "
                        f"({cd / cb:.2f}x the server CPU a request); target at most 1.5x")
    elif bearer == "introspect-bearer":
        verdicts.append(f"INFO {label}: a DPoP-bound token costs {ratio:.2f}x a bearer one "
                        f"({cd / cb:.2f}x the server CPU); no proof is checked here (the resource server does)")
    else:
        verdicts.append(f"INFO {label}: the FAPI 2.0 flow costs {ratio:.2f}x the plain one by rate "
                        f"({cd / cb:.2f}x the server CPU a flow): a third request (PAR), two assertions "
                        f"and one proof checked, three jti recorded")
print("\n".join(verdicts))
driver = {n: dict(line.rstrip("\n").split(" ", 1) for line in open(f"{tmp}/{n}.flows")) for n in ("code-bearer", "code-dpop")}
print("flows.py's own CPU over the flows (of the 2 cores the machine has): "
      + ", ".join(f"{k} {float(d['driver_cpu']) / float(d['elapsed']):.2f} cores"
                  for k, d in (("plain", driver["code-bearer"]), ("FAPI", driver["code-dpop"]))))
PY
