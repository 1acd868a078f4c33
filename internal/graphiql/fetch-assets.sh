#!/usr/bin/env bash
# fetch-assets.sh downloads the GraphiQL IDE and its React runtime from the
# npm registry and copies the browser (UMD) builds into ./assets, where they
# are embedded into the gateway binary (see graphiql.go). Run it with
# `go generate ./internal/graphiql` after changing a version below, then
# update the pinned hashes here, in README.md and in graphiql.go.
#
# Requires: npm (registry access), tar, sha256sum.
set -euo pipefail

GRAPHIQL_VERSION=4.1.2
REACT_VERSION=18.2.0

cd "$(dirname "$0")"
dest=$PWD/assets
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(
	cd "$tmp"
	npm pack --silent "graphiql@${GRAPHIQL_VERSION}" "react@${REACT_VERSION}" "react-dom@${REACT_VERSION}" >/dev/null
	for pkg in "graphiql-${GRAPHIQL_VERSION}" "react-${REACT_VERSION}" "react-dom-${REACT_VERSION}"; do
		mkdir "${pkg%-*}"
		tar -xzf "$pkg.tgz" -C "${pkg%-*}" --strip-components=1
	done
)

mkdir -p "$dest"
# graphiql's UMD bundle (graphiql.min.js == dist/index.umd.js) bundles
# @graphiql/react, graphql, codemirror and the fonts (as data: URLs); its only
# runtime globals are window.React and window.ReactDOM.
install -m 0644 "$tmp/graphiql/graphiql.min.js" "$dest/graphiql-${GRAPHIQL_VERSION}.min.js"
install -m 0644 "$tmp/graphiql/graphiql.min.css" "$dest/graphiql-${GRAPHIQL_VERSION}.min.css"
install -m 0644 "$tmp/react/umd/react.production.min.js" "$dest/react-${REACT_VERSION}.production.min.js"
install -m 0644 "$tmp/react-dom/umd/react-dom.production.min.js" "$dest/react-dom-${REACT_VERSION}.production.min.js"
install -m 0644 "$tmp/graphiql/LICENSE" "$dest/LICENSE.graphiql"
install -m 0644 "$tmp/react/LICENSE" "$dest/LICENSE.react"
install -m 0644 "$tmp/react-dom/LICENSE" "$dest/LICENSE.react-dom"

# These hashes equal the upstream npm files (and the SRI hashes gqlgen's
# playground package pins for the same files on cdn.jsdelivr.net).
# When upgrading, run with SKIP_VERIFY=1 and copy the printed hashes here.
if [ -n "${SKIP_VERIFY:-}" ]; then
	(cd "$dest" && sha256sum ./*.js ./*.css)
	exit 0
fi
(
	cd "$dest"
	sha256sum -c - <<SUMS
867226ba8af5ce7949903fc53932f78dac9f4bfc6cc8da0fd3869b8bc6c5256b  graphiql-${GRAPHIQL_VERSION}.min.js
30487e07635d312a63f647b140d37740a73c53332b0975bf4b1fe985ca6ec885  graphiql-${GRAPHIQL_VERSION}.min.css
4b4969fa4ef3594324da2c6d78ce8766fbbc2fd121fff395aedf997db0a99a06  react-${REACT_VERSION}.production.min.js
21758ed084cd0e37e735722ee4f3957ea960628a29dfa6c3ce1a1d47a2d6e4f7  react-dom-${REACT_VERSION}.production.min.js
SUMS
)
