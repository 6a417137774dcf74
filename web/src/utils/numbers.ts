// Numbers as the user's language writes them. One formatter per language, kept: creating an
// Intl.NumberFormat (which Number.toLocaleString does on every call) costs milliseconds.
const formatters = new Map<string, Intl.NumberFormat>()

/** 12345 → "12,345" (en). */
export function formatCount(n: number, locale: string): string {
  let f = formatters.get(locale)
  if (!f) {
    f = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 })
    formatters.set(locale, f)
  }
  return f.format(n)
}
