# kconnectd container image (issue 6).
#
#   docker build -t kconnectd .
#   docker run --rm -p 8083:8083 \
#     -e CONNECT_BOOTSTRAP_SERVERS=kafka:9092 -e CONNECT_GROUP_ID=my-connect kconnectd
#
# Two stages on Debian 12: `build` has the -dev packages (the build deps of
# scripts/setup) and compiles a Release binary; the runtime stage has only the
# shared libraries that binary links against. Any worker property can be set
# with a CONNECT_* environment variable (deploy/README.md, "Environment").
# CI builds and runs it with podman (scripts/container-test):
#   podman build --pull=never --format docker -t kconnectd .
# (--format docker: podman's default OCI format drops the HEALTHCHECK.)

# ---------------------------------------------------------------------------
FROM debian:bookworm AS build

ARG DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      cmake ninja-build g++ pkg-config \
      librdkafka-dev libboost-dev libboost-system-dev libspdlog-dev \
      nlohmann-json3-dev libcli11-dev catch2 libbenchmark-dev libpq-dev libpcre2-dev libssl-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .
# The commit the daemon reports (`kconnectd version`): .git is not in the
# build context (.dockerignore).
ARG KC_GIT_COMMIT=unknown
# Only the daemon is built; the test suites are configured (the top-level
# CMakeLists.txt always adds tests/) but not compiled. -s strips the binary.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKC_BENCH=OFF -DKC_GIT_COMMIT="${KC_GIT_COMMIT}" \
 && cmake --build /build --target kconnectd \
 && install -D -m 0755 -s /build/cmd/kconnectd/kconnectd /out/usr/bin/kconnectd \
 && echo "kconnectd links against:" && ldd /out/usr/bin/kconnectd

# ---------------------------------------------------------------------------
FROM debian:bookworm-slim

ARG DEBIAN_FRONTEND=noninteractive
# librdkafka1 pulls libssl3, libsasl2-2, libzstd1, liblz4-1 and zlib1g.
# libspdlog1.10 and libfmt9: compiled spdlog (Debian builds it against the
# system fmt). libboost-system1.74.0: only if the linker keeps the (stub)
# Boost.System library; it is 30 kB, so it is always installed.
# libpq5: the PostgreSQL sink.
# ca-certificates: TLS to brokers (security.protocol=SSL).
# No curl: the HEALTHCHECK uses bash's /dev/tcp (bash is in every Debian base).
# /var/cache/apt: apt's package caches (tens of MB) on a base without the
# official images' docker-clean apt setting (e.g. a debootstrap rootfs).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      librdkafka1 libspdlog1.10 libfmt9 libboost-system1.74.0 libpq5 \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log

RUN groupadd --system --gid 10001 kconnectd \
 && useradd --system --uid 10001 --gid kconnectd --home-dir /var/lib/kconnectd \
      --shell /usr/sbin/nologin kconnectd \
 && install -d -o kconnectd -g kconnectd -m 0750 /var/lib/kconnectd \
 && install -d -m 0755 /etc/kconnectd

COPY --from=build /out/usr/bin/kconnectd /usr/bin/kconnectd
COPY deploy/worker.properties /etc/kconnectd/worker.properties

# Fail the image build, not the first start, when a shared library is missing.
RUN if ldd /usr/bin/kconnectd | grep -q "not found"; then \
      ldd /usr/bin/kconnectd; echo "missing shared libraries in the runtime stage" >&2; exit 1; \
    fi

# The `kconnectd --version` output, as labels and in /etc/kconnectd/version.
# Late, so that changing them reuses every layer with content above:
# scripts/container-test builds once, runs `kconnectd --version` in the
# image, and builds again with its output here. The RUN is what makes new
# values rebuild from here on: podman (buildah 1.28) keys its layer cache on
# build args only for RUN steps, and would reuse a LABEL layer with old ones.
ARG KC_VERSION=unknown
ARG KC_VERSION_TEXT=unknown
RUN printf '%s\n' "${KC_VERSION_TEXT}" > /etc/kconnectd/version
LABEL org.opencontainers.image.title="kconnectd" \
      org.opencontainers.image.version="${KC_VERSION}" \
      io.kconnectd.version="${KC_VERSION_TEXT}"

USER kconnectd:kconnectd
WORKDIR /var/lib/kconnectd
EXPOSE 8083
# GET /health answers 503 while the worker starts (joins the group, reads the
# config topic) and 200 once it serves requests; start-period covers startup.
# HEALTH_PORT: the REST port when `listeners` is not 8083 (plain HTTP only;
# with an https listener, probe from outside or add curl).
ENV HEALTH_PORT=8083
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${HEALTH_PORT} && printf 'GET /health HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && read -r _ code _ <&3 && [ \"$code\" = 200 ]"]
# SIGTERM: stop tasks (task.shutdown.graceful.timeout.ms), commit offsets,
# LeaveGroup, exit. Give `docker stop` more than the default 10 s
# (`docker stop -t 30`, compose stop_grace_period: 30s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/kconnectd"]
CMD ["run", "/etc/kconnectd/worker.properties"]

