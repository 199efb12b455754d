#!/usr/bin/env bash
# make image: an OCI image of trifactord built with buildah from scratch (no base image): the static release
# binary and its resource bundles, exactly the shared libraries it loads (ldd, plus the NSS modules glibc
# opens for DNS), CA certificates, time-zone data, cracklib's dictionary, a non-root user (10001), /data as
# the volume (the SQLite database and the key file), the health check `trifactord probe`, and labels with the
# version and source commit. Prints the image's name and size. Storage: buildah's vfs driver.
# IMAGE_TEST=1 then checks its root file system under chroot (podman cannot run containers here): --version,
# a migration, and a short serve answering /ready through the image's own probe.
set -euo pipefail
cd "$(dirname "$0")/.."
export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs}
VERSION=$(sed -n 's/.*static let current = "\(.*\)".*/\1/p' Sources/API/Dev.swift)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
NAME=${IMAGE_NAME:-localhost/trifactor:$VERSION}
[ "${IMAGE_TEST:-0}" != 1 ] || [ "$(id -u)" = 0 ] || { echo "image: IMAGE_TEST=1 needs root (mount, chroot)" >&2; exit 1; }
swift build -c release --static-swift-stdlib --scratch-path .build/static --product trifactord >&2
BIN=.build/static/release
ctr=$(buildah from --format docker scratch)
trap 'buildah umount "$ctr" >/dev/null 2>&1 || true; buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
root=$(buildah mount "$ctr")
install -d "$root/usr/lib/trifactor" "$root/etc/ssl/certs" "$root/usr/share" "$root/var/cache" "$root/tmp" "$root/data" \
    "$root/proc" "$root/dev"
chmod 1777 "$root/tmp"
install -m 0755 -s "$BIN/trifactord" "$root/usr/lib/trifactor/trifactord"
cp -R "$BIN/Trifactor_TrifactorServer.resources" "$BIN/Trifactor_Messaging.resources" "$root/usr/lib/trifactor/"
# The libraries it loads, at the paths ldd resolves them to (with the links that name them), and the NSS
# modules glibc loads for host names.
if ldd "$BIN/trifactord" | grep -q 'not found'; then echo "image: a library trifactord loads is missing" >&2; exit 1; fi
libs=$(ldd "$BIN/trifactord" | awk '/=>/ {print $3} /^\t\// {print $1}')
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
nss=$(ls "/lib/$multiarch/libnss_dns.so.2" "/lib/$multiarch/libnss_files.so.2" "/lib/$multiarch/libresolv.so.2" 2>/dev/null || true)
for lib in $libs $nss; do
    install -D -m 0755 "$(readlink -f "$lib")" "$root$(readlink -f "$lib")"
    [ "$(readlink -f "$lib")" = "$lib" ] || { mkdir -p "$root$(dirname "$lib")"; ln -sf "$(readlink -f "$lib")" "$root$lib"; }
done
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
cp -R /usr/share/zoneinfo "$root/usr/share/"
cp -R /var/cache/cracklib "$root/var/cache/"
printf 'root:x:0:0:root:/root:/sbin/nologin\ntrifactor:x:10001:10001:Trifactor:/data:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\ntrifactor:x:10001:\n' > "$root/etc/group"
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"
chown 10001:10001 "$root/data"
chmod 0700 "$root/data"
buildah config \
    --user 10001:10001 --workingdir /data --volume /data --port 8080 \
    --env TRIFACTOR_DATABASE_URL=sqlite:/data/trifactor.db --env TRIFACTOR_KEY_FILE=/data/trifactor.key \
    --env TRIFACTOR_LISTEN=0.0.0.0:8080 --env TZ=UTC \
    --entrypoint '["/usr/lib/trifactor/trifactord"]' --cmd serve \
    --healthcheck 'CMD ["/usr/lib/trifactor/trifactord", "probe"]' \
    --healthcheck-interval 10s --healthcheck-timeout 5s --healthcheck-retries 3 \
    --label org.opencontainers.image.title=trifactord --label "org.opencontainers.image.version=$VERSION" \
    --label "org.opencontainers.image.revision=$COMMIT" --label org.opencontainers.image.source=git \
    --label org.opencontainers.image.licenses=Apache-2.0 \
    "$ctr"
if [ "${IMAGE_TEST:-0}" = 1 ]; then
    # What a container runtime gives a process: /proc (Swift reads its arguments there) and /dev/urandom.
    server=""
    trap '[ -z "$server" ] || kill "$server" 2>/dev/null; umount -l "$root/proc" "$root/dev/urandom" "$root/dev/null" 2>/dev/null || true; buildah umount "$ctr" >/dev/null 2>&1 || true; buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
    mount -t proc proc "$root/proc"
    touch "$root/dev/urandom" "$root/dev/null"
    mount --bind /dev/urandom "$root/dev/urandom"
    mount --bind /dev/null "$root/dev/null"
    chroot --userspec=10001:10001 "$root" /usr/lib/trifactor/trifactord --version
    printf '%s' "$(head -c 32 /dev/urandom | base64)" > "$root/data/trifactor.key"
    chown 10001:10001 "$root/data/trifactor.key"; chmod 600 "$root/data/trifactor.key"
    chroot --userspec=10001:10001 "$root" /usr/lib/trifactor/trifactord migrate \
        --database-url sqlite:/data/trifactor.db
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    chroot --userspec=10001:10001 "$root" /usr/lib/trifactor/trifactord serve --database-url sqlite:/data/trifactor.db \
        --key-file /data/trifactor.key --listen "127.0.0.1:$port" 2>"${TMPDIR:-/tmp}/image-serve.log" &
    server=$!
    ok=0
    for _ in $(seq 50); do
        if chroot --userspec=10001:10001 "$root" /usr/lib/trifactor/trifactord probe "127.0.0.1:$port"; then ok=1; break; fi
        sleep 0.2
    done
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
    [ "$ok" = 1 ] || { tail -5 "${TMPDIR:-/tmp}/image-serve.log" >&2; echo "image: the image's trifactord did not get ready" >&2; exit 1; }
    echo "image: under chroot: --version, a migration, and serve ready (the image's own probe)" >&2
    rm -f "$root/data/trifactor.key" "$root/data/trifactor.db"*
    umount "$root/proc" "$root/dev/urandom" "$root/dev/null"
    rm -f "$root/dev/urandom" "$root/dev/null"
fi
buildah umount "$ctr" >/dev/null
buildah commit --format docker --rm "$ctr" "$NAME" >/dev/null
trap - EXIT
echo "$NAME $(buildah images --format '{{.Size}}' "$NAME")"
