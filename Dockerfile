# syntax=docker/dockerfile:1
# The gateway and the fan-out worker in one image: build with Go, run on
# distroless (CA certificates and a non-root user, no shell, no package
# manager). `docker run IMAGE gateway` or `IMAGE worker`; --help lists the
# settings.

FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Static binaries (no cgo), without paths of the build machine.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/gateway ./cmd/gateway \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/worker ./cmd/worker \
 && mkdir -p /out/media

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /out/worker /usr/local/bin/
# MEDIA_DIR's mount point, owned by the runtime user, so that a named
# volume mounted there starts writable.
COPY --from=build --chown=65532:65532 /out/media /var/lib/socialgw/media
USER 65532:65532
EXPOSE 8080 9090
# The image has no shell nor curl: the gateway probes itself. A worker
# run from this image has no HTTP listener; its service turns this off.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["gateway", "healthcheck", "http://127.0.0.1:8080/readyz"]
CMD ["gateway"]
