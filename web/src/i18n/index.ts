import { createI18n } from 'vue-i18n'
import en from './en'
import zhCN from './zh-CN'

/** The English tree is the reference: every language has exactly its keys (tests check it). */
export type MessageSchema = typeof en
export type Locale = 'en' | 'zh-CN'

export const LOCALES: { code: Locale; label: string }[] = [
  { code: 'en', label: 'English' },
  { code: 'zh-CN', label: '简体中文' },
]

export const messages: Record<Locale, MessageSchema> = {
  en,
  'zh-CN': zhCN,
}

export const LOCALE_KEY = 'cronwheel.locale'

export function isLocale(v: unknown): v is Locale {
  return v === 'en' || v === 'zh-CN'
}

/** The remembered language, else the browser's (Chinese variants → zh-CN), else English. */
export function initialLocale(): Locale {
  try {
    const saved = typeof localStorage === 'undefined' ? null : localStorage.getItem(LOCALE_KEY)
    if (isLocale(saved)) return saved
  } catch {
    /* storage unavailable */
  }
  const nav = typeof navigator === 'undefined' ? '' : navigator.language || ''
  return nav.toLowerCase().startsWith('zh') ? 'zh-CN' : 'en'
}

export const i18n = createI18n<[MessageSchema], Locale, false>({
  legacy: false,
  locale: initialLocale(),
  fallbackLocale: 'en',
  messages,
  missingWarn: false,
  fallbackWarn: false,
})
