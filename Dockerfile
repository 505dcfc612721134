# glibc base: Temporal's native core bridge does not run on musl (Alpine).
# Two stages: the console and the typed client are built with the dev tools (Vite,
# openapi-typescript), and the image that runs keeps only production dependencies and the built files.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` with the lock file rather than `npm ci`, which insists on @swc/core's optional
# platform packages the lock file does not list (as in .ci/run). No install scripts here: `prepare`
# would build the console before the sources are copied.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run gen:client && npm run build:web

FROM node:24-bookworm-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates git && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# `prepare` needs the dev tools, which this stage leaves out; its outputs come from the build stage.
# (The embedded PostgreSQL's install script is skipped too: a container uses DATABASE_URL.)
RUN npm install --no-audit --no-fund --omit=dev --ignore-scripts
COPY . .
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/client/openapi.json /app/client/schema.d.ts ./client/
# The workflow bundle, built once here: workers load it instead of running webpack at each start
# (the worker memory the Helm chart's requests are sized from was measured on a pre-built bundle).
RUN node worker/build-bundle.ts dist/workflow-bundle.js
ENV NODE_ENV=production SWITCHYARD_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
# The image's `node` user by number, so Kubernetes can check runAsNonRoot. Nothing under /app is
# written at run time: the Helm chart mounts the root filesystem read-only, with volumes for
# SWITCHYARD_DATA_DIR and /tmp (test/platform/helm-image.test.ts replays this stage that way).
USER 1000:1000
# `npm run api` for docker compose; the Helm chart runs each entry point with node directly.
CMD ["npm", "run", "api"]
