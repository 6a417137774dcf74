export default {
  notFound: 'There is no page at this address.',
  home: 'Go to the dashboard',
}
