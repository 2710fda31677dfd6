// @ts-check
/**
 * The deployment files of a generated project: a multi-stage Dockerfile, .dockerignore,
 * compose.yaml (two app instances, Redis for the shared session state, nginx terminating TLS) and
 * the nginx configuration. Pure functions of the project name; docs/deployment.md (copied from the
 * template) explains them. The Dockerfile is linted by the generator's tests (dockerfile-utils).
 */
import { kebabName } from './naming.mjs'

/** The Node.js image both stages use: the current LTS line on Debian, slim for the runtime. */
export const NODE_IMAGE = 'node:22-bookworm-slim'
/** Port the app listens on inside the container. */
export const CONTAINER_PORT = 8080

/** @returns {string} */
export function dockerfile () {
  return `# syntax=docker/dockerfile:1
# Multi-stage build (docs/deployment.md). The image holds the bundle, static files and the
# non-secret settings only: no sources, no devDependencies, no .env, no keys, no secrets.

# Build: full install (TypeScript, esbuild), type check, bundle into dist/. The security core
# (@project-template/core) installs from the packed copy in vendor/, so that comes in first.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package*.json ./
COPY vendor ./vendor
RUN if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
COPY tsconfig*.json ./
COPY src ./src
RUN npm run build

# Runtime: dist/ is self-contained, so no node_modules at all.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \\
    HOST=0.0.0.0 \\
    PORT=${CONTAINER_PORT}
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/dist ./dist
COPY public ./public
COPY appsettings*.json ./
# The image's files stay owned by root and read-only to the app's user. The one writable place
# is the embedded state store's data directory (State:Embedded:DataDirectory, default .state):
# one instance on the embedded store keeps its sessions there across restarts; mount a named
# volume on it (docs/deployment.md). With State:Provider Redis it stays empty.
RUN mkdir -m 0700 .state && chown node:node .state
VOLUME ["/app/.state"]
USER node
EXPOSE ${CONTAINER_PORT}
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \\
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/health/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself as PID 1 (not npm), so SIGTERM reaches the app and it closes gracefully.
CMD ["node", "--enable-source-maps", "dist/server.js"]
`
}

/** @returns {string} */
export function dockerignore () {
  return `# Only what the Dockerfile copies is needed; secrets and local state never enter the build context.
.git
.github
node_modules
dist
coverage
logs
*.log
test
docs
.keys
.state
.env
.env.*
secrets.json
*.secrets.json
*.pem
*.key
*.pfx
deploy/certs
appsettings.Development.json
Dockerfile
compose.yaml
README.md
`
}

/**
 * @param {string} name PascalCase project name (configuration root key, environment prefix)
 * @returns {string}
 */
export function composeYaml (name) {
  const project = kebabName(name)
  return `# Two instances of the app behind nginx (TLS termination), sharing Redis for session state.
# Before \`docker compose up --build\`: create deploy/certs/tls.crt and tls.key and export
# DATA_PROTECTION_KEY, REDIS_PASSWORD and PUBLIC_ORIGIN (see docs/deployment.md). Nothing secret
# is written in this file.
name: ${project}

x-app: &app
  build: .
  restart: unless-stopped
  # SIGTERM: readiness fails, 5 s of serving (Hosting:ShutdownDelaySeconds), then at most 20 s to
  # finish in-flight requests (Hosting:DrainTimeoutSeconds); the grace period covers both.
  stop_grace_period: 30s
  environment:
    ${name}__DataProtection__Keys__0: \${DATA_PROTECTION_KEY:?set DATA_PROTECTION_KEY, from npm run --silent generate-key}
    # The https origin users reach (Production requires https for the site and for the IdP).
    ${name}__Hosting__PublicOrigin: \${PUBLIC_ORIGIN:?set PUBLIC_ORIGIN, the https origin users reach, for example https://localhost:8443}
    ${name}__ForwardedHeaders__Enabled: "true"
    ${name}__ForwardedHeaders__KnownProxies__0: 172.30.0.10
    ${name}__State__Provider: Redis
    # The password comes from the environment (hex, so it needs no URL encoding), never this file.
    ${name}__State__Redis__ConnectionString: redis://:\${REDIS_PASSWORD:?set REDIS_PASSWORD, for example openssl rand -hex 32}@redis:6379
  depends_on:
    redis:
      condition: service_healthy
  networks: [backend]

services:
  app1: *app
  app2: *app

  redis:
    image: redis:7-bookworm
    # requirepass from the compose secret, written to a config file (0600, owned by redis) so
    # that it is not in the process arguments; the image's entrypoint then drops to the redis
    # user. AOF persistence (fsync every second) on a named volume, so sessions, pending sign-ins
    # and replay records survive a Redis restart.
    command:
      - sh
      - -c
      - |
        umask 077
        printf 'requirepass %s\\n' "$$(cat /run/secrets/redis_password)" > /tmp/redis-secret.conf
        chown redis:redis /tmp/redis-secret.conf
        exec docker-entrypoint.sh redis-server /tmp/redis-secret.conf --appendonly yes --appendfsync everysec --save ""
    secrets: [redis_password]
    volumes:
      - redis-data:/data
    restart: unless-stopped
    healthcheck:
      test: ["CMD-SHELL", "REDISCLI_AUTH=$$(cat /run/secrets/redis_password) redis-cli ping | grep -q PONG"]
      interval: 5s
      timeout: 3s
      retries: 10
    networks: [backend]

  proxy:
    image: nginx:1.27-bookworm
    restart: unless-stopped
    ports:
      - "8080:80"
      - "8443:443"
    volumes:
      - ./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro
      - ./deploy/certs:/etc/nginx/certs:ro
    depends_on:
      app1:
        condition: service_healthy
      app2:
        condition: service_healthy
    networks:
      backend:
        ipv4_address: 172.30.0.10

secrets:
  redis_password:
    environment: REDIS_PASSWORD

volumes:
  redis-data:

networks:
  backend:
    ipam:
      config:
        - subnet: 172.30.0.0/24
`
}

/**
 * The proxy configuration. packages/core/test/deploy/rolling-restart.test.ts runs Debian's nginx with
 * exactly this text, only the instance addresses, listen ports and certificate directory moved to
 * loopback and a temporary directory, under a rolling restart of both instances.
 * @returns {string}
 */
export function nginxConf () {
  const servers = [`app1:${CONTAINER_PORT}`, `app2:${CONTAINER_PORT}`].map((address) => `    server ${address} max_fails=0;`).join('\n')
  return `# nginx in front of the app instances: terminates TLS, sets the forwarded headers the app
# trusts from this proxy only (ForwardedHeaders:KnownProxies), keeps the probes internal, and
# retries an idempotent request on the next instance while one restarts (docs/deployment.md).
upstream app {
    # max_fails=0: an instance is never marked down by passive checks. nginx counts every answer
    # listed in proxy_next_upstream (http_503 included) as a failure; in a Redis outage every
    # instance answers 503 to signed-in pages, and with max_fails=1 nginx would mark them all down
    # and answer 502 to everything, anonymous pages included, for fail_timeout. A stopped instance
    # refuses connections at once, so a request to it costs a refused connect and goes to the next
    # instance; instances leave rotation through /health/ready (orchestrator), not through nginx.
${servers}
    keepalive 16;
}

server {
    listen 80;
    # Plain http only redirects: the session cookie is Secure and __Host- prefixed.
    return 301 https://$host:8443$request_uri;
}

server {
    # http2 on the listen line: understood by every nginx from 1.9.5 (Debian 12's 1.22 included);
    # nginx 1.25.1 and later prefer "http2 on;" and log a deprecation notice for this form.
    listen 443 ssl http2;
    ssl_certificate     /etc/nginx/certs/tls.crt;
    ssl_certificate_key /etc/nginx/certs/tls.key;
    ssl_protocols       TLSv1.2 TLSv1.3;

    # Probes are for the orchestrator, not the internet (auth contract, Endpoints rule 3).
    location /health {
        return 404;
    }

    location / {
        proxy_pass http://app;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-Proto https;
        proxy_set_header X-Forwarded-Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        # Rolling restarts and drains: a refused or reset connection (error), no answer in time
        # (timeout), or a 502/503 from the app is retried on the next instance. nginx retries
        # only idempotent requests once they were sent: POST, PATCH and LOCK go to a second
        # instance only when they could not be sent at all (no "non_idempotent" here), so a
        # sign-in callback or a logout is never executed twice. When every instance answers 503
        # (a Redis outage), the last answer is passed through as it is, Retry-After included.
        proxy_next_upstream error timeout http_502 http_503;
        proxy_next_upstream_timeout 15s;
        # An instance that does not even accept the connection is skipped after 3 s.
        proxy_connect_timeout 3s;
        client_max_body_size 64k;
        # The app's response headers must fit proxy_buffer_size or nginx answers 502. The app's
        # largest (a challenge: correlation cookie of at most 1 KB and a signed SAML redirect) are
        # about 2.3 KB; set explicitly, not left at one memory page, with room for the app's own.
        proxy_buffer_size 8k;
        proxy_buffers 8 8k;
    }
}
`
}
