// The language and the theme: global, remembered in localStorage. A plain reactive module:
// the console's global state is three small values (these two and the session), which do not
// need a store library's devtools, plugins or SSR support.
import { reactive, watch } from 'vue'
import { i18n, initialLocale, LOCALE_KEY, type Locale } from '@/i18n'

export type Theme = 'light' | 'dark'
const THEME_KEY = 'cronwheel.theme'

function initialTheme(): Theme {
  if (typeof document !== 'undefined' && document.documentElement.classList.contains('dark')) return 'dark'
  return 'light'
}

export const preferences = reactive({
  locale: initialLocale() as Locale,
  theme: initialTheme(),
})

function remember(key: string, value: string): void {
  try {
    localStorage.setItem(key, value)
  } catch {
    /* private mode: the choice lasts for this page only */
  }
}

export function setLocale(locale: Locale): void {
  preferences.locale = locale
  remember(LOCALE_KEY, locale)
}

export function setTheme(theme: Theme): void {
  preferences.theme = theme
  remember(THEME_KEY, theme)
}

/** Applies the preferences to vue-i18n and the document, now and on every change. */
export function applyPreferences(): void {
  watch(
    () => preferences.locale,
    (locale) => {
      i18n.global.locale.value = locale
      document.documentElement.lang = locale
    },
    { immediate: true },
  )
  watch(
    () => preferences.theme,
    (theme) => document.documentElement.classList.toggle('dark', theme === 'dark'),
    { immediate: true },
  )
}
