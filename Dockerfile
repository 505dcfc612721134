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
ENV NODE_ENV=production
USER node
CMD ["npm", "run", "api"]
