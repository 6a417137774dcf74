import { createApp } from 'vue'
import 'element-plus/theme-chalk/dark/css-vars.css'
import './styles/main.css'
import App from './App.vue'
import { i18n } from './i18n'
import { router } from './router'
import { setUnauthorizedHandler } from './api/client'
import { clearSession } from './stores/session'
import { applyPreferences } from './stores/preferences'

// A 401 from any API call means the session ended: back to login, then back here.
setUnauthorizedHandler(() => {
  const current = router.currentRoute.value
  if (current.meta.public) return
  clearSession()
  void router.replace({ name: 'login', query: { redirect: current.fullPath, expired: '1' } })
})

applyPreferences()

router.afterEach((to) => {
  const title = to.meta.title ? i18n.global.t(to.meta.title) : ''
  document.title = title ? `${title} · cronwheel` : 'cronwheel'
})

createApp(App).use(i18n).use(router).mount('#app')
