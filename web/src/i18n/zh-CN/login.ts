import type en from '../en/login'

const messages: typeof en = {
  title: '登录 cronwheel',
  subtitle: '分布式任务调度平台',
  username: '用户名',
  password: '密码',
  submit: '登录',
  expired: '会话已过期。请重新登录，登录后将回到原来的页面。',
  failed: '用户名或密码错误',
}
export default messages
