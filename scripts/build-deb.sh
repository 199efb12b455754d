#!/usr/bin/env bash
# make deb: trifactor_<version>_<arch>.deb with dpkg-deb alone. The three programs are release builds with
# the Swift runtime and Foundation linked statically (--static-swift-stdlib: the target machine needs no
# toolchain), in their own scratch path (.build/static) so `make run`'s builds stay as they are; Depends is
# what dpkg-shlibdeps finds the binaries load. Writes the package to DEB_OUT (default .build/deb) and prints
# its path.
#
# Layout: /usr/lib/trifactor/ holds the programs with their resource bundles beside them (Foundation finds a
# bundle next to the executable), /usr/bin/trifactord and /usr/bin/trifactor link to them, trifactor-bank (the
# demo bank, an example) stays in /usr/lib/trifactor; the systemd unit; /etc/trifactor/trifactord.env (a
# conffile); a man page for each program, made from its --help.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEB_OUT:-.build/deb}
VERSION=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/API/Dev.swift)
[ -n "$VERSION" ] || { echo "build-deb: no version in Sources/API/Dev.swift" >&2; exit 1; }
ARCH=$(dpkg --print-architecture)
for product in trifactord trifactor trifactor-bank; do
    swift build -c release --static-swift-stdlib --scratch-path .build/static --product "$product"
done
BIN=.build/static/release
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/trifactor-deb.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
ROOT=$STAGE/root
install -d "$ROOT/DEBIAN" "$ROOT/usr/lib/trifactor" "$ROOT/usr/bin" "$ROOT/usr/lib/systemd/system" \
    "$ROOT/etc/trifactor" "$ROOT/usr/share/man/man1" "$ROOT/usr/share/man/man8" "$ROOT/usr/share/doc/trifactor"
for program in trifactord trifactor trifactor-bank; do
    install -m 0755 -s "$BIN/$program" "$ROOT/usr/lib/trifactor/$program"
done
for bundle in "$BIN"/*.resources; do
    cp -R "$bundle" "$ROOT/usr/lib/trifactor/"
done
chmod -R u=rwX,go=rX "$ROOT/usr/lib/trifactor"
ln -s ../lib/trifactor/trifactord "$ROOT/usr/bin/trifactord"
ln -s ../lib/trifactor/trifactor "$ROOT/usr/bin/trifactor"
install -m 0644 packaging/trifactord.service "$ROOT/usr/lib/systemd/system/trifactord.service"
install -m 0640 packaging/trifactord.env "$ROOT/etc/trifactor/trifactord.env"
for script in postinst prerm postrm; do install -m 0755 "packaging/debian/$script" "$ROOT/DEBIAN/$script"; done
install -m 0644 packaging/debian/conffiles "$ROOT/DEBIAN/conffiles"

# A man page for each program: its --help, under the usual headings.
manpage() {  # PROGRAM SECTION SUMMARY
    local text
    text=$("$ROOT/usr/lib/trifactor/$1" --help 2>&1 | sed -e 's/\\/\\e/g' -e 's/^\./\\\&./')
    {
        echo ".TH $(echo "$1" | tr a-z A-Z) $2 \"$(date -u +%Y-%m-%d)\" \"Trifactor $VERSION\""
        echo ".SH NAME"
        echo "$1 \\- $3"
        echo ".SH DESCRIPTION"
        echo ".nf"
        echo "$text"
        echo ".fi"
        echo ".SH FILES"
        echo "/etc/trifactor/trifactord.env, /var/lib/trifactor/"
        echo ".SH SEE ALSO"
        echo "trifactord(8), trifactor(1), trifactor-bank(1); /usr/share/doc/trifactor/"
    } | gzip -9n > "$ROOT/usr/share/man/man$2/$1.$2.gz"
}
manpage trifactord 8 "Trifactor's server: accounts, sessions, multi-factor authentication and an OpenID Provider over HTTP"
manpage trifactor 1 "Trifactor's command-line client"
manpage trifactor-bank 1 "Trifactor Bank, the demo bank (an example app), in /usr/lib/trifactor"
gzip -9n < CHANGELOG.md > "$ROOT/usr/share/doc/trifactor/changelog.gz"
cat > "$ROOT/usr/share/doc/trifactor/copyright" <<'COPYRIGHT'
Trifactor, a self-hosted multi-factor authentication server.
The programs link statically the Swift runtime and Foundation (Apache License 2.0 with Runtime Library
Exception) and dynamically the Debian libraries named in the package's Depends.
COPYRIGHT

# Depends: the shared libraries the programs load, as dpkg-shlibdeps maps them to packages.
mkdir -p "$STAGE/src/debian"
printf 'Source: trifactor\n\nPackage: trifactor\nArchitecture: any\n' > "$STAGE/src/debian/control"
DEPENDS=$(cd "$STAGE/src" && dpkg-shlibdeps -O -e"$ROOT/usr/lib/trifactor/trifactord" \
    -e"$ROOT/usr/lib/trifactor/trifactor" -e"$ROOT/usr/lib/trifactor/trifactor-bank" 2>/dev/null \
    | sed -n 's/^shlibs:Depends=//p')
[ -n "$DEPENDS" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
SIZE=$(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@DEPENDS@/$DEPENDS/" -e "s/@SIZE@/$SIZE/" \
    packaging/debian/control.in > "$ROOT/DEBIAN/control"
mkdir -p "$OUT"
DEB="$OUT/trifactor_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
echo "$DEB"
