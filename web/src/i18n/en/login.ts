export default {
  title: 'Log in to cronwheel',
  subtitle: 'Distributed cron scheduler',
  username: 'Username',
  password: 'Password',
  submit: 'Log in',
  expired: 'Your session expired. Log in again to go back to where you were.',
  failed: 'Wrong username or password',
}
