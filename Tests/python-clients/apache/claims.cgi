#!/bin/sh
# The claims mod_auth_openidc passed to the application, one NAME=VALUE a line.
printf 'Content-Type: text/plain; charset=utf-8\r\nCache-Control: no-store\r\n\r\n'
printf 'REMOTE_USER=%s\n' "$REMOTE_USER"
env | grep '^OIDC_CLAIM_' | LC_ALL=C sort
