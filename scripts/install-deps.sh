#!/usr/bin/env bash
# Usage: scripts/install-deps.sh build|test|bench|package|image
# Installs the Debian packages Trifactor needs for that purpose when any is
# missing (with sudo when not root). Idempotent and quiet when all is there.
set -euo pipefail
build=(pkg-config libmicrohttpd-dev libssl-dev libsodium-dev libsqlite3-dev libpq-dev libphonenumber-dev libqrencode-dev libcbor-dev libcurl4-openssl-dev libcrack2-dev cracklib-runtime espeak-ng)
case "${1:-build}" in
  build) wanted=("${build[@]}") ;;
  test)  wanted=("${build[@]}" postgresql openssl python3-venv chromium nginx-light prometheus apache2 libapache2-mod-auth-openidc) ;;
  bench) wanted=("${build[@]}" wrk nginx-light python3-cryptography) ;;
  package) wanted=("${build[@]}" dpkg-dev adduser systemd curl man-db) ;;
  image) wanted=("${build[@]}" buildah ca-certificates tzdata) ;;
  *) echo "install-deps: say build, test, bench, package or image" >&2; exit 2 ;;
esac
missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
