import type en from '../en/shell'

const messages: typeof en = {
  menu: {
    label: '主菜单',
    dashboard: '运行报表',
    jobs: '任务管理',
    runs: '调度日志',
    workflows: '工作流',
    calendars: '工作日历',
    groups: '执行器管理',
    users: '用户管理',
    alarms: '告警通道',
    tokens: 'API 令牌',
    audit: '审计日志',
    cluster: '集群',
  },
  openMenu: '打开菜单',
  collapseMenu: '收起菜单',
  expandMenu: '展开菜单',
  language: '语言',
  themeDark: '切换到深色主题',
  themeLight: '切换到浅色主题',
  userMenu: '{name} 的用户菜单',
  changePassword: '修改密码',
  logout: '退出登录',
  loggedOut: '已退出登录',
  roles: {
    admin: '管理员',
    normal: '普通用户',
  },
  password: {
    title: '修改密码',
    current: '当前密码',
    new: '新密码',
    repeat: '再次输入新密码',
    mismatch: '两次输入的新密码不一致',
    changed: '密码已修改。你的其他会话和全部 API 令牌已失效。',
    submit: '修改密码',
  },
}
export default messages
