export default {
  title: 'Coming soon',
  body: 'This page is being built. Its API is already available under /api/v1.',
  notFound: 'There is no page at this address.',
  home: 'Go to the dashboard',
}
