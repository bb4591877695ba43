import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Paths come from this file's folder, so the build behaves the same from any working directory.
const appDir = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../dist/dashboard-ui', import.meta.url));

// `vite --config apps/dashboard/vite.config.ts` serves the UI at `/` and forwards `./api` to a
// running app's dashboard (the UI itself always calls the relative `./api`).
const devApi = process.env.DURABLE_DASHBOARD_URL ?? 'http://localhost:3000/durable';

export default defineConfig({
  root: appDir,
  // Relative asset URLs: the same build is mounted under `/durable/`, `/ops/durable/` or any path.
  base: './',
  // Vite 8 compiles TSX with oxc; no React plugin needed.
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // The page is served with `script-src 'self'`: the preload polyfill would be an inline script.
    modulePreload: { polyfill: false },
    sourcemap: false,
    rolldownOptions: {
      // react-query marks its modules "use client" for server components; meaningless in this bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  server: {
    proxy: { '/api': { target: devApi, changeOrigin: true } },
  },
});
