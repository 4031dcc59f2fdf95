# One image for both SafeClaw processes; docker-compose.yml picks the command (router or agent).
# No credential is copied in (.dockerignore keeps every .env and runtime file out); each service
# gets its own at run time.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /app

COPY requirements.txt ./
RUN pip install -r requirements.txt

COPY protocol ./protocol
COPY router ./router
COPY agent ./agent
COPY dashboard ./dashboard
COPY workspace ./workspace
COPY scripts/docker_entrypoint.sh ./scripts/docker_entrypoint.sh

RUN useradd --create-home --uid 10001 safeclaw \
    && mkdir -p /data/workspace /data/router /data/logs /app/logs \
    && chown -R safeclaw:safeclaw /data /app/logs
USER safeclaw

ENTRYPOINT ["/app/scripts/docker_entrypoint.sh"]
CMD ["python", "agent/start_agent.py"]
