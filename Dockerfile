# Production image: the service with Debian's chromium and fonts baked in.
# Real MongoDB, Redis and S3 are given through MONGO_URL, REDIS_URL and S3_* (see
# docker-compose.yml); without them the embedded servers start inside the container.
FROM python:3.11-slim-bookworm

ENV DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    CHROMIUM_PATH=/usr/bin/chromium DATA_DIR=/data
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-wqy-microhei fonts-dejavu-core \
      fonts-noto-core redis-server ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.lock pyproject.toml openapi.json ./
RUN pip install --no-cache-dir -r requirements.lock
COPY tornado_app ./tornado_app
COPY render_pool ./render_pool
COPY store ./store
COPY ui ./ui
RUN pip install --no-cache-dir --no-deps . \
 && useradd --system --home /data --create-home app \
 && mkdir -p /data && chown app /data
USER app
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8080/health', timeout=2)"
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["python", "-m", "tornado_app", "serve", "--host", "0.0.0.0", "--port", "8080"]
