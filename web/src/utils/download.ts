// Saving text the page holds as a file the browser downloads (an exported jobs file).

/** Offers `text` as a download named `fileName`. */
export function saveText(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const a = document.createElement('a')
  a.href = url
  a.download = fileName
  a.style.display = 'none'
  document.body.appendChild(a)
  try {
    a.click()
  } finally {
    a.remove()
    // Later, not now: a URL revoked in the task that clicked can cancel the download in some
    // browsers. A minute holds the file's text that long, and no longer.
    setTimeout(() => URL.revokeObjectURL(url), 60_000)
  }
}
