# wasmsched image: a static binary on distroless, running as nonroot.
#
#   docker build -t wasmsched:dev .
#
# The policy modules are committed .wasm files embedded by package policies,
# so the build needs Go only (no TinyGo). See deploy/README.md.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, in their own layer: it is rebuilt only when go.mod or go.sum
# change, not on every source edit.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /wasmsched ./cmd/wasmsched

FROM gcr.io/distroless/static:nonroot
COPY --from=build /wasmsched /wasmsched
# distroless's nonroot user, numeric so that runAsNonRoot can verify it.
USER 65532:65532
ENTRYPOINT ["/wasmsched"]
CMD ["run"]
