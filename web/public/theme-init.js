// Applies the remembered theme before the first paint, so a dark console never flashes white.
// A plain file, not an inline script, so a Content-Security-Policy of script-src 'self' allows it.
try {
  var theme = localStorage.getItem('cronwheel.theme')
  if (theme === 'dark' || (theme === null && window.matchMedia('(prefers-color-scheme: dark)').matches)) {
    document.documentElement.classList.add('dark')
  }
  var lang = localStorage.getItem('cronwheel.locale')
  if (lang) document.documentElement.lang = lang
} catch (e) {
  /* storage unavailable: defaults apply */
}
