# The anonbox image: Debian's Python 3.11, the runtime dependencies from the hashed
# requirements-runtime.lock (no dev extra), the project as a wheel, a non-root user.
#
#   docker build -t anonbox .
#   docker compose up -d          # app replicas + PostgreSQL + Redis + Caddy: see compose.yaml
#
# Only features of the builder built into the Docker engine are used (no `# syntax=`
# line, no cache mounts), so the build needs no image but debian:bookworm-slim.

# ---- build: one virtualenv with the build backend, one that becomes the app ----------
FROM debian:bookworm-slim AS build

# ca-certificates: Debian's pip trusts the system's certificate store, not a bundle of its own.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
# The certificates pip trusts in this stage: Debian's bundle, which Debian's pip reads anyway.
# Behind a TLS-inspecting proxy, name a bundle mounted for the build instead
# (deploy/build-image.sh mounts the host's with --volume and passes --build-arg PIP_CERT=...);
# it stays out of every layer, and the runtime stage has no pip.
ARG PIP_CERT=/etc/ssl/certs/ca-certificates.crt

# hatchling, the backend pyproject.toml names, pinned and hashed; it stays in this stage.
COPY deploy/requirements-build.lock /tmp/requirements-build.lock
RUN python3 -m venv /opt/build \
    && /opt/build/bin/pip install --require-hashes --no-deps --only-binary=:all: \
        -r /tmp/requirements-build.lock

# The runtime dependencies exactly as locked: every file checked against its hash, no
# resolver (--no-deps), wheels only (no compiler here). The app's virtualenv gets no pip
# or setuptools of its own: the build virtualenv's pip installs into it.
# One of them publishes no wheel: http-ece (pure Python, for Web Push). Its source, checked
# against the lock's hash, becomes a wheel with the build stage's pinned setuptools; it is
# installed from that wheel, and everything else from PyPI's wheels.
COPY requirements-runtime.lock /tmp/requirements-runtime.lock
RUN awk '/^http-ece==/,/[^\\]$/' /tmp/requirements-runtime.lock >/tmp/sdist-only.lock \
    && awk '/^http-ece==/,/[^\\]$/ {next} {print}' /tmp/requirements-runtime.lock >/tmp/wheels.lock \
    && grep -q '^http-ece==' /tmp/sdist-only.lock \
    && /opt/build/bin/pip wheel --require-hashes --no-deps --no-build-isolation \
        --no-binary=:all: --wheel-dir /tmp/sdist-wheels -r /tmp/sdist-only.lock \
    && python3 -m venv --without-pip /opt/anonbox \
    && /opt/build/bin/pip --python /opt/anonbox/bin/python install \
        --require-hashes --no-deps --only-binary=:all: -r /tmp/wheels.lock \
    && /opt/build/bin/pip --python /opt/anonbox/bin/python install --no-deps /tmp/sdist-wheels/*.whl

# The project itself, last so that a code change rebuilds only this layer: a wheel built
# with the pinned hatchling, installed with --no-deps (its dependencies are above).
COPY pyproject.toml README.md /src/
COPY src /src/src
# The translations' compiled catalogs (.mo) are built here from the committed .po files,
# with the locked Babel the app itself runs.
RUN /opt/anonbox/bin/pybabel -q compile -d /src/src/anonbox/locale -D messages \
    && /opt/build/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/wheels /src \
    && /opt/build/bin/pip --python /opt/anonbox/bin/python install --no-deps /tmp/wheels/anonbox-*.whl

# ---- runtime -----------------------------------------------------------------------
FROM debian:bookworm-slim

# python3 for the virtualenv copied below (same base, same /usr/bin/python3.11);
# ca-certificates for TLS to a managed PostgreSQL or Redis; the Noto fonts for the share
# cards (web/cards/fonts.py: every script and colour emoji), DejaVu for symbols Noto lacks;
# tzdata for the creators' time zones (core/i18n.py reads /usr/share/zoneinfo).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 ca-certificates fonts-dejavu-core tzdata \
        fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 anonbox \
    && useradd --system --uid 10001 --gid anonbox --home-dir /var/lib/anonbox --no-create-home \
        --shell /usr/sbin/nologin anonbox \
    && install -d -o anonbox -g anonbox -m 0750 /var/lib/anonbox

COPY --from=build /opt/anonbox /opt/anonbox

# Anything but development refuses to start without ANONBOX_SECRET_KEY and marks cookies
# Secure. The working directory is the user's home: with no ANONBOX_DATABASE_URL, the
# SQLite file lands there (mount a volume on it to keep it).
ENV PATH=/opt/anonbox/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ANONBOX_ENV=production
WORKDIR /var/lib/anonbox
USER 10001:10001

EXPOSE 8000
# Liveness only (/healthz: the process serves HTTP). /readyz also asks the database; a
# container should not be restarted because PostgreSQL is away.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)"]

# Migrates (under a PostgreSQL advisory lock: replicas starting together migrate once),
# then serves. compose.yaml adds --workers.
CMD ["anonbox", "serve", "--host", "0.0.0.0", "--port", "8000"]
