import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** The web console: built into web/dist, which the API serves at `/` (api/http/web-console.ts). */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 2000 },
  // `npm exec vite -- --config web/vite.config.ts` during development: the API on its usual port.
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
