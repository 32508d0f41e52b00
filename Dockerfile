# ragbot: one `ragbot serve` process. Build: docker build -t ragbot .
# Run:   docker run -d --env-file ragbot.env -v ragbot-data:/data -p 3000:3000 ragbot
# Slim base, wheels built once in a builder stage (pip's cache kept in a BuildKit cache mount),
# non-root user, the data folder a volume, /healthz as the container's health check.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bots ./bots
COPY core ./core
COPY storage ./storage
RUN --mount=type=cache,target=/root/.cache/pip \
    pip wheel --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 ragbot \
    && mkdir -p /data && chown ragbot:ragbot /data && chmod 700 /data
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels ragbot && rm -rf /wheels
COPY --chown=ragbot:ragbot docs /app/docs
USER ragbot
WORKDIR /app
ENV RAGBOT_DATA_DIR=/data \
    PORT=3000 \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '3000') + '/healthz', timeout=4)"]
CMD ["ragbot", "serve"]
