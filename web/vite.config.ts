/// <reference types="vitest/config" />
import { fileURLToPath, URL } from 'node:url'
import { gzipSync, constants as zlib } from 'node:zlib'
import { defineConfig, type Plugin } from 'vite'
import vue from '@vitejs/plugin-vue'
import AutoImport from 'unplugin-auto-import/vite'
import Components from 'unplugin-vue-components/vite'
import { ElementPlusResolver } from 'unplugin-vue-components/resolvers'

// The admin serves `file.gz` beside `file` to clients that accept gzip; text assets over 1 KiB
// get such a copy (smaller ones gain little and cost a file each).
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map)$/
function gzipAssets(minBytes = 1024): Plugin {
  return {
    name: 'cronwheel-gzip-assets',
    apply: 'build',
    enforce: 'post',
    // After every other plugin's generateBundle: Vite's own rewrites chunks there (its
    // __VITE_PRELOAD__ markers), and a copy taken before would differ from the file.
    generateBundle: {
      order: 'post',
      handler(_options, bundle) {
        for (const [fileName, item] of Object.entries(bundle)) {
          if (!COMPRESSIBLE.test(fileName)) continue
          const source = item.type === 'chunk' ? item.code : item.source
          const bytes = typeof source === 'string' ? Buffer.from(source) : Buffer.from(source)
          if (bytes.length <= minBytes) continue
          this.emitFile({
            type: 'asset',
            fileName: `${fileName}.gz`,
            source: gzipSync(bytes, { level: zlib.Z_BEST_COMPRESSION }),
          })
        }
      },
    },
  }
}

// Vue, its router and i18n change rarely: one long-lived vendor chunk. Element Plus is left to
// Rollup's own splitting, so each route loads only the components it uses (a manual chunk
// would pull in the whole library: its modules would all be assigned to it).
function manualChunks(id: string): string | undefined {
  if (/node_modules\/(@vue|vue|vue-router|vue-i18n|@intlify)\//.test(id)) return 'vue'
  return undefined
}

const backend = process.env.CRONWHEEL_ADMIN_URL ?? 'http://127.0.0.1:8080'

export default defineConfig({
  base: '/',
  plugins: [
    vue(),
    AutoImport({
      resolvers: [ElementPlusResolver()],
      dts: 'auto-imports.d.ts',
    }),
    Components({
      resolvers: [ElementPlusResolver()],
      dts: 'components.d.ts',
      dirs: [],
    }),
    gzipAssets(),
  ],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  define: {
    // vue-i18n: compile messages at build time would need its plugin; the runtime compiler
    // is small and keeps messages plain TS modules. Drop the legacy API and devtools code.
    __VUE_I18N_FULL_INSTALL__: false,
    __VUE_I18N_LEGACY_API__: false,
    __INTLIFY_PROD_DEVTOOLS__: false,
  },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    target: 'es2020',
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      output: { manualChunks },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/healthz': { target: backend },
      '/metrics': { target: backend },
    },
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts', 'tests/unit/**/*.test.ts'],
  },
})
