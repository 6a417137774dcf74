import { onBeforeUnmount, onMounted, ref } from 'vue'

/** True while the window is phone-width (the sidebar becomes a drawer, tables stop pinning columns). */
export function useNarrow(query = '(max-width: 768px)') {
  const narrow = ref(typeof window !== 'undefined' && window.matchMedia(query).matches)
  let media: MediaQueryList | null = null
  const update = () => {
    narrow.value = media?.matches ?? false
  }
  onMounted(() => {
    media = window.matchMedia(query)
    update()
    media.addEventListener('change', update)
  })
  onBeforeUnmount(() => media?.removeEventListener('change', update))
  return narrow
}
