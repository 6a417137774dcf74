// Numbers as the user's language writes them. Both of the console's languages, English and
// Simplified Chinese, group an integer's digits by three with commas (12,345), which is done here
// without Intl: the first Intl.NumberFormat of a page costs ~10 ms (more on a busy machine), and
// the pager under every list writes a count in the list's first paint. Other languages (and
// anything but a safe integer) go through one kept Intl.NumberFormat per language.
const formatters = new Map<string, Intl.NumberFormat>()
const COMMA_GROUPED = new Set(['en', 'zh-CN'])

/** 12345 → "12,345" (en). */
export function formatCount(n: number, locale: string): string {
  if (COMMA_GROUPED.has(locale) && Number.isSafeInteger(n)) {
    const digits = String(Math.abs(n))
    const head = digits.length % 3 || 3
    let out = digits.slice(0, head)
    for (let i = head; i < digits.length; i += 3) out += ',' + digits.slice(i, i + 3)
    return n < 0 || Object.is(n, -0) ? `-${out}` : out
  }
  let f = formatters.get(locale)
  if (!f) {
    f = new Intl.NumberFormat(locale, { maximumFractionDigits: 0 })
    formatters.set(locale, f)
  }
  return f.format(n)
}
