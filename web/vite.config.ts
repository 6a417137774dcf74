/// <reference types="vitest/config" />
import { fileURLToPath, URL } from 'node:url'
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib'
import { defineConfig, type Plugin } from 'vite'
import vue from '@vitejs/plugin-vue'
import AutoImport from 'unplugin-auto-import/vite'
import Components from 'unplugin-vue-components/vite'
import { ElementPlusResolver } from 'unplugin-vue-components/resolvers'

// The admin serves `file.br` and `file.gz` beside `file` to clients that accept brotli or gzip;
// text assets over 1 KiB get both copies (smaller ones gain little and cost a file each), each
// only when it is smaller than the file. Brotli at its best quality makes the console's scripts
// about 15 % smaller than gzip's best; both come with Node (node:zlib), nothing to install.
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map)$/
function compressedCopies(minBytes = 1024): Plugin {
  return {
    name: 'cronwheel-compressed-copies',
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
          const copies: [string, Buffer][] = [
            ['gz', gzipSync(bytes, { level: zlib.Z_BEST_COMPRESSION })],
            [
              'br',
              brotliCompressSync(bytes, {
                params: {
                  [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
                  [zlib.BROTLI_PARAM_SIZE_HINT]: bytes.length,
                },
              }),
            ],
          ]
          for (const [suffix, copy] of copies) {
            if (copy.length < bytes.length) this.emitFile({ type: 'asset', fileName: `${fileName}.${suffix}`, source: copy })
          }
        }
      },
    },
  }
}

// Chunks. A first visit's page load used to fetch some 45 files, most of them a few KiB of
// Element Plus split by which pages share them (el-popper, vnode, refs, ...): over HTTP/1.1's six
// connections per host that is rounds of requests, each waiting for the admin, before the first
// page can render. So (measured: docs/benchmarks.md):
//  - `vue`: Vue, its router and i18n, and every other package the entry (main.ts) loads
//    statically, such as the pieces of Element Plus that App.vue's config provider needs;
//  - `ui`: the Element Plus components that the shell, the login page and the common pages show
//    (UI_COMPONENTS), with what they import (Rollup adds a manual chunk's dependencies to it):
//    one file, and its CSS one file, loaded with the first route and cached for all the others;
//  - everything else, every page among it, is split by Rollup as before: a route loads its own
//    chunk, and the components only some pages use (tables, date pickers, dialogs, message
//    boxes, ...) stay apart until a page needs them.
const UI_COMPONENTS = [
  'alert', 'badge', 'button', 'card', 'col', 'collapse-transition', 'collection', 'container',
  'dropdown', 'drawer', 'focus-trap', 'form', 'icon', 'input', 'loading', 'menu', 'message',
  'overlay', 'pagination', 'popper', 'result', 'roving-focus-group', 'row', 'scrollbar', 'select',
  'switch', 'tag', 'tooltip',
]
const UI_MODULE = new RegExp(`/node_modules/element-plus/es/components/(${UI_COMPONENTS.join('|')})/`)
const VUE_MODULE = /\/node_modules\/(@vue|vue|vue-router|vue-i18n|@intlify)\//
const DAYJS_MAIN = /\/node_modules\/dayjs\/dayjs\.min\.js$/
// Element Plus's index re-exports the whole library: the entry's graph must not go through it
// (App.vue imports its component from the component's own module), or every component would
// count as loaded by the entry.
const ELEMENT_PLUS_INDEX = /\/node_modules\/element-plus\/es\/index\.mjs$/

interface ModuleGraph {
  getModuleIds(): IterableIterator<string>
  getModuleInfo(id: string): { isEntry: boolean; importedIds: readonly string[] } | null
}

// The modules the entry imports statically, directly or not (computed once per build).
let entryModules: Set<string> | null = null
function staticallyFromEntry(graph: ModuleGraph): Set<string> {
  if (entryModules) return entryModules
  const seen = new Set<string>()
  const todo = [...graph.getModuleIds()].filter((id) => graph.getModuleInfo(id)?.isEntry)
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    if (seen.has(id)) continue
    if (ELEMENT_PLUS_INDEX.test(id)) {
      throw new Error(`the console's entry imports Element Plus's index (${id}): import the component's own module`)
    }
    seen.add(id)
    todo.push(...(graph.getModuleInfo(id)?.importedIds ?? []))
  }
  entryModules = seen
  return seen
}

function manualChunks(id: string, graph: ModuleGraph): string | undefined {
  if (VUE_MODULE.test(id)) return 'vue'
  if (id.includes('/node_modules/') && staticallyFromEntry(graph).has(id)) return 'vue'
  if (UI_MODULE.test(id)) return 'ui'
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
    compressedCopies(),
    // A new graph on every build (`vite build --watch` runs several in one process).
    { name: 'cronwheel-chunks', buildStart: () => void (entryModules = null) },
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
      // dayjs is CommonJS, so Rollup keeps every import of it for its side effects; Element Plus's
      // index imports it, and the component resolver imports that index in every page, so each
      // route fetched dayjs for nothing. Its main file has no side effects (its locales and
      // plugins do, and are left as they are): only the pages that use it (date pickers) load it.
      treeshake: { moduleSideEffects: (id: string) => !DAYJS_MAIN.test(id) },
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
